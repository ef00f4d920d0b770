"""The review queue: flagged and rejected answers without a decision, newest first, filtered by
status, source, document and date, one page at a time. Pages are keyset-paged (the cursor is the
last row's time and id), so a page deep in a long queue costs what the first one does."""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from typing import Any

import psycopg

from rag_pipeline import store
from rag_pipeline.common.times import parse_time
from rag_pipeline.errors import UsageError
from rag_pipeline.store.reviews import STATUS_FILTERS, QueueFilter

PAGE_SIZE, MAX_PAGE_SIZE = 50, 500
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


@dataclass
class Page:
    rows: list[dict[str, Any]]
    next_cursor: str | None  # None: the last page


def queue_filter(*, status: str | None = None, source: str | None = None, document: str | None = None,
                 since: str | None = None, until: str | None = None, cursor: str | None = None,
                 limit: int | str | None = None, groups: tuple[str, ...] | None = None) -> QueueFilter:
    """The filter as a user gives it (command-line options, query parameters: all text); UsageError
    naming the bad value. `document` is a document id (the screen's links carry it)."""
    status = (status or "open").strip()
    if status not in STATUS_FILTERS:
        raise UsageError(f"unknown status {status[:40]!r}; one of {', '.join(STATUS_FILTERS)}")
    return QueueFilter(
        status=status, source=(source or "").strip() or None, document_id=_whole(document, "document"),
        since=_time(since, "since"), until=_time(until, "until"), after=decode_cursor(cursor),
        limit=_limit(limit), groups=groups,
    )


def page(conn: psycopg.Connection, wanted: QueueFilter) -> Page:
    """One page of the queue; `next_cursor` continues it."""
    found = store.reviews.queue(conn, replace(wanted, limit=wanted.limit + 1))
    more = len(found) > wanted.limit
    found = found[: wanted.limit]
    return Page(found, encode_cursor(found[-1]["verified_at"], found[-1]["answer_id"]) if more and found else None)


def encode_cursor(at: datetime, answer_id: int) -> str:
    delta = at - _EPOCH
    micros = (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds
    return f"{micros}.{answer_id}"


def decode_cursor(cursor: str | None) -> tuple[datetime, int] | None:
    if not cursor:
        return None
    micros, _, answer_id = cursor.strip().partition(".")
    try:
        at, number = _EPOCH + timedelta(microseconds=int(micros)), int(answer_id)
    except (ValueError, OverflowError):
        raise UsageError(f"the page cursor {cursor[:40]!r} is not one this screen gave") from None
    if number < 0:
        raise UsageError(f"the page cursor {cursor[:40]!r} is not one this screen gave")
    return at, number


def _whole(value: str | None, what: str) -> int | None:
    if value is None or not str(value).strip():
        return None
    text = str(value).strip()
    if not text.isdigit() or len(text) > 18:
        raise UsageError(f"{what} {text[:40]!r} is not an id (a positive whole number)")
    return int(text)


def _time(value: str | None, what: str) -> datetime | None:
    if value is None or not value.strip():
        return None
    try:
        return parse_time(value)
    except ValueError as exc:
        raise UsageError(f"{what}: {exc}") from None


def _limit(value: int | str | None) -> int:
    if value is None or value == "":
        return PAGE_SIZE
    try:
        number = int(value)
    except ValueError:
        raise UsageError(f"the page size {str(value)[:40]!r} is not a number") from None
    if not 1 <= number <= MAX_PAGE_SIZE:
        raise UsageError(f"the page size must be between 1 and {MAX_PAGE_SIZE}")
    return number

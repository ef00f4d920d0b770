"""ISO 8601 times as users type them (`2026-04-03`, `2026-04-03T12:00`, `...Z`)."""

from __future__ import annotations

from datetime import datetime


def parse_time(value: str) -> datetime:
    """A timezone-aware datetime; a time without offset is the machine's local time. ValueError
    names the bad value."""
    try:
        parsed = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    except ValueError:
        raise ValueError(f"{value[:60]!r} is not an ISO 8601 time (e.g. 2026-04-03T12:00:00Z)") from None
    if parsed.tzinfo is not None:
        return parsed
    try:
        return parsed.astimezone()
    except (ValueError, OverflowError):  # "0001-01-01": local time cannot place the first day of year 1
        raise ValueError(f"{value[:60]!r} is out of range: a time without an offset is read as local time, "
                         "which cannot place it; give one (e.g. 0001-01-01T12:00:00Z)") from None

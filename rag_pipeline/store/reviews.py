"""Human review of answers (migration 020): reviewers, the queue of flagged and rejected answers
with its filters and keyset paging, one answer with its search and the passages it involves,
decisions (appended) and page views (appended).

The queue reads the derived tables the migration's triggers keep (review_queue, review_keys,
review_answer_versions): every filter has its index in newest-first order, so a page is an index
scan whatever the queue's length. The statement is put together from fixed fragments only, one
per filter given; every value is a parameter."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import psycopg

from rag_pipeline.store._sql import row, rows

# The queue's status filter -> (state, verdict) conditions on review_queue.
STATUS_FILTERS: dict[str, tuple[str | None, str | None]] = {
    "open": ("open", None),          # flagged, rejected or verified needing review (032), no decision yet
    "flagged": ("open", "flagged"),
    "rejected": ("open", "rejected"),
    "approve": ("approve", None),    # the latest decision
    "reject": ("reject", None),
    "correct": ("correct", None),
    "verified": ("verified", None),  # verified by the checks, never decided
    "all": (None, None),
}

# a reviewer may see an answer when their groups meet the access groups of every document version
# it cites or its search returned (`None` groups: the database login itself, the CLI's operator)
# (a scalar subquery, run per row by the answer's key, where NOT EXISTS became a hash anti-join
# over every answer's versions: 95 ms a page instead of a few, bench/bench_review_queue.py)
_READABLE = ("(%(groups)s::text[] IS NULL OR (SELECT bool_and(r.acl_groups && %(groups)s::text[])"
             " FROM review_answer_versions r WHERE r.answer_id = q.answer_id) IS NOT FALSE)")


@dataclass(frozen=True)
class QueueFilter:
    status: str = "open"
    source: str | None = None
    document_id: int | None = None
    since: datetime | None = None   # verified at or after
    until: datetime | None = None   # verified before
    groups: tuple[str, ...] | None = None
    after: tuple[datetime, int] | None = None  # keyset: the last row of the previous page
    limit: int = 50


def queue(conn: psycopg.Connection, wanted: QueueFilter) -> list[dict[str, Any]]:
    """One page of the queue, newest first: answer id, when it was verified, verdict, state, the
    question, the caller, and how many claims are not supported."""
    return rows(conn, *_queue_statement(wanted))


def explain_queue(conn: psycopg.Connection, wanted: QueueFilter) -> list[str]:
    """The plan of one page's query, executed (what the bench prints)."""
    statement, params = _queue_statement(wanted)
    return [r[0] for r in conn.execute("EXPLAIN (ANALYZE, COSTS OFF) " + statement, params).fetchall()]


def _queue_statement(wanted: QueueFilter) -> tuple[str, dict[str, Any]]:
    state, verdict = STATUS_FILTERS[wanted.status]
    keyed = wanted.document_id is not None or wanted.source is not None
    order = "k" if keyed else "q"
    where = [_READABLE]
    if keyed:
        base = "FROM review_keys k JOIN review_queue q ON q.answer_id = k.answer_id"
        where.append("k.kind = %(kind)s AND k.key = %(key)s")
        if wanted.document_id is not None and wanted.source is not None:
            where.append("EXISTS (SELECT 1 FROM documents d WHERE d.id = %(document_id)s AND d.source = %(source)s)")
    else:
        base = "FROM review_queue q"
    if state is not None:
        where.append("q.state = %(state)s")
    if verdict is not None:
        where.append("q.verdict = %(verdict)s")
    if wanted.since is not None:
        where.append(f"{order}.verified_at >= %(since)s")
    if wanted.until is not None:
        where.append(f"{order}.verified_at < %(until)s")
    if wanted.after is not None:
        where.append(f"({order}.verified_at, {order}.answer_id) < (%(after_at)s, %(after_id)s)")
    statement = (
        "SELECT q.answer_id, q.verified_at, q.verdict, q.state, q.decided_at, l.query, a.caller, a.needs_review,"  # noqa: S608
        " (SELECT count(*) FROM jsonb_array_elements(a.claims) c WHERE c ->> 'status' <> 'supported') AS unsupported,"
        " jsonb_array_length(a.claims) AS claims "
        f"{base} JOIN answers a ON a.id = q.answer_id JOIN search_log l ON l.id = a.search_id"
        f" WHERE {' AND '.join(where)}"
        f" ORDER BY {order}.verified_at DESC, {order}.answer_id DESC LIMIT %(limit)s"
    )  # fixed fragments only; every value is a parameter
    params = {
        "groups": None if wanted.groups is None else list(wanted.groups), "state": state, "verdict": verdict,
        "kind": "document" if wanted.document_id is not None else "source",
        "key": str(wanted.document_id) if wanted.document_id is not None else wanted.source,
        "document_id": wanted.document_id, "source": wanted.source, "since": wanted.since, "until": wanted.until,
        "after_at": wanted.after[0] if wanted.after else None, "after_id": wanted.after[1] if wanted.after else None,
        "limit": wanted.limit,
    }
    return statement, params


def answer(conn: psycopg.Connection, answer_id: int, groups: tuple[str, ...] | None) -> dict[str, Any] | None:
    """One answer with its search (question, groups, as_of, results) and review state, or None
    when there is none or `groups` may not read it."""
    return row(
        conn,
        "SELECT a.id AS answer_id, a.search_id, a.verified_at, a.judged_as_of, a.caller, a.db_user, a.draft, a.claims,"  # noqa: S608
        " a.verdict, a.needs_review, a.message, a.support_threshold, a.support_source, l.query, l.groups AS search_groups,"
        " l.as_of AS search_as_of, l.searched_at, l.results, q.state, q.decided_at"
        " FROM review_queue q JOIN answers a ON a.id = q.answer_id JOIN search_log l ON l.id = a.search_id"
        f" WHERE q.answer_id = %(id)s AND {_READABLE}",
        {"id": answer_id, "groups": None if groups is None else list(groups)},
    )


def passages(conn: psycopg.Connection, chunk_ids: list[int]) -> dict[int, dict[str, Any]]:
    """The chunks named, with their document, version (number, status, validity, access groups),
    section path and pages: what a reviewer is shown of each passage."""
    if not chunk_ids:
        return {}
    found = rows(
        conn,
        "SELECT c.id AS chunk_id, c.text, c.section_path, c.page_start, c.page_end, v.id AS version_id,"
        " v.version_no, v.status, v.valid_from, v.valid_to, v.acl_groups, d.id AS document_id, d.source, d.uri"
        " FROM chunks c JOIN document_versions v ON v.id = c.version_id JOIN documents d ON d.id = v.document_id"
        " WHERE c.id = ANY(%s)",
        (sorted(set(chunk_ids)),),
    )
    return {r["chunk_id"]: r for r in found}


def record_decision(conn: psycopg.Connection, fields: dict[str, Any]) -> dict[str, Any]:
    """Append one decision; returns its id and time. Commits unless inside an open transaction."""
    with conn.transaction():
        found = row(
            conn,
            "INSERT INTO review_decisions (answer_id, decision, reviewer, comment, corrected, corrected_claims,"
            " corrected_verdict) VALUES (%(answer_id)s, %(decision)s, %(reviewer)s, %(comment)s, %(corrected)s::jsonb,"
            " %(corrected_claims)s::jsonb, %(corrected_verdict)s) RETURNING id, decided_at",
            {**fields, "corrected": _json(fields.get("corrected")), "corrected_claims": _json(fields.get("corrected_claims")),
             "corrected_verdict": fields.get("corrected_verdict")},
        )
    assert found is not None
    return found


def decisions(conn: psycopg.Connection, answer_id: int) -> list[dict[str, Any]]:
    """Every decision on one answer, oldest first (the last is in force)."""
    return rows(
        conn,
        "SELECT id, decision, reviewer, comment, corrected, corrected_claims, corrected_verdict, decided_at, db_user"
        " FROM review_decisions WHERE answer_id = %s ORDER BY id",
        (answer_id,),
    )


def record_view(conn: psycopg.Connection, reviewer: str, answer_id: int) -> None:
    """Log one page view of an answer. Commits unless inside an open transaction."""
    with conn.transaction():
        conn.execute("INSERT INTO review_views (reviewer, answer_id) VALUES (%s, %s)", (reviewer, answer_id))


def views(conn: psycopg.Connection, answer_id: int) -> list[dict[str, Any]]:
    return rows(conn, "SELECT reviewer, viewed_at FROM review_views WHERE answer_id = %s ORDER BY id", (answer_id,))


def save_reviewer(conn: psycopg.Connection, name: str, password_hash: str | None, groups: list[str]) -> bool:
    """Add a reviewer, or replace an existing one's password and groups; True when added. Commits."""
    with conn.transaction():
        found = conn.execute(
            "INSERT INTO reviewers (name, password_hash, groups) VALUES (%s, %s, %s)"
            " ON CONFLICT (name) DO UPDATE SET password_hash = EXCLUDED.password_hash, groups = EXCLUDED.groups,"
            " updated_at = now() RETURNING (xmax = 0)",
            (name, password_hash, groups),
        ).fetchone()
    return bool(found and found[0])


def reviewer(conn: psycopg.Connection, name: str) -> dict[str, Any] | None:
    return row(conn, "SELECT name, password_hash, groups FROM reviewers WHERE name = %s", (name,))


def document(conn: psycopg.Connection, document_id: int) -> dict[str, Any] | None:
    return row(conn, "SELECT id AS document_id, source, uri FROM documents WHERE id = %s", (document_id,))


def document_versions(conn: psycopg.Connection, document_id: int) -> list[dict[str, Any]]:
    """Every version of a document (but discarded ones), oldest first, with its chunk count."""
    return rows(
        conn,
        "SELECT v.id AS version_id, v.version_no, v.kind, v.status, v.valid_from, v.valid_to, v.acl_groups, v.checksum,"
        " (SELECT count(*) FROM chunks c WHERE c.version_id = v.id) AS chunks"
        " FROM document_versions v WHERE v.document_id = %s AND v.status <> 'discarded' ORDER BY v.version_no",
        (document_id,),
    )


def version(conn: psycopg.Connection, version_id: int) -> dict[str, Any] | None:
    return row(
        conn,
        "SELECT v.id AS version_id, v.version_no, v.kind, v.status, v.valid_from, v.valid_to, v.acl_groups,"
        " d.id AS document_id, d.source, d.uri FROM document_versions v JOIN documents d ON d.id = v.document_id"
        " WHERE v.id = %s AND v.status <> 'discarded'",
        (version_id,),
    )


def _json(value: Any) -> str | None:
    return None if value is None else json.dumps(value, default=str)


def document_id(conn: psycopg.Connection, source: str, uri: str) -> int | None:
    found = conn.execute("SELECT id FROM documents WHERE source = %s AND uri = %s", (source, uri)).fetchone()
    return None if found is None else int(found[0])

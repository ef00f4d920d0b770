"""Files that could not be indexed, with the stage and the error an operator reads."""

from __future__ import annotations

from typing import Any

import psycopg

from rag_pipeline.common.text import storable
from rag_pipeline.store._sql import rows


def record_quarantine(conn: psycopg.Connection, run_id: str, source: str, uri: str, checksum: str | None, stage: str,
                      error: str, parse_key: str | None = None) -> None:
    """Quarantine a file that never became a work item (unreadable at listing, or refused by the
    parser before with the same bytes and parse key). Does not commit. The error is stored
    escaped (rag_pipeline.common.text): a message quoting an undecodable name must not fail the
    run that reports it."""
    conn.execute(
        "INSERT INTO quarantine (run_id, source, uri, checksum, stage, error, parse_key)"
        " VALUES (%s, %s, %s, %s, %s, %s, %s)",
        (run_id, source, uri, checksum, stage, storable(error), parse_key),
    )


def parser_refusals(conn: psycopg.Connection, source: str) -> dict[str, dict[str, Any]]:
    """Per file of the source whose latest quarantine entry is the parser's refusal: the bytes
    (checksum), parse key, stage and error of that refusal (see rag_pipeline.sync.parse_key)."""
    latest = rows(conn,
        "SELECT DISTINCT ON (uri) uri, checksum, parse_key, stage, error FROM quarantine"
        " WHERE source = %s ORDER BY uri, quarantined_at DESC, id DESC",
        (source,),
    )
    return {r["uri"]: r for r in latest if r["parse_key"] is not None and r["checksum"] is not None}


def run_quarantine(conn: psycopg.Connection, run_id: str) -> list[dict[str, Any]]:
    return rows(conn,
            "SELECT source, uri, stage, error FROM quarantine WHERE run_id = %s ORDER BY source, uri",
            (run_id,),
        )


# The latest entry per file, among entries at least as recent as the last completed run of
# the file's source: files failing still are quarantined again by every run (a parser's refusal
# of unchanged bytes is carried forward by plan, not parsed again), so an entry older
# than that run is a file since removed or fixed, and no longer shown.
CURRENT_QUARANTINE = (
    "WITH last_done AS (SELECT s AS source, max(r.started_at) AS started_at FROM runs r, unnest(r.sources) s"
    "  WHERE r.status IN ('published', 'nothing_to_do', 'gate_failed') GROUP BY s)"
    " SELECT DISTINCT ON (q.source, q.uri) q.source, q.uri, q.checksum, q.stage, q.error, q.run_id, q.quarantined_at"
    " FROM quarantine q JOIN runs r ON r.run_id = q.run_id LEFT JOIN last_done l ON l.source = q.source"
    " WHERE l.started_at IS NULL OR r.started_at >= l.started_at"
    " ORDER BY q.source, q.uri, q.quarantined_at DESC"
)


def latest_quarantine(conn: psycopg.Connection, limit: int = 20) -> list[dict[str, Any]]:
    """Files in quarantine now (see CURRENT_QUARANTINE), for `status`."""
    return rows(conn,
            "SELECT source, uri, stage, error, run_id, quarantined_at FROM (" + CURRENT_QUARANTINE + ") current"  # noqa: S608 -- constants only
            " ORDER BY source, uri LIMIT %s",
            (limit,),
        )


# As `status` counts them: a file whose quarantined bytes are live after all is not listed.
SOURCE_QUARANTINE = (
    "SELECT uri, stage, error, run_id, quarantined_at, count(*) OVER () AS total"  # noqa: S608 -- constants only
    " FROM (" + CURRENT_QUARANTINE + ") current WHERE source = %s"
    " AND NOT EXISTS (SELECT 1 FROM document_versions v JOIN documents d ON d.id = v.document_id"
    "  WHERE d.source = current.source AND d.uri = current.uri AND v.checksum = current.checksum"
    "  AND v.status = 'live')"
    " ORDER BY uri LIMIT %s"
)


def source_quarantine(conn: psycopg.Connection, source: str, limit: int = 50) -> tuple[int, list[dict[str, Any]]]:
    """One source's files in quarantine now (see CURRENT_QUARANTINE): how many, and the first
    `limit` by uri with the stage, the error and the run that quarantined each, for the
    source's own page in the UI (a source with thousands of refused files stays readable)."""
    listed = rows(conn, SOURCE_QUARANTINE, (source, limit))
    total = int(listed[0]["total"]) if listed else 0
    return total, [{k: v for k, v in r.items() if k != "total"} for r in listed]

"""Files that could not be indexed, with the stage and the error an operator reads."""

from __future__ import annotations

from typing import Any

import psycopg

from rag_pipeline.store._sql import rows


def record_quarantine(conn: psycopg.Connection, run_id: str, source: str, uri: str, checksum: str | None, stage: str, error: str) -> None:
    """Quarantine a file that never became a work item (e.g. unreadable at listing). Does not commit."""
    conn.execute(
        "INSERT INTO quarantine (run_id, source, uri, checksum, stage, error) VALUES (%s, %s, %s, %s, %s, %s)",
        (run_id, source, uri, checksum, stage, error),
    )


def run_quarantine(conn: psycopg.Connection, run_id: str) -> list[dict[str, Any]]:
    return rows(conn,
            "SELECT source, uri, stage, error FROM quarantine WHERE run_id = %s ORDER BY source, uri",
            (run_id,),
        )


def latest_quarantine(conn: psycopg.Connection, limit: int = 20) -> list[dict[str, Any]]:
    return rows(conn,
            "SELECT DISTINCT ON (source, uri) source, uri, stage, error, run_id, quarantined_at"
            " FROM quarantine ORDER BY source, uri, quarantined_at DESC LIMIT %s",
            (limit,),
        )

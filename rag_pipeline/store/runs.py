"""Runs and the per-source sync lock: one running sync per source, crashed runs reclaimed."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any

import psycopg

from rag_pipeline.errors import PipelineError
from rag_pipeline.store._sql import row, rows
from rag_pipeline.store.versions import discard_staged
from rag_pipeline.store.work_items import cleanup_run_items


class SourceBusyError(PipelineError):
    """Another run holds the sync lock of a source."""


def create_run(conn: psycopg.Connection, run_id: str, sources: Sequence[str], model_id: int) -> None:
    """Register a run (idempotent, so a re-executed plan step does not fail). Commits."""
    with conn.transaction():
        conn.execute(
            "INSERT INTO runs (run_id, sources, model_id) VALUES (%s, %s, %s)"
            " ON CONFLICT (run_id) DO NOTHING",
            (run_id, list(sources), model_id),
        )


def claim_sources(
    conn: psycopg.Connection, run_id: str, sources: Sequence[str], is_alive: Callable[[str, datetime], bool]
) -> None:
    """Make this run the only running sync of its sources, or raise SourceBusyError. Commits.

    A transaction-level advisory lock per source serialises the check; runs still marked
    'running' whose process is gone (per `is_alive`, e.g. the orchestrator's view) are failed
    so a crash does not block a source forever.
    """
    busy: str | None = None
    with conn.transaction():
        for source in sorted(sources):
            conn.execute("SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))", ("rag-sync:" + source,))
        rows = conn.execute(
            "SELECT run_id, started_at FROM runs WHERE status = 'running' AND run_id <> %s AND sources && %s",
            (run_id, list(sources)),
        ).fetchall()
        for other, started_at in rows:
            if is_alive(other, started_at):
                busy = other
                break
            conn.execute(
                "UPDATE runs SET status = 'failed', finished_at = now(),"
                " error = coalesce(error, 'abandoned: its process is gone') WHERE run_id = %s",
                (other,),
            )
            discard_staged(conn, other, commit=False)
            conn.execute("DELETE FROM run_items WHERE run_id = %s", (other,))
    if busy is not None:
        message = f"run {busy} is still syncing one of {sorted(sources)}; wait for it to finish"
        update_run(conn, run_id, status="failed", error=message, finished=True)
        raise SourceBusyError(message)


def update_run(conn: psycopg.Connection, run_id: str, **fields: Any) -> None:
    """Set run columns; `counts` is merged into the stored JSON. Commits."""
    counts = fields.pop("counts", None)
    with conn.transaction():
        if counts:
            conn.execute(
                "UPDATE runs SET counts = counts || %s::jsonb WHERE run_id = %s",
                (json.dumps(counts), run_id),
            )
        for column in ("status", "gate_passed", "gate_reason", "error", "refusal_threshold"):
            if column in fields:
                conn.execute(
                    _RUN_UPDATES[column], (fields[column], run_id)
                )
        if "gate_metrics" in fields:
            conn.execute(
                "UPDATE runs SET gate_metrics = %s::jsonb WHERE run_id = %s",
                (json.dumps(fields["gate_metrics"]), run_id),
            )
        if fields.get("finished"):
            conn.execute("UPDATE runs SET finished_at = now() WHERE run_id = %s", (run_id,))


_RUN_UPDATES = {
    "status": "UPDATE runs SET status = %s WHERE run_id = %s",
    "gate_passed": "UPDATE runs SET gate_passed = %s WHERE run_id = %s",
    "gate_reason": "UPDATE runs SET gate_reason = %s WHERE run_id = %s",
    "error": "UPDATE runs SET error = %s WHERE run_id = %s",
    "refusal_threshold": "UPDATE runs SET refusal_threshold = %s WHERE run_id = %s",
}


def get_run(conn: psycopg.Connection, run_id: str) -> dict[str, Any] | None:
    return row(conn, "SELECT * FROM runs WHERE run_id = %s", (run_id,))


def recent_runs(conn: psycopg.Connection, limit: int = 5) -> list[dict[str, Any]]:
    return rows(conn,
            "SELECT run_id, sources, status, started_at, finished_at, gate_passed, gate_reason,"
            " gate_metrics, counts, error FROM runs ORDER BY started_at DESC LIMIT %s",
            (limit,),
        )


def fail_run(conn: psycopg.Connection, run_id: str, *, status: str, reason: str) -> bool:
    """Record that a running run will not publish and make its staged versions unpublishable.
    A run that already finished keeps its verdict (returns False). Commits."""
    with conn.transaction():
        claimed = conn.execute(
            "UPDATE runs SET status = %s, error = coalesce(error, %s), finished_at = now()"
            " WHERE run_id = %s AND status = 'running'",
            (status, reason, run_id),
        ).rowcount
        if claimed:
            discard_staged(conn, run_id, commit=False)
    if claimed:
        cleanup_run_items(conn, run_id)
    return bool(claimed)

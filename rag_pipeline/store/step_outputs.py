"""Values passed between the steps of a run (`step_outputs`): small JSON (shard lists, counts),
never documents, which travel in `run_items`. Keyed by run and by the orchestrator's name for
the output, so a step on another machine finds what an earlier step wrote."""

from __future__ import annotations

import json
from typing import Any

import psycopg


class MissingStepOutputError(LookupError):
    """A step asked for an output no earlier step of the run wrote."""


def put_step_output(conn: psycopg.Connection, run_id: str, key: str, value: Any) -> None:
    """Store (or replace, when a step runs again) one output. Commits."""
    with conn.transaction():
        conn.execute(
            "INSERT INTO step_outputs (run_id, output_key, value) VALUES (%s, %s, %s::jsonb)"
            " ON CONFLICT (run_id, output_key) DO UPDATE SET value = EXCLUDED.value, written_at = now()",
            (run_id, key, json.dumps(value)),
        )


def get_step_output(conn: psycopg.Connection, run_id: str, key: str) -> Any:
    row = conn.execute("SELECT value FROM step_outputs WHERE run_id = %s AND output_key = %s", (run_id, key)).fetchone()
    if row is None:
        raise MissingStepOutputError(
            f"run {run_id}: no stored output {key!r}; the step that writes it has not run in this run"
            " (re-execute the whole run, not single steps)"
        )
    return row[0]


def drop_step_outputs(conn: psycopg.Connection, run_id: str) -> None:
    """Does not commit."""
    conn.execute("DELETE FROM step_outputs WHERE run_id = %s", (run_id,))

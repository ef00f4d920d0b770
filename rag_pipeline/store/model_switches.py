"""The index's model over time (migration 023): model migrations, their switches, and how to load
a model the index was migrated to.

The switch and every publish take one advisory lock (the switch exclusively, publishes shared),
so a sync that planned on the old model can never publish after the switch: its publish sees the
new model and refuses (store.versions.publish), and the switch sees every chunk a publish made
live before it."""

from __future__ import annotations

import json
from typing import Any

import psycopg

from rag_pipeline.errors import PipelineError
from rag_pipeline.store._sql import row, rows

SWITCH_LOCK = 7300026  # pg_advisory_xact_lock key: the switch (exclusive) against publishes (shared)


class ModelSwitchedError(PipelineError):
    """A run embedded with a model that is no longer the index's (a migration switched it)."""


class SwitchRefusedError(PipelineError):
    """The switch found live chunks without a vector of the new model; nothing was switched."""


def index_model_id(conn: psycopg.Connection) -> int | None:
    """The live index's model: the newest switch's, else the newest live content version's."""
    return conn.execute("SELECT rag_live_model()").fetchone()[0]


def switched_model_id(conn: psycopg.Connection) -> int | None:
    """The newest switch's model (None: the index was never switched)."""
    return conn.execute("SELECT rag_switched_model(NULL)").fetchone()[0]


def record_source(conn: psycopg.Connection, model_id: int, model: str | None, backend: str) -> None:
    """How to load a model (as migrate-model was given it). Commits."""
    with conn.transaction():
        conn.execute(
            "INSERT INTO model_sources (model_id, model, backend) VALUES (%s, %s, %s)"
            " ON CONFLICT (model_id) DO UPDATE SET model = EXCLUDED.model, backend = EXCLUDED.backend",
            (model_id, model, backend),
        )


def model_source(conn: psycopg.Connection, model_id: int) -> dict[str, Any] | None:
    return row(conn, "SELECT model, backend FROM model_sources WHERE model_id = %s", (model_id,))


def running_migration(conn: psycopg.Connection) -> dict[str, Any] | None:
    return row(conn, "SELECT * FROM model_migrations WHERE status = 'running'")


def start_migration(conn: psycopg.Connection, from_model: int, to_model: int, kind: str) -> int:
    """A new running migration (the unique index refuses a second one). Commits."""
    with conn.transaction():
        return int(conn.execute(
            "INSERT INTO model_migrations (from_model, to_model, kind) VALUES (%s, %s, %s) RETURNING id",
            (from_model, to_model, kind),
        ).fetchone()[0])


def update_migration(conn: psycopg.Connection, migration_id: int, *, counts: dict[str, Any] | None = None,
                     gate: dict[str, Any] | None = None, status: str | None = None, error: str | None = None) -> None:
    """Merge counts, set the gate report, finish with a status. Commits."""
    with conn.transaction():
        conn.execute(
            "UPDATE model_migrations SET counts = counts || %s::jsonb, gate = coalesce(%s::jsonb, gate),"
            " error = coalesce(%s, error), status = coalesce(%s, status),"
            " finished_at = CASE WHEN %s::text IS NULL OR %s = 'running' THEN finished_at ELSE now() END WHERE id = %s",
            (json.dumps(counts or {}), None if gate is None else json.dumps(gate), error, status, status, status,
             migration_id),
        )


def migration(conn: psycopg.Connection, migration_id: int) -> dict[str, Any] | None:
    return row(conn, "SELECT * FROM model_migrations WHERE id = %s", (migration_id,))


def switches(conn: psycopg.Connection) -> list[dict[str, Any]]:
    return rows(conn, "SELECT * FROM model_switches ORDER BY switched_at, id")


def previous_model(conn: psycopg.Connection) -> int | None:
    """The model the newest switch replaced: what a rollback returns to."""
    found = conn.execute("SELECT from_model FROM model_switches ORDER BY switched_at DESC, id DESC LIMIT 1").fetchone()
    return found[0] if found else None


def switch(conn: psycopg.Connection, from_model: int, to_model: int, migration_id: int) -> dict[str, Any]:
    """Make `to_model` the index's model in one transaction, if every live chunk has a vector of
    it (checked under the switch lock, after every publish that went before). Commits; the
    switch row. SwitchRefusedError (nothing changed) when chunks are missing or the index's
    model is no longer `from_model`."""
    from rag_pipeline.store import model_vectors

    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (SWITCH_LOCK,))
        current = index_model_id(conn)
        if current != from_model:
            raise SwitchRefusedError(f"the index's model is {current}, not {from_model} any more; run the migration again")
        missing = model_vectors.count_missing(conn, to_model)
        if missing:
            raise SwitchRefusedError(f"{missing} live chunks have no vector of model {to_model} yet")
        found = row(conn,
                    "INSERT INTO model_switches (switched_at, from_model, to_model, migration_id)"
                    " VALUES (clock_timestamp(), %s, %s, %s) RETURNING *",
                    (from_model, to_model, migration_id))
        conn.execute("UPDATE model_migrations SET status = 'switched', finished_at = now() WHERE id = %s",
                     (migration_id,))
    return found  # type: ignore[return-value]


def check_publish(conn: psycopg.Connection, run_id: str) -> None:
    """Inside a publish's transaction: hold the switch lock (shared) and refuse a run whose
    model is not the index's switched model (a sync that started before a switch)."""
    conn.execute("SELECT pg_advisory_xact_lock_shared(%s)", (SWITCH_LOCK,))
    found = conn.execute(
        "SELECT r.model_id, rag_switched_model(NULL), m.name, m.numerics FROM runs r"
        " LEFT JOIN embedding_models m ON m.id = rag_switched_model(NULL) WHERE r.run_id = %s",
        (run_id,),
    ).fetchone()
    if found is None or found[1] is None or found[0] is None or found[0] == found[1]:
        return
    raise ModelSwitchedError(
        f"run {run_id} embedded with model {found[0]}, but a model migration switched the index to {found[2]} "
        f"({found[3]}) meanwhile; nothing of this run was published: configure that model and sync again"
    )

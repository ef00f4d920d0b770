"""The search log: every search through the library or CLI, with enough to explain and replay
it (caller, groups, as-of, model, each candidate's rank and score per branch, returned ids and a
SHA-256 of each returned text). Rows are append-only (migration 006)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime
from typing import Any

import psycopg

from rag_pipeline.store._sql import row

MAX_LOG_ID = 2**63 - 1  # bigserial


def set_session_groups(conn: psycopg.Connection, groups: Sequence[str]) -> None:
    """Key row-level security (rag_reader's policies) to the caller's groups for the current
    transaction only, so a pooled connection never carries one caller's groups to the next."""
    conn.execute("SELECT set_config('rag.groups', %s, true)", (",".join(groups),))


def log_search(
    conn: psycopg.Connection,
    *,
    query: str,
    groups: Sequence[str],
    as_of: datetime | None,
    model_id: int | None,
    k: int,
    results: list[dict[str, Any]],
    candidates: list[dict[str, Any]],
    caller: str | None,
    searched_at: datetime | None = None,
    strategy: dict[str, Any] | None = None,
    log_id: int | None = None,
) -> int:
    """Append one search; returns its id (what `rag-pipeline explain` takes). Commits unless
    called inside an open transaction. `strategy` is how the vector branch ran
    (`store.search.VectorPlan.to_dict()`, with the full-text branch's record under `fulltext`);
    None when no search ran. `log_id`: the id `store.search_prepare.prepare` drew from the log's sequence,
    so the row is written without waiting for its id (the search's last round trip is this
    INSERT and the commit); None draws it here."""
    values = (searched_at, query, list(groups), as_of, model_id, k, json.dumps(results), json.dumps(candidates),
              caller, None if strategy is None else json.dumps(strategy))
    if log_id is not None:  # one statement, no block of its own: it may be part of a pipelined transaction
        conn.execute(
            "INSERT INTO search_log (id, searched_at, query, groups, as_of, model_id, k, results, candidates, caller,"
            " strategy) VALUES (%s, coalesce(%s, now()), %s, %s, %s, %s, %s, %s::jsonb, %s::jsonb, %s, %s::jsonb)",
            (log_id, *values),
        )
        return log_id
    with conn.transaction():
        found = conn.execute(
            "INSERT INTO search_log (searched_at, query, groups, as_of, model_id, k, results, candidates, caller, strategy)"
            " VALUES (coalesce(%s, now()), %s, %s, %s, %s, %s, %s::jsonb, %s::jsonb, %s, %s::jsonb) RETURNING id",
            values,
        ).fetchone()
    return int(found[0])


def logged_search(conn: psycopg.Connection, log_id: int) -> dict[str, Any] | None:
    """One logged search with its model's identity, or None. `malformed` says what is wrong with
    the row (rag_search_log_problem, migration 017: the shape search writes and the compliance
    views read), None for a well-formed one: a row written before 017, or by a superuser with
    triggers off, may hold anything."""
    if not 0 < log_id <= MAX_LOG_ID:
        return None
    return row(
        conn,
        "SELECT l.id, l.searched_at, l.query, l.groups, l.as_of, l.k, l.results, l.candidates, l.caller,"
        " l.db_user, l.model_id, l.strategy, m.name AS model_name, m.revision AS model_revision,"
        " m.weights_sha256 AS model_weights_sha256, rag_search_log_problem(l) AS malformed"
        " FROM search_log l LEFT JOIN embedding_models m ON m.id = l.model_id WHERE l.id = %s",
        (log_id,),
    )


def chunk_text_hashes(conn: psycopg.Connection, chunk_ids: Sequence[int]) -> dict[int, str]:
    """SHA-256 of the text the index holds now for each chunk: equal to the logged hash unless
    the text was rewritten behind the append-only guards."""
    found = conn.execute(
        "SELECT id, encode(sha256(convert_to(text, 'UTF8')), 'hex') FROM chunks WHERE id = ANY(%s)",
        (list(chunk_ids),),
    ).fetchall()
    return {r[0]: r[1] for r in found}

"""Embedding model identities: recorded once, referenced by every chunk and version."""

from __future__ import annotations

from typing import Any

import psycopg

from rag_pipeline.store._sql import row


def register_model(conn: psycopg.Connection, identity: dict[str, Any]) -> int:
    """Record a model identity once; return its id. Commits. An identity without `numerics`
    (written before it existed) is the fp32 reference."""
    identity = {"numerics": "fp32", **identity}
    with conn.transaction():
        row = conn.execute(
            "INSERT INTO embedding_models (name, revision, weights_sha256, dimension, normalized, max_tokens, numerics)"
            " VALUES (%(name)s, %(revision)s, %(weights_sha256)s, %(dimension)s, %(normalized)s, %(max_tokens)s,"
            " %(numerics)s)"
            " ON CONFLICT (name, revision, weights_sha256, numerics) DO UPDATE SET name = EXCLUDED.name"
            " RETURNING id",
            identity,
        ).fetchone()
    return int(row[0])


def model_by_id(conn: psycopg.Connection, model_id: int) -> dict[str, Any] | None:
    return row(conn, "SELECT * FROM embedding_models WHERE id = %s", (model_id,))


def live_model_ids(conn: psycopg.Connection) -> list[int]:
    """Models referenced by live content versions: more than one means a mixed index."""
    rows = conn.execute(
        "SELECT DISTINCT model_id FROM document_versions"
        " WHERE status = 'live' AND kind = 'content' ORDER BY model_id"
    ).fetchall()
    return [r[0] for r in rows if r[0] is not None]

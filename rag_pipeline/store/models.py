"""Embedding model identities: recorded once, referenced by every chunk and version."""

from __future__ import annotations

from typing import Any

import psycopg

from rag_pipeline.errors import PipelineError
from rag_pipeline.store._sql import row


class ModelDimensionError(PipelineError):
    """A model identity whose dimension is not a positive integer cannot be indexed."""


def register_model(conn: psycopg.Connection, identity: dict[str, Any]) -> int:
    """Record a model identity once; return its id. Commits. An identity without `numerics`
    (written before it existed) is the fp32 reference. The first model of a dimension also
    gets that dimension's vector index (`ensure_vector_index`)."""
    identity = {"numerics": "fp32", **identity}
    check_dimension(identity.get("dimension"))
    with conn.transaction():
        row = conn.execute(
            "INSERT INTO embedding_models (name, revision, weights_sha256, dimension, normalized, max_tokens, numerics)"
            " VALUES (%(name)s, %(revision)s, %(weights_sha256)s, %(dimension)s, %(normalized)s, %(max_tokens)s,"
            " %(numerics)s)"
            " ON CONFLICT (name, revision, weights_sha256, numerics) DO UPDATE SET name = EXCLUDED.name"
            " RETURNING id",
            identity,
        ).fetchone()
        ensure_vector_index(conn, identity["dimension"])
    return int(row[0])


MAX_INDEXED_DIMENSION = 2000  # pgvector's HNSW limit for `vector`; larger models are searched exactly


def check_dimension(dimension: object) -> int:
    """The dimension of a model identity, refused unless it is a positive integer (bool is not)."""
    if isinstance(dimension, bool) or not isinstance(dimension, int) or dimension < 1:
        raise ModelDimensionError(f"embedding dimension {dimension!r} is not a positive integer; check the model's identity")
    return dimension


def ensure_vector_index(conn: psycopg.Connection, dimension: object) -> str | None:
    """Build the HNSW index (cosine) of one embedding dimension unless it exists (migration
    009's function: the index is a partial expression index, one per dimension, because the
    embedding column has none of its own). Returns its name, or None for a dimension HNSW
    cannot index. The dimension reaches DDL, so anything but a positive integer is refused."""
    dimension = check_dimension(dimension)
    if dimension > MAX_INDEXED_DIMENSION:
        return None
    return conn.execute("SELECT rag_ensure_vector_index(%s)", (dimension,)).fetchone()[0]


def defer_vector_index(conn: psycopg.Connection, dimension: object) -> bool:
    """Drop the dimension's HNSW index while the chunks table is still empty, so that a first
    load builds its graph once from all its rows (`ensure_vector_index`, several times faster
    than inserting each row into it: migration 033). True when the index is absent now and the
    caller must rebuild it after writing; an index that serves any row is never dropped."""
    dimension = check_dimension(dimension)
    if dimension > MAX_INDEXED_DIMENSION:
        return False
    with conn.transaction():
        return bool(conn.execute("SELECT rag_defer_vector_index(%s)", (dimension,)).fetchone()[0])


def model_by_id(conn: psycopg.Connection, model_id: int) -> dict[str, Any] | None:
    return row(conn, "SELECT * FROM embedding_models WHERE id = %s", (model_id,))


def live_model_ids(conn: psycopg.Connection) -> list[int]:
    """The live index's model(s): after a model migration's switch (migration 023) the model it
    switched to, whatever the live versions were embedded with (the migration gave each of their
    chunks a vector of it); else the models referenced by live content versions, where more than
    one means a mixed index."""
    switched = conn.execute("SELECT rag_switched_model(NULL)").fetchone()[0]
    if switched is not None:
        return [switched]
    rows = conn.execute(
        "SELECT DISTINCT model_id FROM document_versions"
        " WHERE status = 'live' AND kind = 'content' ORDER BY model_id"
    ).fetchall()
    return [r[0] for r in rows if r[0] is not None]

"""Vectors of a model beside the chunks (migration 023): what a model migration fills, batch by
batch, for every live chunk that has no vector of the model yet. The work list is a query, not a
queue table: a chunk a sync publishes during the migration is simply one more chunk without a
vector, so it is picked up by the next batch (or the catch-up before the switch)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import psycopg

# Live content chunks (not purged) that have no vector of the model %(model)s: neither their own
# (embedded with it) nor a row in model_vectors.
_MISSING = """
    FROM chunks c JOIN document_versions v ON v.id = c.version_id
    WHERE v.status = 'live' AND v.kind = 'content' AND c.embedding IS NOT NULL
      AND c.model_id <> %(model)s
      AND NOT EXISTS (SELECT 1 FROM model_vectors mv WHERE mv.chunk_id = c.id AND mv.model_id = %(model)s)"""


@dataclass(frozen=True)
class Pending:
    """A chunk to embed: its id, the hash of its model input and the input itself (the search
    prefix and text it was embedded from: chunk texts are reused, never re-parsed)."""

    chunk_id: int
    content_hash: str
    model_input: str


def missing(conn: psycopg.Connection, model_id: int, limit: int, after: int = 0) -> list[Pending]:
    """The next `limit` live chunks without a vector of the model, by id, after chunk `after`."""
    found = conn.execute(
        "SELECT c.id, c.content_hash, coalesce(c.search_prefix, '') || c.text" + _MISSING +
        " AND c.id > %(after)s ORDER BY c.id LIMIT %(limit)s",
        {"model": model_id, "after": after, "limit": limit},
    ).fetchall()
    return [Pending(int(r[0]), r[1], r[2]) for r in found]


def count_missing(conn: psycopg.Connection, model_id: int) -> int:
    return int(conn.execute("SELECT count(*)" + _MISSING, {"model": model_id}).fetchone()[0])


def count_live(conn: psycopg.Connection) -> int:
    """Live content chunks with a vector (not purged): what a migration must cover."""
    return int(conn.execute(
        "SELECT count(*) FROM chunks c JOIN document_versions v ON v.id = c.version_id"
        " WHERE v.status = 'live' AND v.kind = 'content' AND c.embedding IS NOT NULL"
    ).fetchone()[0])


def known_vectors(conn: psycopg.Connection, hashes: Sequence[str], model_id: int) -> dict[str, np.ndarray]:
    """Vectors of the model for identical model input (same content hash) already stored, in the
    chunks or in model_vectors: reused instead of encoded (a copy made by an access change, a
    document that appears twice)."""
    if not hashes:
        return {}
    found = conn.execute(
        "SELECT DISTINCT ON (h) h, e FROM ("
        " SELECT c.content_hash AS h, c.embedding AS e FROM chunks c"
        "  WHERE c.model_id = %(model)s AND c.content_hash = ANY(%(hashes)s) AND c.embedding IS NOT NULL"
        " UNION ALL SELECT c.content_hash, mv.embedding FROM model_vectors mv JOIN chunks c ON c.id = mv.chunk_id"
        "  WHERE mv.model_id = %(model)s AND c.content_hash = ANY(%(hashes)s)) found",
        {"model": model_id, "hashes": list(set(hashes))},
    ).fetchall()
    return {r[0]: np.asarray(r[1].to_numpy(), dtype=np.float32) for r in found}


def insert_vectors(conn: psycopg.Connection, model_id: int, vectors: Sequence[tuple[int, np.ndarray]]) -> int:
    """Store a batch of (chunk id, vector) in one transaction; a row that exists (a batch done
    before a kill) is left as it is. Returns the rows inserted."""
    if not vectors:
        return 0
    with conn.transaction(), conn.cursor() as cur:
        cur.execute(
            "INSERT INTO model_vectors (chunk_id, model_id, embedding)"
            " SELECT unnest(%s::bigint[]), %s, unnest(%s::vector[]) ON CONFLICT DO NOTHING",
            ([c for c, _ in vectors], model_id, [v for _, v in vectors]),
        )
        return cur.rowcount


def count_vectors(conn: psycopg.Connection, model_id: int) -> int:
    return int(conn.execute("SELECT count(*) FROM model_vectors WHERE model_id = %s", (model_id,)).fetchone()[0])


def duplicate_rows(conn: psycopg.Connection) -> int:
    """Rows beyond one per (chunk, model): always 0 (the primary key); what the kill tests check."""
    return int(conn.execute(
        "SELECT count(*) - count(DISTINCT (chunk_id, model_id)) FROM model_vectors").fetchone()[0])


def models_with_vectors(conn: psycopg.Connection) -> dict[int, int]:
    """Each model with rows in model_vectors, and how many."""
    return {int(m): int(n) for m, n in conn.execute(
        "SELECT model_id, count(*) FROM model_vectors GROUP BY model_id ORDER BY model_id").fetchall()}


def prune(conn: psycopg.Connection, model_id: int) -> int:
    """Delete a model's rows in model_vectors (its vectors in chunks are history and stay)."""
    with conn.transaction():
        return conn.execute("DELETE FROM model_vectors WHERE model_id = %s", (model_id,)).rowcount


def ensure_index(conn: psycopg.Connection, dimension: int) -> str | None:
    """The HNSW index of model_vectors for one dimension (migration 023), built unless it exists."""
    with conn.transaction():
        return conn.execute("SELECT rag_ensure_model_vector_index(%s)", (int(dimension),)).fetchone()[0]

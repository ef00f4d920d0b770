"""The multilingual vectors of non-English chunks (migration 034): which chunks still need one,
reuse by identical input, the writes, and the search's ranked list over them.

The work list is a query, not a queue (as model_vectors'): the chunks of this run's staged content
versions and of the live index whose document is not in English and that have no row yet. So an
index synced before migration 034 gains its vectors on its next sync, and a stage retried after a
kill encodes only what the killed one had not written."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import psycopg

from rag_pipeline.store.model_vectors import Pending  # a chunk to encode, as a model migration's
from rag_pipeline.store.vector_plan import VectorPlan

# Chunks of a non-English content version (staged by %(run)s, or live) with no multilingual row.
# A document whose language was not told (NULL) keeps the English-only model alone, as before.
_MISSING = """
    FROM chunks c JOIN document_versions v ON v.id = c.version_id
    WHERE v.kind = 'content' AND v.language IS NOT NULL AND v.language <> 'en'
      AND (v.status = 'live' OR (v.status = 'staged' AND v.run_id = %(run)s))
      AND c.purged_at IS NULL AND c.embedding IS NOT NULL
      AND NOT EXISTS (SELECT 1 FROM chunk_multilingual x WHERE x.chunk_id = c.id)"""


def missing(conn: psycopg.Connection, run_id: str, limit: int, after: int = 0) -> list[Pending]:
    """The next `limit` chunks without a multilingual vector, by id, after chunk `after`."""
    found = conn.execute(
        "SELECT c.id, c.content_hash, coalesce(c.search_prefix, '') || c.text" + _MISSING +
        " AND c.id > %(after)s ORDER BY c.id LIMIT %(limit)s",
        {"run": run_id, "after": after, "limit": limit},
    ).fetchall()
    return [Pending(int(r[0]), r[1], r[2]) for r in found]


def count_missing(conn: psycopg.Connection, run_id: str) -> int:
    return int(conn.execute("SELECT count(*)" + _MISSING, {"run": run_id}).fetchone()[0])


def known(conn: psycopg.Connection, hashes: Sequence[str], model: str) -> dict[str, np.ndarray]:
    """Vectors of `model` already stored for identical input (an access change's copy, an
    unchanged chunk of an edited document): reused, not encoded again."""
    if not hashes:
        return {}
    found = conn.execute(
        "SELECT DISTINCT ON (c.content_hash) c.content_hash, x.embedding FROM chunk_multilingual x"
        " JOIN chunks c ON c.id = x.chunk_id WHERE x.model = %s AND c.content_hash = ANY(%s)",
        (model, list(set(hashes))),
    ).fetchall()
    return {r[0]: np.asarray(r[1].to_numpy(), dtype=np.float32) for r in found}


def insert(conn: psycopg.Connection, model: str, vectors: Sequence[tuple[int, np.ndarray]]) -> int:
    """Store a batch of (chunk id, vector) in one transaction; a row that exists (a batch done
    before a kill) is left as it is. Returns the rows inserted."""
    if not vectors:
        return 0
    with conn.transaction(), conn.cursor() as cur:
        cur.execute(
            "INSERT INTO chunk_multilingual (chunk_id, model, embedding)"
            " SELECT unnest(%s::bigint[]), %s, unnest(%s::vector[]) ON CONFLICT DO NOTHING",
            ([c for c, _ in vectors], model, [v for _, v in vectors]),
        )
        return cur.rowcount


@dataclass(frozen=True)
class Query:
    """The multilingual list of one search: the question's vector, the model whose rows it reads,
    the similarity under which a chunk is left out, and how its rows are read (`strategy`)."""

    vector: np.ndarray
    model: str
    floor: float
    read: str = "exact"  # "exact", "index" or "rows" (strategy's)

    @property
    def walk(self) -> bool:
        """Whether the list walks its HNSW index (its search sets WALK_SETTINGS)."""
        return self.read == "index"

    def params(self) -> dict[str, object]:
        return {"xvec": self.vector, "xl_model": self.model, "xl_floor": self.floor}


def strategy(plan: VectorPlan | None, seen: int | None) -> str:
    """How the list is read: `index` (walk its HNSW index) where the vector plan walks (a broad
    caller), unless the caller sees no more of the list's rows than the exact limit (`seen`: its
    live chunks in another configuration than English's, kept at publish; None: not known, as in
    an as-of view); then `rows`: the list's rows its groups pass (035 puts them on each row), read
    whole and ranked exactly. A broad caller who sees few of them (the English-speaking majority of
    a company whose few Czech documents belong to one team) would otherwise walk the whole index,
    filtering out nearly every row (100 ms at 33,000 rows), and the exact read by version would
    read all of its chunks to find those few (185 ms at 70,000). Otherwise `exact`: a selective
    caller's chunks read by version, as the vector plan reads them."""
    if plan is None or plan.strategy != "index":
        return "exact"
    return "index" if seen is None or seen > plan.exact_max_rows else "rows"


# What a broad caller's walk sets for its transaction (store.search._apply_index_settings): no
# sequential scans. The reader's policy (035) is a test of the row whose groups the planner cannot
# know, so it guesses 0.5% of the rows pass, prices the walk for 200 rows per row kept, and reads
# and sorts the whole table instead: 90 ms, spilling to disk, at 33,000 vectors, against 7 ms for
# the walk (bench_search_scale.py --multilingual 0.3). Every other scan of a search that walks
# (the chunks' walk, full text's GIN, lookups by key) uses an index anyway. (The index of the
# rows' groups, chunk_multilingual_acl, is partial on a predicate only the `rows` read states, so
# the walk is not traded for it either: migration 036.)
WALK_SETTINGS = ", set_config('enable_seqscan', 'off', true)"


def branch(where: str, read: str) -> str:
    """The `xl` CTE of a hybrid search: the chunks under `where` (the view and the caller's
    groups, as every branch) nearest the question's multilingual vector %(xvec)s, ranked by
    cosine distance, ties by id; a chunk whose similarity is under %(xl_floor)s is left out, so
    a question no non-English passage is about adds nothing to the fusion.

    `read` (strategy's): `exact` scans the caller's chunks by version (a selective caller, a small
    index); `rows` the list's rows its groups pass, each chunk's version checked by its own
    lookup; `index` walks the HNSW index with that lookup, as the vector branch's index strategy
    does (store/search.py)."""
    seen = f"""CROSS JOIN LATERAL (
                SELECT 1 FROM chunks c JOIN document_versions v ON v.id = c.version_id
                WHERE c.id = x.chunk_id AND {where} OFFSET 0) seen"""  # noqa: S608 -- fixed fragments
    if read == "rows":  # ordered by distance and id: no index serves it, the rows are read
        inner = f"""
            SELECT x.chunk_id AS id, x.embedding <=> %(xvec)s::vector(384) AS dist
            FROM chunk_multilingual x {seen}
            WHERE x.model = %(xl_model)s AND x.chunk_id > 0  -- chunk_multilingual_acl's predicate
            ORDER BY dist, x.chunk_id LIMIT %(cand)s"""  # noqa: S608 -- fixed fragments
    elif read != "index":
        inner = f"""
            SELECT x.chunk_id AS id, x.embedding <=> %(xvec)s::vector(384) AS dist
            FROM chunk_multilingual x JOIN chunks c ON c.id = x.chunk_id
            JOIN document_versions v ON v.id = c.version_id
            WHERE {where} AND x.model = %(xl_model)s
            ORDER BY dist, x.chunk_id LIMIT %(cand)s"""  # noqa: S608 -- fixed fragments
    else:
        inner = f"""
            SELECT x.chunk_id AS id, x.embedding <=> %(xvec)s::vector(384) AS dist
            FROM chunk_multilingual x {seen}
            WHERE x.model = %(xl_model)s
            ORDER BY x.embedding <=> %(xvec)s::vector(384) LIMIT %(cand)s"""  # noqa: S608 -- fixed fragments
    return f"""
        SELECT id, row_number() OVER (ORDER BY dist, id) AS rnk, 1 - dist AS score
        FROM ({inner}) near WHERE 1 - dist >= %(xl_floor)s"""  # noqa: S608 -- fixed fragments


def parts(fused_sql: str, where: str, query: Query | None, params: dict[str, Any]) -> tuple[str, str, str]:
    """The search statement's fusion, `xl` CTE and hit columns for `query` (None: the list is not
    searched, an empty CTE and NULL columns); `params` gains the query's."""
    if query is None:
        return fused_sql, _NOTHING, "NULL::bigint AS multilingual_rank, NULL::float8 AS multilingual_score"
    params.update(query.params())
    return (fused(fused_sql), branch(where, query.read),
            "f.xl_rank AS multilingual_rank, f.xl_score AS multilingual_score")


_NOTHING = "SELECT NULL::bigint AS id, NULL::bigint AS rnk, NULL::float8 AS score WHERE false"


def fused(inner: str) -> str:
    """A fusion with the multilingual list added by reciprocal rank (same k), its rank and score
    kept for the log."""
    head = ("SELECT coalesce(h.id, xl.id) AS id, coalesce(h.rrf, 0) + coalesce(1.0 / (%(rrf_k)s + xl.rnk), 0) AS rrf,"
            " h.vec_rank, h.vec_score, h.fts_rank, h.fts_score, xl.rnk AS xl_rank, xl.score AS xl_score")
    return f"{head} FROM ({inner}) h FULL OUTER JOIN xl ON xl.id = h.id"

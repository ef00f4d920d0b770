"""How the vector branch of a search runs (a VectorPlan) and its SQL.

Two strategies, chosen per query from how many chunks the caller's groups and view let through
(store.search.plan_vector, store.search_prepare.prepare): `exact` scans those rows and is exact;
`index` walks the HNSW index of the model's dimension with pgvector's iterative scan, which keeps
fetching index candidates until enough of them pass the filter. A filter that passes few rows
makes the walk long and its recall poor, while the exact scan over few rows is cheap; a broad
filter is the opposite.

A model that a migration switched to (migration 023) has vectors of two kinds: in `chunks` for
the chunks staged under it ("native"), in `model_vectors` for the older ones. Both are searched
and the best kept. The chunks' HNSW index holds every model of that dimension, so walking it for
a model few chunks carry natively (right after a switch: none) visits the tuple limit for nothing;
such a native part is read exactly instead, and so is a part in model_vectors that holds few of the
model's vectors among another's (after a rollback)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rag_pipeline.store.search_view import View, _version_filter, vector_sql

# At most this many rows behind the caller's filter at 100,000 chunks: scan them exactly; above
# it, use the index. A larger corpus scans more exactly (store/direct_read.py).
EXACT_MAX_ROWS = 5_000
# HNSW search settings of the index strategy (pgvector 0.8): the candidate list per index walk,
# and how many index tuples an iterative scan may visit before it stops.
EF_SEARCH = 200
MAX_SCAN_TUPLES = 40_000


@dataclass(frozen=True)
class VectorPlan:
    """How the vector branch of one search runs, and why: what the search log keeps."""

    strategy: str  # "exact" (scan the filtered rows) or "index" (HNSW, iterative scan)
    estimate: int  # rows the caller's groups and view pass, counted up to exact_max_rows + 1
    dimension: int | None  # the model's dimension; its index is chunks_embedding_hnsw_<dimension>
    exact_max_rows: int = EXACT_MAX_ROWS  # the threshold the strategy was chosen by
    index: str | None = None  # the index the strategy uses (None for exact)
    ef_search: int | None = None
    max_scan_tuples: int | None = None
    iterative_scan: str = "relaxed_order"  # "off" is plain HNSW: one walk of ef_search candidates
    migrated: bool = False  # some vectors of the model are in model_vectors (a model migration's): walk both
    native_exact: bool = False  # migrated, and the caller sees few chunks with the model's own vector: read them exactly
    moved_exact: bool = False  # migrated, and the caller sees few of its vectors in model_vectors: read them exactly

    def to_dict(self) -> dict[str, Any]:
        """For the search log and `explain`; the estimate is a lower bound when `estimate_capped`."""
        found: dict[str, Any] = {"strategy": self.strategy, "estimate": self.estimate,
                                 "estimate_capped": self.estimate > self.exact_max_rows,
                                 "exact_max_rows": self.exact_max_rows, "dimension": self.dimension}
        if self.index is not None:
            found.update(index=self.index, iterative_scan=self.iterative_scan, ef_search=self.ef_search,
                         max_scan_tuples=self.max_scan_tuples)
            if self.migrated:
                found.update(migrated=True, native="exact" if self.native_exact else "index",
                             moved="exact" if self.moved_exact else "index")
        return found


EXACT = VectorPlan("exact", 0, None)  # the plan of callers that do not choose: always correct


def _plan(estimate: int, dimension: int | None, index: str | None, limit: int, *, migrated: bool = False,
          native: int | None = None, moved: int | None = None) -> VectorPlan:
    """`native`, `moved`: of a migrated model, the chunks with its own vector and its vectors in
    model_vectors the caller's filter passes, each counted up to `limit` + 1 (None: not counted,
    walked)."""
    if index is None or estimate <= limit:
        return VectorPlan("exact", estimate, dimension, limit)
    return VectorPlan("index", estimate, dimension, limit, index, EF_SEARCH, MAX_SCAN_TUPLES, migrated=migrated,
                      native_exact=migrated and native is not None and native <= limit,
                      moved_exact=migrated and moved is not None and moved <= limit)


def vector_branch(plan: VectorPlan, where: str, view: View, migrated: bool = True) -> str:
    """The `vec` CTE: candidate ids ranked by cosine distance, ties by id.

    The index strategy repeats the index's expression and predicate with the dimension as a
    literal (an int from the model's identity), which is how the planner matches a partial
    expression index; the walk is ordered by distance alone (what the index yields) and ranked
    afterwards, since a relaxed-order iterative scan may return neighbours slightly out of order.
    Each walked chunk's version is checked by its own lookup (a LATERAL subquery the planner may
    not flatten, OFFSET 0): joined as a set instead, the versions went into a hash join, which
    cannot pass the walk's order on, so the walk ran to its tuple limit before anything was cut
    (22,000 index tuples and 350 ms at 100,000 chunks, against 60 tuples).

    A migrated model's native part, when `native_exact`, scans its few chunks instead (found by
    their versions' model, ordered by an expression the HNSW index does not serve, so the planner
    cannot walk it): walked, it visited the tuple limit among the other model's chunks, 230 ms at
    100,000 chunks right after a switch (bench/bench_migrated_search.py). Its part in
    model_vectors, when `moved_exact` (after a rollback: the few chunks staged under the other
    model), likewise."""
    if plan.strategy != "index":
        return f"""
        SELECT id, row_number() OVER (ORDER BY dist, id) AS rnk, 1 - dist AS score FROM (
            SELECT c.id, {vector_sql(migrated)} <=> %(qvec)s AS dist
            FROM chunks c JOIN document_versions v ON v.id = c.version_id
            WHERE {where} AND c.embedding IS NOT NULL) scanned
        ORDER BY dist, id LIMIT %(cand)s"""  # noqa: S608 -- fixed fragments
    dims = int(plan.dimension)  # type: ignore[arg-type] -- an index strategy always has one
    distance = f"c.embedding::vector({dims}) <=> %(qvec)s::vector({dims})"
    walk = f"""
            SELECT c.id, {distance} AS dist
            FROM chunks c CROSS JOIN LATERAL (
                SELECT 1 FROM document_versions v WHERE v.id = c.version_id AND {_version_filter(view)} OFFSET 0) seen
            WHERE c.model_id = %(model_id)s AND vector_dims(c.embedding) = {dims}
            ORDER BY {distance} LIMIT %(cand)s"""  # noqa: S608 -- fixed fragments and an int
    if plan.migrated and plan.native_exact:
        walk = f"""
            SELECT c.id, c.embedding <=> %(qvec)s AS dist
            FROM chunks c JOIN document_versions v ON v.id = c.version_id
            WHERE {_version_filter(view)} AND v.model_id = %(model_id)s AND c.model_id = %(model_id)s
            ORDER BY dist, c.id LIMIT %(cand)s"""  # noqa: S608 -- fixed fragments
    if plan.migrated:  # the model's other vectors: walk their own index too, keep the best of both
        distance = f"mv.embedding::vector({dims}) <=> %(qvec)s::vector({dims})"
        moved = f"""
            SELECT mv.chunk_id AS id, {distance} AS dist
            FROM model_vectors mv CROSS JOIN LATERAL (
                SELECT 1 FROM chunks c JOIN document_versions v ON v.id = c.version_id
                WHERE c.id = mv.chunk_id AND c.model_id <> %(model_id)s AND {_version_filter(view)} OFFSET 0) seen
            WHERE mv.model_id = %(model_id)s AND vector_dims(mv.embedding) = {dims}
            ORDER BY {distance} LIMIT %(cand)s"""  # noqa: S608 -- fixed fragments and an int
        if plan.moved_exact:
            moved = f"""
            SELECT mv.chunk_id AS id, mv.embedding <=> %(qvec)s AS dist
            FROM model_vectors mv JOIN chunks c ON c.id = mv.chunk_id JOIN document_versions v ON v.id = c.version_id
            WHERE mv.model_id = %(model_id)s AND c.model_id <> %(model_id)s AND {_version_filter(view)}
            ORDER BY dist, mv.chunk_id LIMIT %(cand)s"""  # noqa: S608 -- fixed fragments
        walk = f"""
            SELECT * FROM ({walk}) native UNION ALL SELECT * FROM ({moved}) moved
            ORDER BY dist, id LIMIT %(cand)s"""  # noqa: S608 -- fixed fragments
    return f"""
        SELECT id, row_number() OVER (ORDER BY dist, id) AS rnk, 1 - dist AS score FROM ({walk}) walked"""  # noqa: S608 -- fixed fragments



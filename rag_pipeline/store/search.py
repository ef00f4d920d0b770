"""Retrieval SQL: the hybrid query with the caller's groups inside every branch (which versions a
query sees: store/search_view.py; how the vector branch runs: store/vector_plan.py; the structural
branch of named sections: store/search_sections.py; the multilingual list:
store/multilingual_vectors.py), the full-text branch's tries, and the fusion."""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import nullcontext
from typing import Any

import numpy as np
import psycopg

from rag_pipeline.store import bm25, direct_read, multilingual_vectors, search_sections
from rag_pipeline.store._sql import rows
from rag_pipeline.store.bm25_match import TRY_VALUES
from rag_pipeline.store.search_view import (  # noqa: F401 -- re-exported: store.search.View is the API
    VECTOR,
    VISIBLE_AS_OF,
    View,
    _filter_params,
    _model_sql,
    _version_filter,
    _visibility,
    _where,
    index_model_id,
    vector_sql,
)
from rag_pipeline.store.vector_plan import (  # noqa: F401 -- re-exported: store.search.VectorPlan is the API
    EF_SEARCH,
    EXACT,
    EXACT_MAX_ROWS,
    MAX_SCAN_TUPLES,
    VectorPlan,
    _plan,
    vector_branch,
)

CANDIDATES = 50  # candidates per branch before fusion


RRF_K = 60
MODES = ("vector", "fulltext", "hybrid")

# How each mode turns branch ranks into one candidate list (fixed fragments, chosen by mode).
_FUSED = {
    "vector": ("SELECT id, 1.0 / (%(rrf_k)s + rnk) AS rrf, rnk AS vec_rank, score AS vec_score,"
               " NULL::bigint AS fts_rank, NULL::float8 AS fts_score FROM vec"),
    "fulltext": ("SELECT id, 1.0 / (%(rrf_k)s + rnk) AS rrf, NULL::bigint AS vec_rank, NULL::float8 AS vec_score,"
                 " rnk AS fts_rank, score AS fts_score FROM fts"),
    "hybrid": (
        "SELECT coalesce(vec.id, fts.id) AS id,"
        " coalesce(1.0 / (%(rrf_k)s + vec.rnk), 0) + coalesce(1.0 / (%(rrf_k)s + fts.rnk), 0) AS rrf,"
        " vec.rnk AS vec_rank, vec.score AS vec_score, fts.rnk AS fts_rank, fts.score AS fts_score"
        " FROM vec FULL OUTER JOIN fts ON vec.id = fts.id"
    ),
}


def plan_vector(
    conn: psycopg.Connection, groups: Sequence[str], model_id: int, view: View = View(),
    exact_max_rows: int | None = None,
) -> VectorPlan:
    """Choose the vector branch's strategy from the selectivity of the caller's filter.

    The estimate counts the chunks the query's own WHERE clause (groups, view, model) passes,
    stopping at `exact_max_rows` + 1 (default EXACT_MAX_ROWS grown with the corpus:
    store/direct_read.py), so it costs at most that many
    index probes however large the index is, and a small index or a selective filter is always
    searched exactly. It runs under the caller's row-level security like the search does.
    Planner statistics would be cheaper but are not safe to trust: an overlap with a long list of
    groups that match nothing is estimated at most of the table, which would send a search that
    can find nothing on a walk of the whole index. The index is used only when the model's
    dimension has one (migration 009)."""
    found = conn.execute(
        "SELECT m.dimension, to_regclass(format('chunks_embedding_hnsw_%%s', m.dimension))::text,"  # noqa: S608 -- fixed
        f" coalesce(rag_model_migrated(m.id), false), {direct_read.CORPUS_CHUNKS_SQL}"
        " FROM embedding_models m WHERE m.id = %s",
        (model_id,),
    ).fetchone()
    dimension, index, migrated, corpus = found if found else (None, None, False, 0)
    limit = exact_rows_limit(corpus or 0) if exact_max_rows is None else exact_max_rows
    # the search's own filter, with the model taken from the version (every chunk has its
    # version's model): then the count reads only the chunks' (version_id, ord) index
    where = _where(view).replace("c.model_id", "v.model_id")
    passed = f"SELECT 1 FROM chunks c JOIN document_versions v ON v.id = c.version_id WHERE {where}"  # noqa: S608 -- fixed fragments
    estimate = conn.execute(
        f"SELECT count(*) FROM ({passed} LIMIT %(limit)s) passed",  # noqa: S608 -- fixed fragments
        {**_filter_params(groups, model_id, view), "limit": limit + 1},
        prepare=True,  # planned for these groups every time (see _sql.rows)
    ).fetchone()[0]
    native = moved = None  # a migrated model's parts, each counted up to the limit (store/vector_plan.py)
    if migrated and (parts := conn.execute("SELECT native, moved FROM rag_model_parts(%s, %s)",
                                           (model_id, limit + 1)).fetchone()):
        native, moved = parts
    return _plan(estimate, dimension, index, limit, migrated=migrated, native=native, moved=moved)


def exact_rows_limit(corpus_chunks: float) -> int:
    """The rows up to which the vector branch scans exactly in a corpus of `corpus_chunks`."""
    return direct_read.limit(EXACT_MAX_ROWS, corpus_chunks, "vector")


def _apply_index_settings(conn: psycopg.Connection, plan: VectorPlan, walk_multilingual: bool = False) -> None:
    """pgvector's settings for this transaction only (set_config(..., true) = SET LOCAL), in one
    statement whose result nobody waits for; sequential scans off too where the multilingual list
    walks its index (multilingual_vectors.WALK_SETTINGS says why)."""
    conn.execute("SELECT set_config('hnsw.iterative_scan', %s, true), set_config('hnsw.ef_search', %s, true),"
                 " set_config('hnsw.max_scan_tuples', %s, true)" + (multilingual_vectors.WALK_SETTINGS if walk_multilingual else ""),
                 (plan.iterative_scan, str(plan.ef_search), str(plan.max_scan_tuples)))


def search_chunks(
    conn: psycopg.Connection,
    query_vector: np.ndarray,
    query_text: str,
    groups: Sequence[str],
    model_id: int,
    k: int,
    view: View = View(),
    candidates: int = CANDIDATES,
    mode: str = "hybrid",
    plan: VectorPlan = EXACT,
    terms: tuple[list[bm25.Term], int] | None = None,
    *,
    transaction: bool = True,
    sections: Sequence[str] = (),
    migrated: bool = True,
    corpus_chunks: float | None = None,
    multilingual: multilingual_vectors.Query | None = None,
) -> list[dict[str, Any]]:
    """Vector and/or full-text candidates, fused by reciprocal rank in hybrid mode. Each row
    carries its rank and score in each branch (`vector_*`, `fulltext_*`; None where the branch did
    not find it), which the search log keeps to explain the result.

    Full-text matching is OR over the query's lexemes (per chunk configuration), ranked by
    BM25 (store/bm25.py): idf from the statistics kept at publish of the live chunks the caller's
    groups may see, term frequency from the tsvector's positions, length from the chunk's token
    count against a fixed pivot. Each row also carries the share of the query's idf it matches
    (`term_coverage`), which the rerank stage uses, and how the full-text branch ranked
    (`fulltext_plan`: terms taken, rows read, whether its list is proven exact; None in vector mode).

    One statement runs both branches, the fusion and the first full-text try; only a try whose
    bound fails costs more (bm25.rank's tries, then the fusion again with the proven list and the
    other branches' lists as the first statement found them, not searched again). `terms`
    are the query's terms and live chunk count when `prepare` read them already. `transaction`
    False: the caller's open transaction holds the index settings (a pipelined one must not get a
    transaction block of its own: _sql.pipelined_transaction).

    The caller's groups and the version visibility are WHERE clauses of every branch, so a
    chunk the caller may not see is never a candidate (no post-filtering). `plan` (from
    `plan_vector` or `prepare`) says how the vector branch runs; by default it is exact.
    `sections`: the keys of the numbered parts the question names (retrieval/section_refs.py);
    in hybrid mode they add the structural branch (store/search_sections.py). `migrated` False:
    the model has no vector in model_vectors (search_prepare.Prepared.migrated), so the statement
    need not look there. `corpus_chunks`: the corpus size estimate `prepare` read (None: read
    here), which decides with the caller's live chunks how full-text candidates are found
    (bm25.reads_by_version). `multilingual`: in hybrid mode, the list of non-English chunks
    nearest the question by the multilingual model (store/multilingual_vectors.py).
    """
    found_terms, live = terms if terms is not None else bm25.query_terms(conn, query_text, None, groups,
                                                                           live=view.live)
    if corpus_chunks is None:
        corpus_chunks = direct_read.corpus_chunks(conn) if mode != "vector" else 0
    depth = max(candidates, k)
    sql, params, ranking = _first_statement(query_vector, groups, model_id, k, view, depth, mode, plan,
                                            found_terms, live, sections, migrated, corpus_chunks, multilingual)
    inline = ranking is not None and ranking.empty is None
    with conn.transaction() if transaction else nullcontext():  # the index settings hold for this transaction only
        if plan.strategy == "index":
            _apply_index_settings(conn, plan, multilingual is not None and multilingual.walk and mode == "hybrid")
        found = rows(conn, sql, params, prepare=True)  # parsed once per connection: see rows()
        record = None
        if ranking is not None:
            ranked = ranking.empty
            if inline:
                tried = found[0] if found else {"fts_matched": 0, "fts_found": [], "branch_lists": {}}
                ranked = ranking.judge(int(tried["fts_matched"]), [(i, s) for i, s in tried["fts_found"]])
                if ranked is None:  # the bound failed: more tries, then the fusion with their list
                    ranked = bm25.rank(conn, found_terms, _where(view, migrated), _version_filter(view),
                                       _filter_params(groups, model_id, view), depth, budget=bm25.ROW_BUDGET,
                                       live_chunks=live, corpus_chunks=corpus_chunks, ranking=ranking)
                    sql, params = _search_sql(query_vector, groups, model_id, k, view, depth, mode, plan,
                                              found_terms, None, ranked, sections, migrated, multilingual,
                                              carried=tried["branch_lists"])
                    found = rows(conn, sql, params, prepare=True)
            record = ranked.record if ranked is not None else None
    for r in found:
        for column in ("fts_matched", "fts_found", "branch_lists"):
            r.pop(column, None)
        r["fulltext_plan"] = record
    return found


def explain_search(
    conn: psycopg.Connection,
    query_vector: np.ndarray,
    query_text: str,
    groups: Sequence[str],
    model_id: int,
    k: int,
    view: View = View(),
    candidates: int = CANDIDATES,
    mode: str = "hybrid",
    plan: VectorPlan = EXACT,
    sections: Sequence[str] = (),
) -> str:
    """PostgreSQL's plan (EXPLAIN, not executed) for `search_chunks`' statement with the same
    arguments (its first full-text try inline), under the same index settings: shows whether
    the vector branch walks the HNSW index."""
    terms, live = bm25.query_terms(conn, query_text, None, groups, live=view.live)
    sql, params, _ = _first_statement(query_vector, groups, model_id, k, view, max(candidates, k), mode, plan,
                                      terms, live, sections, corpus_chunks=direct_read.corpus_chunks(conn))
    with conn.transaction():
        if plan.strategy == "index":
            _apply_index_settings(conn, plan)
        found = conn.execute("EXPLAIN (COSTS OFF) " + sql, params, prepare=False).fetchall()
    return "\n".join(r[0] for r in found)


def _first_statement(
    query_vector: np.ndarray, groups: Sequence[str], model_id: int, k: int, view: View, depth: int, mode: str,
    plan: VectorPlan, terms: Sequence[bm25.Term], live: int, sections: Sequence[str] = (), migrated: bool = True,
    corpus_chunks: float = 0, multilingual: multilingual_vectors.Query | None = None,
) -> tuple[str, dict[str, Any], bm25.Ranking | None]:
    """The search statement as it first runs (search_chunks, and what explain_search shows): the
    full-text branch's first try inline, or its empty list when no term can match; and the
    Ranking whose later tries follow (None in vector mode)."""
    if mode not in _FUSED:
        raise ValueError(f"unknown search mode {mode!r}; expected one of {', '.join(MODES)}")
    ranking = None if mode == "vector" else bm25.Ranking(
        terms, depth, budget=bm25.ROW_BUDGET, loose_bound=not view.live, live_chunks=live, corpus_chunks=corpus_chunks)
    inline = ranking is not None and ranking.empty is None
    sql, params = _search_sql(query_vector, groups, model_id, k, view, depth, mode, plan, terms,
                              ranking if inline else None, None if inline or ranking is None else ranking.empty,
                              sections, migrated, multilingual)
    return sql, params, ranking


def _search_sql(
    query_vector: np.ndarray,
    groups: Sequence[str],
    model_id: int,
    k: int,
    view: View,
    depth: int,
    mode: str,
    plan: VectorPlan,
    terms: Sequence[bm25.Term],
    ranking: bm25.Ranking | None,
    ranked: bm25.Ranked | None,
    sections: Sequence[str] = (),
    migrated: bool = True,
    multilingual: multilingual_vectors.Query | None = None,
    carried: dict[str, list] | None = None,
) -> tuple[str, dict[str, Any]]:
    """The statement of `search_chunks` and its parameters. The full-text branch is either the
    first try of `ranking` inline (its CTEs, with what it found as two more columns, and the other
    branches' lists as a third: `branch_lists`) or the
    list `ranked` already proven by bm25.rank; vector mode has neither. Named `sections` add the
    structural branch to a hybrid search, a `multilingual` query the list of its nearest
    non-English chunks. `carried`: the `branch_lists` of the first statement, which then stand
    for the vector, structural and multilingual branches (the same lists: the same question,
    view and groups in the same transaction)."""
    where = _where(view, migrated)
    params = {**_filter_params(groups, model_id, view), **search_sections.params(sections)}
    structural = mode == "hybrid" and bool(sections)
    fused = search_sections.fused(_FUSED[mode]) if structural else _FUSED[mode]
    fused, xl_branch, xl_columns = multilingual_vectors.parts(fused, where, multilingual if mode == "hybrid" else None,
                                                              params)
    if ranking is not None:
        first = ranking.params()
        ctes = bm25.candidate_ctes(where, _version_filter(view), ranking.by_version, len(first["q_cfg"]))
        fts = "SELECT id, score, row_number() OVER (ORDER BY score DESC, id) AS rnk FROM fts_top"
        tried = _FIRST_ROW_COLUMNS
        params.update(first)
    else:
        ctes = _IDF_ONLY
        ids, scores = (ranked.ids, ranked.scores) if ranked is not None else ([], [])
        fts = ("SELECT f.id, f.score, f.rnk FROM unnest(%(fts_ids)s::bigint[], %(fts_scores)s::float8[])"
               " WITH ORDINALITY AS f(id, score, rnk)")
        tried = ""
        params.update(bm25.idf_params(terms), fts_ids=ids, fts_scores=scores)
    denominators: dict[str, float] = {}
    for t in terms:
        denominators[t.cfg] = denominators.get(t.cfg, 0.0) + t.idf
    sql = f"""
    WITH {ctes}, fts AS (
        {fts} ORDER BY rnk LIMIT %(cand)s
    ), vec AS ({_carried("vec", carried, params) or (vector_branch(plan, where, view, migrated) if mode != "fulltext" else _NO_VECTOR)}
    ), sec AS ({_carried("sec", carried, params) or (search_sections.branch(where) if structural else _NO_VECTOR)}
    ), xl AS ({_carried("xl", carried, params) or xl_branch}
    ), fused AS (
        {fused}
    ), best AS MATERIALIZED (  -- the k best first, then their rows by primary key (never a join
        SELECT *, row_number() OVER (ORDER BY rrf DESC, id) AS pos  -- of every visible chunk with the fusion)
        FROM fused ORDER BY rrf DESC, id LIMIT %(k)s
    )
    SELECT c.id AS chunk_id, d.source, d.uri, v.version_no, v.id AS version_id, v.status,
           v.acl_groups, c.section_path, c.page_start, c.page_end, c.char_start, c.char_end, c.text,
           f.rrf, f.vec_rank AS vector_rank, f.vec_score AS vector_score, f.fts_rank AS fulltext_rank,
           f.fts_score AS fulltext_score, {xl_columns}, 1 - ({vector_sql(migrated)} <=> %(qvec)s) AS similarity,
           c.ts_config::text AS ts_config, {search_sections.MATCH_COLUMN},
           coalesce((SELECT sum(i.idf) FROM fts_idf i WHERE i.cfg = c.ts_config AND c.tsv @@ i.q)
                    / nullif((SELECT dn.v FROM unnest(%(d_cfg)s::regconfig[], %(d_val)s::float8[]) AS dn(cfg, v)
                              WHERE dn.cfg = c.ts_config), 0), 0) AS term_coverage{tried}
    FROM best f JOIN chunks c ON c.id = f.id
    JOIN document_versions v ON v.id = c.version_id JOIN documents d ON d.id = v.document_id
    ORDER BY f.rrf DESC, c.id
    """  # noqa: S608 -- the visibility, ACL, fusion and vector clauses are fixed fragments; values are parameters
    params.update({
        "qvec": query_vector,
        "d_cfg": list(denominators),
        "d_val": list(denominators.values()),
        "rrf_k": RRF_K,
        "cand": depth,
        "k": k,
    })
    return sql, params


# The idf table alone (vector mode, or a full-text list proven by bm25.rank): term coverage reads it.
_IDF_ONLY = ("fts_idf AS (SELECT * FROM unnest(%(s_cfg)s::regconfig[], %(s_lex)s::text[], %(s_idf)s::float8[],"
             " %(s_q)s::tsquery[]) AS i(cfg, lexeme, idf, q))")

# The vector branch of a full-text search: nothing (the fused rows come from fts alone).
_NO_VECTOR = "SELECT NULL::bigint AS id, NULL::bigint AS rnk, NULL::float8 AS score WHERE false"


# The branch lists a statement whose full-text try failed passes to its rerun (search_chunks):
# each branch's rows as the fusion reads them, and the CTE bodies that read them back.
_BRANCH_COLUMNS = {"vec": ("id", "rnk", "score"), "sec": ("id", "rnk"), "xl": ("id", "rnk", "score")}
_BRANCH_LISTS = ("json_build_object("
                 "'vec', (SELECT coalesce(json_agg(json_build_array(id, rnk, score)), '[]') FROM vec),"
                 " 'sec', (SELECT coalesce(json_agg(json_build_array(id, rnk)), '[]') FROM sec),"
                 " 'xl', (SELECT coalesce(json_agg(json_build_array(id, rnk, score)), '[]') FROM xl))")
# What the first statement reports besides its rows (the try's findings, the branch lists), on its
# first row only: repeated on each of the fifty rows a reranked search fetches, sending and decoding
# them cost a 1% caller's hybrid + rerank 3 to 5 ms at 100,000 chunks.
_FIRST_ROW_COLUMNS = "".join(f", CASE WHEN f.pos = 1 THEN {value} END AS {name}"
                             for name, value in {**TRY_VALUES, "branch_lists": _BRANCH_LISTS}.items())
_CARRIED_BRANCH = {
    "vec": ("SELECT * FROM unnest(%(carried_vec_id)s::bigint[], %(carried_vec_rnk)s::bigint[],"
            " %(carried_vec_score)s::float8[]) AS carried(id, rnk, score)"),
    "sec": "SELECT * FROM unnest(%(carried_sec_id)s::bigint[], %(carried_sec_rnk)s::bigint[]) AS carried(id, rnk)",
    "xl": ("SELECT * FROM unnest(%(carried_xl_id)s::bigint[], %(carried_xl_rnk)s::bigint[],"
           " %(carried_xl_score)s::float8[]) AS carried(id, rnk, score)"),
}


def _carried(branch: str, carried: dict[str, list] | None, params: dict[str, Any]) -> str | None:
    """The CTE body that reads `branch`'s carried rows (None: none carried, search it)."""
    if carried is None:
        return None
    found = carried.get(branch) or []
    for j, column in enumerate(_BRANCH_COLUMNS[branch]):
        params[f"carried_{branch}_{column}"] = [r[j] for r in found]
    return _CARRIED_BRANCH[branch]

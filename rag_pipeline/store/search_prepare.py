"""The statement that prepares a search (its first round trip): everything `search_chunks` and
the refusal decision need besides the query vector, read at once."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import psycopg

from rag_pipeline.store import bm25, direct_read, search
from rag_pipeline.store._sql import rows
from rag_pipeline.store.search import (
    VectorPlan,
    _filter_params,
    _model_sql,
    _plan,
    _version_filter,
    _where,
)

# The vector plan's estimate in a view other than the live index (as of a time, a run's preview),
# for a model with no vector in model_vectors: the caller's visible versions of the model, each
# counting its chunks as its last ordinal tells (a version's chunks are numbered from 0 and are
# all visible or none: they carry its groups), summed until the sum passes the limit. One chunk
# read per version instead of every chunk: at 100,000 chunks an as-of search's estimate read
# 5,245 chunks in 7.5 ms. A migrated model's chunks may hold its vector in model_vectors
# instead: those are counted one by one, as plan_vector counts.
_PER_VERSION = """, per_version AS MATERIALIZED (  -- filled as read: the running sum below stops early
        SELECT (SELECT c.ord + 1 FROM chunks c WHERE c.version_id = v.id ORDER BY c.ord DESC LIMIT 1) AS n
        FROM document_versions v WHERE {versions} AND v.model_id = (SELECT id FROM search_model)
    )"""
_BY_VERSION_ESTIMATE = """coalesce(
        (SELECT {limit} + 1 FROM (SELECT sum(coalesce(n, 0)) OVER (ROWS UNBOUNDED PRECEDING) AS total FROM per_version) t
          WHERE t.total > {limit} LIMIT 1),
        (SELECT coalesce(sum(n), 0) FROM per_version))"""


@dataclass(frozen=True)
class Prepared:
    """What a search reads before it embeds the query, in one statement: the time it is logged
    at, the view's model (its embedding_models row), the query's full-text terms with the
    caller's statistics, the vector plan, the refusal calibration in force for that model and
    `calibration_mode`, the search log id the search will be written under (None: not logged),
    and the rerank weights fitted for that model as of the view's time (the live index: now), so
    a replay of a logged search reorders as it did."""

    searched_at: datetime
    model: dict[str, Any] | None
    terms: tuple[list[bm25.Term], int]
    plan: VectorPlan | None
    calibration: dict[str, Any] | None
    log_id: int | None
    rerank: dict[str, Any] | None = None  # the rerank weights in force: {"calibration_id", "weights"}; None: defaults
    migrated: bool = True  # some vectors of the model are in model_vectors (False: the search need not look there)
    corpus_chunks: float = 0  # PostgreSQL's estimate of the chunks table's rows (store/direct_read.py)
    multilingual: bool = False  # the index holds vectors of `multilingual_model` (migration 034) the caller may see
    # live chunks the caller sees in another text configuration than English's (an upper bound of
    # its rows in the multilingual list); None for another view than the live index (not kept)
    other_language_chunks: int | None = None


def prepare(
    conn: psycopg.Connection, query_text: str, groups: Sequence[str], view: search.View = search.View(), *,
    vector: bool = True, calibration_mode: str | None = None, log: bool = False, exact_max_rows: int | None = None,
    multilingual_model: str | None = None,
) -> Prepared:
    """One round trip for everything `search_chunks` and the refusal decision need besides the
    query vector (run it in the caller's transaction, after set_session_groups): the model of
    the view (the newest visible content version's: a sync never mixes models), the vector
    plan's estimate (when `vector`: for the live index the live chunks the groups see, from the
    statistics kept at publish, which `plan_vector`'s count equals; for another view the same
    count read version by version (_PER_VERSION), up to one more than the exact limit), the
    query's terms and statistics (store/bm25.py), the corpus size estimate, the calibration, and
    a search log id (when `log`), whether the index holds vectors of `multilingual_model`
    (migration 034; None: not asked) that the caller may see: in the live index, not when the
    statistics kept at publish show it no chunk in another language than English. The exact
    limit is EXACT_MAX_ROWS grown with the corpus (store/direct_read.py) unless `exact_max_rows`
    fixes it."""
    floor = search.EXACT_MAX_ROWS if exact_max_rows is None else exact_max_rows  # read now: a setting
    grows = exact_max_rows is None
    live = view.live
    where = (_where(view).replace("c.model_id = %(model_id)s", "v.model_id = (SELECT id FROM search_model)")
             .replace("%(model_id)s", "(SELECT id FROM search_model)"))
    count_limit = direct_read.limit_sql("%(floor)s", "vector") if grows else "%(floor)s"
    counted = vector and not live
    estimate = (f"CASE WHEN (SELECT migrated FROM model_migrated) THEN (SELECT count(*) FROM (SELECT 1 FROM chunks c"  # noqa: S608 -- fixed fragments
                f" JOIN document_versions v ON v.id = c.version_id WHERE {where} LIMIT {count_limit} + 1) passed)"
                f" ELSE {_BY_VERSION_ESTIMATE.format(limit=count_limit)} END") if counted else "NULL::bigint"
    sql = f"""
    WITH RECURSIVE {bm25.TERM_CTES}, search_model AS MATERIALIZED (
        SELECT e.* FROM embedding_models e WHERE e.id = ({_model_sql(view)})
    ), model_migrated AS MATERIALIZED (  -- read once: rag_model_parts costs ~1 ms a call even when it has no row
        SELECT coalesce(rag_model_migrated((SELECT id FROM search_model)), false) AS migrated
    ){_PER_VERSION.format(versions=_version_filter(view)) if counted else ""}
    SELECT now() AS searched_at, (SELECT row_to_json(m) FROM search_model m) AS model,
           to_regclass(format('chunks_embedding_hnsw_%%s', (SELECT dimension FROM search_model)))::text AS index,
           {estimate} AS estimate,
           (SELECT row_to_json(r) FROM refusal_calibrations r WHERE r.model_id = (SELECT id FROM search_model)
             AND r.mode = %(calibration_mode)s ORDER BY r.calibrated_at DESC, r.id DESC LIMIT 1) AS calibration,
           (SELECT json_build_object('calibration_id', r.id, 'weights', r.weights) FROM rerank_calibrations r
             WHERE r.model_id = (SELECT id FROM search_model) AND r.calibrated_at <= coalesce(%(as_of)s::timestamptz, now())
             ORDER BY r.calibrated_at DESC, r.id DESC LIMIT 1) AS rerank,
           CASE WHEN %(log)s THEN nextval(pg_get_serial_sequence('search_log', 'id')) END AS log_id,
           (SELECT migrated FROM model_migrated) AS migrated,
           CASE WHEN (SELECT migrated FROM model_migrated) THEN
             (SELECT row_to_json(p) FROM rag_model_parts((SELECT id FROM search_model), {count_limit} + 1) p) END AS parts,
           {direct_read.CORPUS_CHUNKS_SQL} AS corpus_chunks,
           rag_multilingual_present(%(xl_model)s::text) AS multilingual,  -- false for NULL: not asked
           -- the live chunks the caller sees in any configuration but English's, which every chunk
           -- with a multilingual vector has: none leaves the list out (a walk of its whole index
           -- for nothing); few read its rows by their groups (multilingual_vectors.strategy)
           (SELECT coalesce(sum(chunks), 0) FROM fts_acl_corpus
             WHERE acl_groups && %(groups)s::text[] AND ts_config <> 'english'::regconfig) AS other_languages,
           {bm25.TERM_COLUMNS}
    """  # noqa: S608 -- fixed fragments; values are parameters
    params = {**_filter_params(groups, 0, view), **bm25.term_params(query_text, groups, live=live),
              "floor": floor, "calibration_mode": calibration_mode, "log": log, "xl_model": multilingual_model}
    found = rows(conn, sql, params, prepare=True)[0]
    model = found["model"]
    corpus = float(found["corpus_chunks"] or 0)
    limit = search.exact_rows_limit(corpus) if grows else floor
    plan = None
    if vector and model is not None:
        # the live index: the live chunks of the access sets the groups overlap, kept at publish
        # (fts_acl_corpus; one model per live index), capped as the count would be: no scan
        estimate = min(int(found["fts_live"]), limit + 1) if live else int(found["estimate"])
        plan = _plan(estimate, model["dimension"], found["index"], limit, migrated=found["migrated"],
                     **(found["parts"] or {}))
    other = int(found["other_languages"])
    return Prepared(found["searched_at"], model, bm25.terms_from(found["fts_terms"], found["fts_live"]), plan,
                    found["calibration"], found["log_id"], found["rerank"], bool(found["migrated"]), corpus,
                    bool(found["multilingual"]) and (other > 0 or not live), other if live else None)

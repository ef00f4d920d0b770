"""Search that scales: one HNSW index per embedding dimension, and a vector strategy chosen per
query from how many chunks the caller's groups and as-of time let through (exact over few rows,
the index with iterative scans over many), logged with the search. Access control and as-of
semantics must not change with the strategy.

The index here holds a few thousand random unit vectors written through the store under the
real model's identity, in versions whose groups make filters of known selectivity: every
version is in `all-staff` and in one of GROUPS groups `g<n>`."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime

import numpy as np
import pytest
from conftest import fresh_database

from rag_pipeline import store
from rag_pipeline.retrieval import search as retrieval
from rag_pipeline.store import database
from rag_pipeline_tests.helpers import index_documents

VERSIONS = 150
PER_VERSION = 20  # 3,000 chunks
GROUPS = 50  # g0 passes 60 chunks (2%); g0..g9 pass 600
THRESHOLD = 500  # exact_max_rows for these tests: the strategies meet at a few thousand chunks
INDEX = "chunks_embedding_hnsw_384"
FAR_PAST = datetime(1900, 1, 1, tzinfo=UTC)
FAR_FUTURE = datetime(9999, 12, 31, tzinfo=UTC)


def unit_vectors(rng: np.random.Generator, n: int, dims: int = 384) -> np.ndarray:
    vectors = rng.standard_normal((n, dims)).astype(np.float32)
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


@pytest.fixture(scope="module")
def index_db(pg_server_url: str, embedder) -> Iterator[tuple[str, int]]:
    """(url, model id) of a published index of VERSIONS x PER_VERSION random chunks."""
    rng = np.random.default_rng(12)
    with fresh_database(pg_server_url) as url, database.connect(url) as conn:
        model_id = store.models.register_model(conn, embedder.identity.to_dict())
        store.runs.create_run(conn, "r1", ["synthetic"], model_id)
        for n in range(VERSIONS):
            chunks = [{"ord": i, "section_path": [f"S{i}"], "char_start": 0, "char_end": 5, "token_count": 2,
                       "content_hash": f"h{n}-{i}", "text": f"chunk {n}-{i}", "search_text": f"chunk {n} {i}"}
                      for i in range(PER_VERSION)]
            fields = {"checksum": f"c{n}", "acl_groups": ["all-staff", f"g{n % GROUPS}"], "model_id": model_id}
            store.versions.stage_content_version(conn, "r1", "synthetic", f"doc-{n}.md", fields, chunks,
                                                 unit_vectors(rng, PER_VERSION))
        store.runs.update_run(conn, "r1", gate_passed=True)
        store.versions.publish(conn, "r1")
        conn.execute("ANALYZE chunks")
        conn.execute("ANALYZE document_versions")
        yield url, model_id


def top_ids(conn, vector, groups, model_id, plan, view=store.search.View(), mode="vector", k=10) -> list[int]:
    return [r["chunk_id"] for r in store.search.search_chunks(conn, vector, "chunk", groups, model_id, k, view,
                                                              mode=mode, plan=plan)]


def test_each_model_dimension_gets_one_hnsw_cosine_index(db_url: str, embedder) -> None:
    with database.connect(db_url) as conn:
        store.models.register_model(conn, embedder.identity.to_dict())
        store.models.register_model(conn, embedder.identity.to_dict())  # recorded again: no second index
        other = {**embedder.identity.to_dict(), "name": "tiny", "dimension": 8}
        store.roles.assume(conn, store.roles.WRITER)  # the pipeline's role records models, owning no table
        store.models.register_model(conn, other)
        wide = {**embedder.identity.to_dict(), "name": "wide", "dimension": 3072}  # beyond HNSW's 2,000
        store.models.register_model(conn, wide)
        indexes = dict(conn.execute("SELECT indexname, indexdef FROM pg_indexes WHERE tablename = 'chunks'"
                                    " AND indexname LIKE 'chunks_embedding_hnsw_%'").fetchall())
    assert sorted(indexes) == ["chunks_embedding_hnsw_384", "chunks_embedding_hnsw_8"]
    definition = indexes[INDEX]
    assert "USING hnsw" in definition and "vector_cosine_ops" in definition
    assert "(embedding)::vector(384)" in definition and "vector_dims(embedding) = 384" in definition


@pytest.mark.parametrize("dimension", ["384; DROP TABLE chunks", 0, -384, 3.5, True, None])
def test_a_model_dimension_that_is_not_a_positive_integer_is_refused(db_url: str, embedder, dimension) -> None:
    with database.connect(db_url) as conn:
        with pytest.raises(store.models.ModelDimensionError, match="not a positive integer"):
            store.models.register_model(conn, {**embedder.identity.to_dict(), "dimension": dimension})
        assert conn.execute("SELECT count(*) FROM embedding_models").fetchone() == (0,)  # nothing half-recorded
        assert conn.execute("SELECT count(*) FROM chunks").fetchone() == (0,)


def test_an_unfiltered_search_over_thousands_of_chunks_walks_the_index(index_db) -> None:
    url, model_id = index_db
    vector = unit_vectors(np.random.default_rng(1), 1)[0]
    with database.connect(url) as conn:
        plan = store.search.plan_vector(conn, ["all-staff"], model_id, exact_max_rows=THRESHOLD)
        assert plan.strategy == "index" and plan.index == INDEX
        for mode in ("vector", "hybrid"):
            shown = store.search.explain_search(conn, vector, "chunk", ["all-staff"], model_id, 10, mode=mode, plan=plan)
            assert f"Index Scan using {INDEX} on chunks" in shown, shown
        exact = store.search.explain_search(conn, vector, "chunk", ["all-staff"], model_id, 10, plan=store.search.EXACT)
        assert INDEX not in exact


def test_a_search_repeated_on_one_connection_is_never_given_a_generic_plan(index_db) -> None:
    """psycopg prepares a statement it has run five times (the search prepares its own at once),
    and PostgreSQL may then switch to a generic plan chosen without the query's values: at
    200,000 chunks that plan left the partial vector index and searches became 10 times slower
    from the eleventh of a batch on (`search --queries`, an evaluation). Every connection plans
    its prepared statements for their values every time: parsed once, never a generic plan."""
    url, model_id = index_db
    with database.connect(url) as conn:
        assert conn.execute("SHOW plan_cache_mode").fetchone()[0] == "force_custom_plan"
        for vector in unit_vectors(np.random.default_rng(4), 12):
            plan = store.search.plan_vector(conn, ["all-staff"], model_id, exact_max_rows=THRESHOLD)
            assert len(top_ids(conn, vector, ["all-staff"], model_id, plan)) == 10
            assert len(top_ids(conn, vector, ["g0"], model_id, store.search.EXACT)) == 10
        prepared = conn.execute("SELECT statement, generic_plans, custom_plans FROM pg_prepared_statements").fetchall()
    searches = [r for r in prepared if "document_versions" in r[0]]  # the search and its count
    assert searches and all(r[1] == 0 for r in searches), prepared
    assert sum(r[2] for r in searches) >= 36  # 12 counts and 24 searches, each planned for its own values


def test_the_strategy_follows_the_selectivity_of_groups_and_as_of(index_db) -> None:
    url, model_id = index_db

    def plan(groups: list[str], as_of: datetime | None = None) -> store.search.VectorPlan:
        return store.search.plan_vector(conn, groups, model_id, store.search.View(as_of=as_of), exact_max_rows=THRESHOLD)

    strangers = [f"stranger-{i}" for i in range(10_000)]
    with database.connect(url) as conn:
        selective = plan(["g0"])
        assert (selective.strategy, selective.estimate) == ("exact", VERSIONS // GROUPS * PER_VERSION)
        assert plan(["all-staff"]).strategy == "index"
        assert plan([f"g{i}" for i in range(10)]).strategy == "index"  # 600 rows: above the threshold
        assert (plan([]).strategy, plan([]).estimate) == ("exact", 0)  # no groups: nothing to scan
        assert (plan(strangers).strategy, plan(strangers).estimate) == ("exact", 0)
        assert plan([*strangers, "g0"]).estimate == selective.estimate  # 10,000 groups, one of them real
        assert plan([*strangers, "all-staff"]).strategy == "index"
        assert (plan(["all-staff"], FAR_PAST).strategy, plan(["all-staff"], FAR_PAST).estimate) == ("exact", 0)
        assert plan(["all-staff"], FAR_FUTURE).strategy == "index"  # the live versions, still valid
        assert plan(["g0"], FAR_FUTURE).strategy == "exact"
        # the default threshold: a few thousand chunks are always searched exactly
        assert store.search.plan_vector(conn, ["all-staff"], model_id).strategy == "exact"


def test_the_chosen_strategy_finds_what_exact_search_finds(index_db) -> None:
    """Recall@10 of the chosen strategy against exact search on filtered queries, and the same
    hits and order wherever the chosen strategy is exact (small or selective: unchanged results)."""
    url, model_id = index_db
    queries = unit_vectors(np.random.default_rng(2), 20)
    broad = [f"g{i}" for i in range(10)]  # 20% of the chunks: the index, filtered
    with database.connect(url) as conn:
        plan = store.search.plan_vector(conn, broad, model_id, exact_max_rows=THRESHOLD)
        assert plan.strategy == "index"
        found = truth = 0
        for vector in queries:
            expected = top_ids(conn, vector, broad, model_id, store.search.EXACT)
            truth += len(expected)
            found += len(set(top_ids(conn, vector, broad, model_id, plan)) & set(expected))
        assert truth == 10 * len(queries) and found / truth >= 0.95
        for groups, view in ((["g0"], store.search.View()), (["all-staff"], store.search.View()),
                             (["all-staff"], store.search.View(as_of=FAR_FUTURE)), ([], store.search.View())):
            chosen = store.search.plan_vector(conn, groups, model_id, view)
            assert chosen.strategy == "exact"
            for mode in store.search.MODES:
                assert (store.search.search_chunks(conn, queries[0], "chunk 3", groups, model_id, 10, view, mode=mode, plan=chosen)
                        == store.search.search_chunks(conn, queries[0], "chunk 3", groups, model_id, 10, view, mode=mode))


def test_the_index_strategy_keeps_the_readers_row_level_security(index_db) -> None:
    """A reader whose session groups are g0..g9 asks with a broader filter in the query itself:
    the index walk still returns only chunks of the session's groups (RLS is not bypassed by
    the index scan), exactly as the exact scan does."""
    url, model_id = index_db
    session_groups = [f"g{i}" for i in range(10)]
    vector = unit_vectors(np.random.default_rng(3), 1)[0]
    with database.connect_as(url, store.roles.READER) as conn:
        assert conn.execute("SELECT current_user").fetchone()[0] == store.roles.READER
        with conn.transaction():
            store.search_log.set_session_groups(conn, session_groups)
            plan = store.search.plan_vector(conn, ["all-staff"], model_id, exact_max_rows=THRESHOLD)
            walked = store.search.search_chunks(conn, vector, "chunk", ["all-staff"], model_id, 10, mode="vector", plan=plan)
            exact = store.search.search_chunks(conn, vector, "chunk", ["all-staff"], model_id, 10, mode="vector")
        assert plan.strategy == "index" and plan.estimate <= 600 + THRESHOLD  # counted under RLS
        assert len(walked) == 10 and all(set(r["acl_groups"]) & set(session_groups) for r in walked)
        assert len({r["chunk_id"] for r in walked} & {r["chunk_id"] for r in exact}) >= 9


def test_every_search_logs_its_vector_strategy(index_db, embedder, monkeypatch) -> None:
    url, model_id = index_db
    with database.connect(url) as conn:
        hits = retrieval.search(conn, embedder, "chunk 7", ["g0"], k=5, user="auditor")
        logged = store.search_log.logged_search(conn, hits.log_id)
        assert logged["strategy"]["strategy"] == "exact"
        assert logged["strategy"]["estimate"] == VERSIONS // GROUPS * PER_VERSION
        assert logged["strategy"]["estimate_capped"] is False
        monkeypatch.setattr(store.search, "EXACT_MAX_ROWS", THRESHOLD)
        hits = retrieval.search(conn, embedder, "chunk 7", ["all-staff"], k=5, mode="vector")
        assert len(hits) == 5
        strategy = store.search_log.logged_search(conn, hits.log_id)["strategy"]
        assert strategy["strategy"] == "index" and strategy["index"] == INDEX and strategy["estimate_capped"] is True
        assert strategy["exact_max_rows"] == THRESHOLD and strategy["iterative_scan"] == "relaxed_order"
        assert strategy["ef_search"] == store.search.EF_SEARCH
        hits = retrieval.search(conn, embedder, "chunk 7", ["all-staff"], k=5, mode="fulltext")
        logged = store.search_log.logged_search(conn, hits.log_id)["strategy"]
        assert "strategy" not in logged and logged["fulltext"]["exact"] is True  # no vector branch ran


def test_huge_group_lists_are_refused_before_any_strategy_is_chosen(index_db, embedder) -> None:
    url, _ = index_db
    with database.connect(url) as conn, pytest.raises(retrieval.QueryError, match="10,000 groups given"):
        retrieval.search(conn, embedder, "chunk", [f"g{i}" for i in range(10_000)])


def test_a_larger_corpus_reads_a_selective_callers_chunks_directly(index_db, embedder, monkeypatch) -> None:
    """The visible chunks up to which a branch reads by version grow with the corpus (as its square
    root: store/direct_read.py), from PostgreSQL's
    estimate of the chunks table. Here the floors are 100 (vector) and 150 (full text) at the
    reference size and the caller sees 300 chunks; the estimate is set as a million-chunk corpus would leave it (inside a
    transaction rolled back after). Every choice is logged, and the full-text branch finds the
    same chunks whichever way it reads them."""
    url, _ = index_db
    monkeypatch.setattr(store.search, "EXACT_MAX_ROWS", 100)
    monkeypatch.setattr(store.bm25, "BY_VERSION_MAX_CHUNKS", 150)
    caller = [f"g{i}" for i in range(5)]  # 5 of 50 groups: 300 chunks
    reference = store.direct_read.REFERENCE_CHUNKS
    expected = {  # corpus estimate -> (vector strategy, its limit, full-text candidates)
        3_000: ("index", 100, "index"),
        4 * reference: ("index", 200, "by version"),
        16 * reference: ("exact", 400, "by version"),
    }
    fulltext_hits = []
    with database.connect(url) as conn:
        for corpus, (strategy, limit, candidates) in expected.items():
            with conn.transaction(force_rollback=True):
                conn.execute("UPDATE pg_class SET reltuples = %s WHERE oid = 'chunks'::regclass", (corpus,))
                assert store.direct_read.corpus_chunks(conn) == corpus
                in_sql = conn.execute(f"SELECT {store.direct_read.limit_sql('%(f)s', 'vector')},"
                                      f" {store.direct_read.limit_sql('%(f)s', 'fulltext')}", {"f": 100}).fetchone()
                assert in_sql == (limit, store.direct_read.limit(100, corpus, "fulltext"))  # the SQL twin agrees
                hits = retrieval.search(conn, embedder, "chunk 7 3", caller, k=10)
                logged = store.search_log.logged_search(conn, hits.log_id)["strategy"]
                assert (logged["strategy"], logged["exact_max_rows"]) == (strategy, limit)
                assert logged["fulltext"]["candidates"] == candidates
                found = retrieval.search(conn, embedder, "chunk 7 3", caller, k=10, mode="fulltext", log=False)
                fulltext_hits.append([(h.chunk_id, h.branches["fulltext"]["score"]) for h in found])
    assert all(hits == fulltext_hits[0] for hits in fulltext_hits) and len(fulltext_hits[0]) == 10


def test_the_limits_grow_from_their_floors_at_the_reference_size() -> None:
    direct_read = store.direct_read
    reference = direct_read.REFERENCE_CHUNKS
    for corpus in (-1, 0, 50, reference):  # unknown (never analysed) or small: the floors
        assert direct_read.limit(5_000, corpus, "vector") == direct_read.limit(5_000, corpus, "fulltext") == 5_000
    assert direct_read.limit(5_000, 100 * reference, "vector") == 50_000
    assert direct_read.limit(8_000, 100 * reference, "fulltext") == 80_000
    assert direct_read.limit(0, 100 * reference, "vector") == 0  # a floor of 0 always walks the index
    with pytest.raises(KeyError):
        direct_read.limit(5_000, reference, "sections")


def test_the_estimate_of_a_past_or_preview_view_is_the_count_of_its_chunks(db_url: str, embedder) -> None:
    """Outside the live index the search's prepare estimates the vector branch's rows by version
    (each version's last ordinal, summed until past the limit) rather than by reading every
    chunk: for any caller, any view (as of a time between runs, before the first, now; a run's
    preview) and any limit, as the reader role, it must equal plan_vector's count of the chunks
    themselves, rewritten versions, tombstones, an empty document, a document the real chunker
    numbered and strangers' groups included."""
    rng = np.random.default_rng(5)

    def stage(run: str, n: int, size: int) -> None:
        chunks = [{"ord": i, "section_path": ["S"], "char_start": 0, "char_end": 5, "token_count": 2,
                   "content_hash": f"{run}-{n}-{i}", "text": f"chunk {n}-{i}", "search_text": f"chunk {n} {i}"}
                  for i in range(size)]
        fields = {"checksum": f"{run}-{n}", "acl_groups": ["all-staff", f"g{n % 3}"], "model_id": model_id}
        store.versions.stage_content_version(conn, run, "synthetic", f"doc-{n}.md", fields, chunks,
                                             unit_vectors(rng, size) if size else np.zeros((0, 384), np.float32))

    with database.connect(db_url) as conn:
        model_id = store.models.register_model(conn, embedder.identity.to_dict())
        for run, sizes in (("r1", {n: 7 for n in range(30)} | {30: 0}), ("r2", {n: 3 for n in range(10)}),
                           ("r3", {n: 11 for n in range(10, 14)})):
            store.runs.create_run(conn, run, ["synthetic"], model_id)
            for n, size in sizes.items():
                stage(run, n, size)
            if run == "r2":
                for n in range(20, 25):
                    store.versions.stage_tombstone(conn, run, "synthetic", f"doc-{n}.md")
            if run != "r3":  # r3 stays staged: the preview
                store.runs.update_run(conn, run, gate_passed=True)
                store.versions.publish(conn, run)
            if run == "r1":
                between = conn.execute("SELECT now()").fetchone()[0]
    # and chunks numbered by the chunker itself, not by this test: the estimate reads their ordinals
    sections = " ".join(f"Rule {i}: claims for trip {i} are filed within {i + 2} days with receipts." for i in range(400))
    index_documents(db_url, embedder, {"handbook.md": ("Travel handbook", sections)}, "g1")
    with database.connect(db_url) as conn:
        ords = [r[0] for r in conn.execute("SELECT c.ord FROM chunks c JOIN documents d ON d.uri = 'handbook.md'"
                                           " JOIN document_versions v ON v.document_id = d.id AND v.id = c.version_id"
                                           " ORDER BY c.ord")]
    assert len(ords) > 5 and ords == list(range(len(ords))), ords
    views = [store.search.View(as_of=between), store.search.View(as_of=FAR_PAST), store.search.View(as_of=FAR_FUTURE),
             store.search.View(preview_run="r3")]
    callers = [["all-staff"], ["g0"], ["g1", "g2"], [*(f"stranger-{i}" for i in range(2_000)), "g2"], ["nobody"]]
    compared = set()
    with database.connect_as(db_url, store.roles.READER) as conn:
        for groups in callers:
            for view in views:
                for limit in (5, 40, 150, 10_000):
                    with conn.transaction():
                        store.search_log.set_session_groups(conn, groups)
                        prepared = store.search_prepare.prepare(conn, "chunk", groups, view, exact_max_rows=limit)
                        counted = store.search.plan_vector(conn, groups, model_id, view, exact_max_rows=limit)
                    if prepared.plan is None:  # no version of the view: no model, nothing to search
                        assert counted.estimate == 0, (groups, view, limit)
                        continue
                    assert (prepared.plan.estimate, prepared.plan.strategy) == (counted.estimate, counted.strategy), \
                        (groups, view, limit)
                    compared.add((counted.estimate > limit, counted.estimate))
    assert len(compared) > 8 and {capped for capped, _ in compared} == {True, False}, compared  # both sides of every limit

"""Full-text ranking from statistics kept at publish (store/bm25.py, migration 015): the same
top list and scores as BM25 computed exactly, here in Python, from a recount of the live chunks
the caller may see; bounded candidates that stay exact when only common terms are asked (the widening);
the view (live, as of a time, a run's preview) and the caller's groups inside the candidate query;
statistics that equal a recount after publish, supersede, tombstone and an access change, and
that tell a caller nothing about chunks it may not read.

The corpus is 160 SciFact abstracts from the shared corpus, split into chunks of a few sentences,
with random vectors (the full-text branch never reads them); even documents are in group `a`,
odd ones in `b`."""

from __future__ import annotations

import json
import math
import random
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path

import numpy as np
import pytest
from conftest import CORPUS, fresh_database

from rag_pipeline import store
from rag_pipeline.store import bm25, bm25_stats, database
from rag_pipeline.store.search import View

DOCS = 160
QUERIES = [
    "white matter diffusion in newborn brain",  # rare and common terms
    "cells",  # one common term
    "patients study results increased risk",  # common terms only: the bound cannot hold at first
    "zzyzxqv cells",  # a term no chunk holds
    "zzyzxqv",  # nothing but that term
    "tumour suppressor gene expression mouse model",
]


def _abstracts() -> list[tuple[str, str]]:
    with (Path(CORPUS) / "qa" / "scifact_beir" / "corpus.jsonl").open(encoding="utf-8") as f:
        rows = [json.loads(line) for _, line in zip(range(DOCS), f, strict=False)]
    return [(r["title"], r["text"]) for r in rows]


def _chunks(title: str, text: str, salt: str = "") -> list[dict]:
    sentences = [s for s in (title + ". " + text).split(". ") if s]
    parts = [". ".join(sentences[i:i + 3]) for i in range(0, len(sentences), 3)]
    return [{"ord": i, "section_path": [], "char_start": 0, "char_end": len(p), "token_count": len(p.split()),
             "content_hash": f"{salt}{hash(p)}", "text": p, "search_text": p} for i, p in enumerate(parts)]


def _stage(conn, run: str, model_id: int, uri: str, group: str, chunks: list[dict], rng) -> None:
    fields = {"checksum": uri + run, "acl_groups": [group], "model_id": model_id, "language": "en"}
    vectors = rng.standard_normal((len(chunks), 384)).astype(np.float32)
    store.versions.stage_content_version(conn, run, "sci", uri, fields, chunks, vectors)


@pytest.fixture(scope="module")
def corpus(pg_server_url: str, embedder) -> Iterator[dict]:
    """r1 publishes every abstract; r2 rewrites docs 0-19 and tombstones 20-29 (published: t1 is
    the instant between); r3 stages rewrites of 30-39 and is left unpublished (the preview)."""
    rng = np.random.default_rng(3)
    abstracts = _abstracts()
    with fresh_database(pg_server_url) as url, database.connect(url) as conn:
        model_id = store.models.register_model(conn, embedder.identity.to_dict())
        store.runs.create_run(conn, "r1", ["sci"], model_id)
        for n, (title, text) in enumerate(abstracts):
            _stage(conn, "r1", model_id, f"doc-{n}", "ab"[n % 2], _chunks(title, text), rng)
        store.versions.publish(conn, "r1")
        t1 = conn.execute("SELECT now()").fetchone()[0]
        store.runs.create_run(conn, "r2", ["sci"], model_id)
        for n in range(20):
            title, text = abstracts[n]
            _stage(conn, "r2", model_id, f"doc-{n}", "ab"[n % 2], _chunks(title, text + " Cells cells zzrevised.", "r2"), rng)
        for n in range(20, 30):
            store.versions.stage_tombstone(conn, "r2", "sci", f"doc-{n}")
        store.versions.publish(conn, "r2")
        store.runs.create_run(conn, "r3", ["sci"], model_id)
        for n in range(30, 40):
            _stage(conn, "r3", model_id, f"doc-{n}", "ab"[n % 2], _chunks("Preview zzpreview", "Patients with cells."), rng)
        yield {"url": url, "model_id": model_id, "t1": t1}


def _visible(view: View) -> str:
    """The view's versions, written independently of store/search.py."""
    if view.preview_run is not None:
        return ("((v.status = 'live' AND v.document_id NOT IN (SELECT document_id FROM document_versions"
                " WHERE run_id = %(run)s AND status = 'staged')) OR (v.status = 'staged' AND v.run_id = %(run)s))")
    if view.as_of is not None:
        return "v.valid_from <= %(at)s AND (v.valid_to IS NULL OR v.valid_to > %(at)s) AND v.status <> 'tombstoned'"
    return "v.status = 'live'"


def visible_stats(conn, groups: list[str]) -> tuple[int, dict[tuple[str, str], int]]:
    """Live chunks the groups may see and df per (configuration, lexeme) over them, counted from
    the chunks (not from the kept statistics)."""
    n, df = bm25_stats.recount(conn)
    seen = set(groups)
    total: dict[tuple[str, str], int] = {}
    for (acl, cfg, lexeme), count in df.items():
        if seen & set(acl):
            total[(cfg, lexeme)] = total.get((cfg, lexeme), 0) + count
    return sum(c for (acl, _), c in n.items() if seen & set(acl)), total


def per_set(counts: dict) -> dict[tuple[str, ...], int]:
    """Live chunks per access set, over every configuration."""
    found: dict[tuple[str, ...], int] = {}
    for (acl, _), n in counts.items():
        found[acl] = found.get(acl, 0) + n
    return found


def reference(conn, query: str, groups: list[str], view: View, k: int) -> list[tuple[int, float]]:
    """Exact BM25 in Python: idf from a recount of the live chunks the groups may see, tf from the
    tsvector's positions, the chunk's token count against the fixed pivot; ties by id."""
    n, df = visible_stats(conn, groups)
    terms = {(r[0], r[1]) for r in conn.execute(
        "SELECT DISTINCT c::text, u.lexeme FROM (SELECT DISTINCT ts_config AS c FROM chunks) s,"
        " unnest(to_tsvector(s.c, %s)) u", (query,))}
    found = conn.execute(
        "SELECT c.id, c.ts_config::text, c.token_count, u.lexeme, coalesce(array_length(u.positions, 1), 1)"
        " FROM chunks c JOIN document_versions v ON v.id = c.version_id, unnest(c.tsv) u"
        f" WHERE v.kind = 'content' AND v.acl_groups && %(groups)s AND {_visible(view)}",
        {"groups": groups, "run": view.preview_run, "at": view.as_of}).fetchall()
    scores: dict[int, float] = {}
    k1, b, pivot = bm25.BM25_K1, bm25.BM25_B, bm25.PIVOT
    for chunk_id, cfg, dl, lexeme, tf in found:
        if (cfg, lexeme) in terms:
            idf = math.log(1 + (n - df.get((cfg, lexeme), 0) + 0.5) / (df.get((cfg, lexeme), 0) + 0.5))
            scores[chunk_id] = scores.get(chunk_id, 0.0) + idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * dl / pivot))
    return sorted(scores.items(), key=lambda s: (-s[1], s[0]))[:k]


def fulltext(conn, corpus: dict, query: str, groups: list[str], view: View = View(), k: int = 10,
             candidates: int = 50) -> list[dict]:
    vector = np.ones(384, dtype=np.float32) / math.sqrt(384)
    return store.search.search_chunks(conn, vector, query, groups, corpus["model_id"], k, view,
                                      candidates=candidates, mode="fulltext")


def assert_same(found: list[dict], expected: list[tuple[int, float]]) -> None:
    assert [r["chunk_id"] for r in found] == [i for i, _ in expected]
    for r, (_, score) in zip(found, expected, strict=True):
        assert abs(r["fulltext_score"] - score) <= 1e-6


@pytest.mark.parametrize("query", QUERIES)
@pytest.mark.parametrize("groups", [["a", "b"], ["a"]])
@pytest.mark.parametrize("shape", ["by version", "by index"])
def test_the_top_list_and_scores_are_exact_bm25(corpus: dict, query: str, groups: list[str], shape: str,
                                                 monkeypatch) -> None:
    """Both shapes of the candidate query (few visible chunks read by version; otherwise the GIN
    index's matches, each version checked) give exactly BM25's list."""
    if shape == "by index":
        monkeypatch.setattr(bm25, "BY_VERSION_MAX_CHUNKS", 0)
    with database.connect(corpus["url"]) as conn:
        for k, candidates in ((10, 50), (10, 10), (3, 3)):
            found = fulltext(conn, corpus, query, groups, k=k, candidates=candidates)
            assert_same(found, reference(conn, query, groups, View(), k))
            assert all(r["fulltext_plan"]["exact"] for r in found)


def test_common_terms_only_widen_the_candidates_and_stay_exact(corpus: dict, monkeypatch) -> None:
    """Whatever the row budget, the list is either proven exact (and is) or says it is not, and
    the rows it read stay within the budget. Common words alone are answered in one try with the
    whole budget; a tight budget takes more tries (a threshold on the common words' bounds, or
    more of them together, more taken)."""
    query = QUERIES[2]
    with database.connect(corpus["url"]) as conn:
        terms, _ = bm25.query_terms(conn, query, ["english"], ["a"])
        total = sum(t.df for t in terms)
        expected = reference(conn, query, ["a"], View(), 10)
        tries = {}
        for budget in (total, int(total * 0.55), int(total * 0.3), int(total * 0.1), 40, 20):
            monkeypatch.setattr(bm25, "ROW_BUDGET", budget)
            found = fulltext(conn, corpus, query, ["a"])
            plan = found[0]["fulltext_plan"]
            assert plan["matched"] <= budget + 1  # one row past the budget tells an overflow
            tries[budget] = plan["tries"]
            if plan["exact"]:
                assert_same(found, expected)
            else:
                assert plan["exact_depth"] < 10
        assert tries[total] == 1 and tries[20] > 1
        monkeypatch.setattr(bm25, "ROW_BUDGET", 1)  # too small for any proof: said so, never hidden
        plan = fulltext(conn, corpus, query, ["a"])[0]["fulltext_plan"]
        assert plan["exact"] is False


def test_rare_terms_need_few_rows(corpus: dict) -> None:
    with database.connect(corpus["url"]) as conn:
        plan = fulltext(conn, corpus, "zzyzxqv anisotropy diffusion tensor", ["a", "b"])[0]["fulltext_plan"]
        total = conn.execute("SELECT count(*) FROM chunks").fetchone()[0]
    assert plan["exact"] and plan["matched"] < total / 4


@pytest.mark.parametrize("shape", ["by version", "by index"])
def test_as_of_and_preview_see_exactly_their_versions(corpus: dict, shape: str, monkeypatch) -> None:
    if shape == "by index":
        monkeypatch.setattr(bm25, "BY_VERSION_MAX_CHUNKS", 0)
    with database.connect(corpus["url"]) as conn:
        for view in (View(as_of=corpus["t1"]), View(preview_run="r3"), View(as_of=datetime.now(corpus["t1"].tzinfo))):
            for query in ("cells zzrevised", "patients cells zzpreview", QUERIES[0]):
                found = fulltext(conn, corpus, query, ["a", "b"], view)
                assert_same(found, reference(conn, query, ["a", "b"], view, 10))
        live = [r["text"] for r in fulltext(conn, corpus, "zzpreview", ["a", "b"])]
        preview = [r["text"] for r in fulltext(conn, corpus, "zzpreview", ["a", "b"], View(preview_run="r3"))]
        before = [r["text"] for r in fulltext(conn, corpus, "zzrevised", ["a", "b"], View(as_of=corpus["t1"]))]
    assert live == [] and len(preview) == 10 and before == []


@pytest.mark.parametrize("shape", ["by version", "by index"])
def test_as_of_and_preview_lists_stay_exact_through_threshold_tries(corpus: dict, shape: str, monkeypatch) -> None:
    """Squeezed budgets send as-of and preview searches through a try aimed by a threshold, whose
    bounds are the loose ones (k1 + 1: superseded and staged chunks have no kept maximum): their
    lists are still exactly their view's BM25 or say they are not."""
    if shape == "by index":
        monkeypatch.setattr(bm25, "BY_VERSION_MAX_CHUNKS", 0)
    monkeypatch.setattr(bm25, "FIRST_ROWS", 5)
    monkeypatch.setattr(bm25, "ROW_BUDGET", 200)
    plans = []
    with database.connect(corpus["url"]) as conn:
        for view in (View(as_of=corpus["t1"]), View(preview_run="r3")):
            for query in ("cells zzrevised patients", "patients cells zzpreview", *QUERIES):
                found = fulltext(conn, corpus, query, ["a", "b"], view)
                plan = found[0]["fulltext_plan"] if found else {}
                plans.append(plan)
                if plan.get("exact"):
                    assert_same(found, reference(conn, query, ["a", "b"], view, 10))
                else:
                    assert found == [] or plan["exact_depth"] < 10
    assert any(p.get("threshold") and p["exact"] for p in plans), plans


@pytest.mark.parametrize("shape", ["by version", "by index"])
def test_a_chunk_of_another_group_never_enters_the_candidates(corpus: dict, shape: str, monkeypatch) -> None:
    if shape == "by index":
        monkeypatch.setattr(bm25, "BY_VERSION_MAX_CHUNKS", 0)
    with database.connect(corpus["url"]) as conn:
        found = fulltext(conn, corpus, "cells", ["a"])
        assert found and all("a" in r["acl_groups"] for r in found)
        matching = conn.execute(
            "SELECT count(*) FROM chunks c JOIN document_versions v ON v.id = c.version_id"
            " WHERE v.status = 'live' AND c.tsv @@ 'cell'::tsquery AND v.acl_groups && '{a}'").fetchone()[0]
        assert found[0]["fulltext_plan"]["matched"] == matching  # the group was inside the query
        assert fulltext(conn, corpus, "cells", ["nobody"]) == []
        # as the reader role, under row-level security: the same rows
        store.roles.assume(conn, store.roles.READER)
        with conn.transaction():
            store.search_log.set_session_groups(conn, ["a"])
            as_reader = fulltext(conn, corpus, "cells", ["a"])
    assert [(r["chunk_id"], r["fulltext_score"]) for r in as_reader] == [(r["chunk_id"], r["fulltext_score"]) for r in found]


def test_hostile_query_text_is_only_ever_lexemes(corpus: dict) -> None:
    rnd = random.Random(5)
    noise = ["'", "\\", "\\'", "''", "&", "|", "!", "<->", ":*", "(", ")", '"', "a:b", "%s", "%(x)s", "--", ";"]
    words = [rnd.choice(noise) + "".join(rnd.choices("abcdefghij", k=6)) + rnd.choice(noise) for _ in range(10_000)]
    query = " ".join(words + ["cells", "diffusion", "it's", "back\\slash"])
    with database.connect(corpus["url"]) as conn:
        found = fulltext(conn, corpus, query, ["a", "b"])
        assert_same(found, reference(conn, query, ["a", "b"], View(), 10))
        assert found[0]["fulltext_plan"]["exact"]
    from rag_pipeline.retrieval import search as retrieval

    with pytest.raises(retrieval.QueryError, match="NUL"):  # NUL never reaches SQL
        retrieval.check_request("cells\x00", ["a"], None)


def test_statistics_equal_a_recount_after_publish_supersede_tombstone_and_an_access_change(corpus: dict) -> None:
    with database.connect(corpus["url"]) as conn:
        assert bm25_stats.kept(conn) == bm25_stats.recount(conn)
        # every term's kept max weight bounds its weight in every live chunk of its access set
        over = conn.execute(
            "SELECT count(*) FROM chunks c JOIN document_versions v ON v.id = c.version_id, unnest(c.tsv) u,"
            " fts_acl_terms t WHERE v.status = 'live' AND t.acl_groups = v.acl_groups AND t.ts_config = c.ts_config"
            " AND t.lexeme = u.lexeme AND rag_bm25_tf(coalesce(array_length(u.positions, 1), 1), c.token_count)"
            " > t.max_weight * (1 + 1e-9)").fetchone()[0]
        assert over == 0
        # an access change moves the document's chunks from one set to the other
        before_n = per_set(bm25_stats.kept(conn)[0])
        moved = conn.execute("SELECT count(*) FROM chunks c JOIN document_versions v ON v.id = c.version_id"
                             " JOIN documents d ON d.id = v.document_id WHERE d.uri = 'doc-50' AND v.status = 'live'").fetchone()[0]
        store.runs.create_run(conn, "r4", ["sci"], corpus["model_id"])
        assert store.versions.stage_acl_version(conn, "r4", "sci", "doc-50", ["a", "b"])
        store.versions.publish(conn, "r4")
        after_n = per_set(bm25_stats.kept(conn)[0])
        assert bm25_stats.kept(conn) == bm25_stats.recount(conn)
        assert after_n[("a",)] == before_n[("a",)] - moved and after_n[("a", "b")] == moved


def test_a_caller_learns_no_statistic_of_chunks_it_may_not_read(corpus: dict) -> None:
    """A word that only group b's documents hold has df 0 for a caller in a, through the search
    and as the reader role reading the statistics directly: its frequency tells nothing about
    b's documents. The count of chunks behind idf is the caller's too."""
    with database.connect(corpus["url"]) as conn:
        secret = conn.execute(  # a lexeme held by b's live chunks only
            "SELECT u.lexeme FROM chunks c JOIN document_versions v ON v.id = c.version_id, unnest(c.tsv) u"
            " WHERE v.status = 'live' GROUP BY 1 HAVING bool_and(v.acl_groups = '{b}') ORDER BY count(*) DESC LIMIT 1"
        ).fetchone()[0]
        as_a, n_a = bm25.query_terms(conn, secret, ["english"], ["a"])
        as_both, n_both = bm25.query_terms(conn, secret, ["english"], ["a", "b"])
        assert as_a[0].df == 0 and as_both[0].df > 0
        assert n_a == visible_stats(conn, ["a"])[0] < n_both == visible_stats(conn, ["a", "b"])[0]
        assert fulltext(conn, corpus, secret, ["a"]) == []
        store.roles.assume(conn, store.roles.READER)
        with conn.transaction():
            store.search_log.set_session_groups(conn, ["a"])
            assert conn.execute("SELECT count(*) FROM fts_acl_terms WHERE lexeme = %s", (secret,)).fetchone()[0] == 0
            sets = {tuple(r[0]) for r in conn.execute("SELECT acl_groups FROM fts_acl_corpus")}
            assert sets and all("a" in s for s in sets)
            # the reader's own query reads the same statistics the superuser's filter gives
            assert bm25.query_terms(conn, secret + " cells", ["english"], ["a"]) == \
                bm25.query_terms(conn, secret + " cells", ["english"], ["a", "b"])
        with conn.transaction():
            store.search_log.set_session_groups(conn, [])
            assert conn.execute("SELECT count(*) FROM fts_acl_terms").fetchone()[0] == 0


def test_chunks_stay_append_only_and_their_weights_are_their_own(corpus: dict) -> None:
    import psycopg

    with database.connect(corpus["url"]) as conn:
        with pytest.raises(psycopg.errors.RestrictViolation), conn.transaction():
            conn.execute("UPDATE chunks SET text = 'x' WHERE id = 1")
        with pytest.raises(psycopg.errors.GeneratedAlways), conn.transaction():
            conn.execute("UPDATE chunks SET bm25 = NULL WHERE id = 1")
        # the weights are the chunk's own: computed from its tsvector and length, nothing else
        same = conn.execute("SELECT bool_and(bm25 = rag_bm25_weights(tsv, token_count)) FROM chunks").fetchone()[0]
        assert same
        k1_plus_1, at_pivot = conn.execute("SELECT rag_bm25_tf(1e12, 1), rag_bm25_tf(1, %s)", (bm25.PIVOT,)).fetchone()
        assert k1_plus_1 == pytest.approx(bm25.BM25_K1 + 1)  # the SQL and the bound's constants agree
        assert at_pivot == pytest.approx((bm25.BM25_K1 + 1) / (1 + bm25.BM25_K1))


def test_the_search_log_records_how_the_fulltext_branch_ran(corpus: dict, embedder) -> None:
    from rag_pipeline.retrieval import search as retrieval

    with database.connect(corpus["url"]) as conn:
        hits = retrieval.search(conn, embedder, "white matter diffusion", ["a", "b"], k=5, mode="hybrid")
        logged = store.search_log.logged_search(conn, hits.log_id)["strategy"]
    assert logged["fulltext"]["exact"] is True and "diffus" in logged["fulltext"]["taken_terms"]


def test_the_migration_backfills_an_existing_index(pg_server_url: str, tmp_path: Path) -> None:
    """An index written before migration 015 (chunks without weights, no statistics) gets its
    weights and per-access-set statistics from the migration, and searches exactly."""
    import shutil

    old = tmp_path / "sql"
    shutil.copytree(store.migrations.sql_dir(), old)
    for later in (old / "migrations").glob("*.sql"):
        if later.name >= "015":
            later.unlink()
    (old / "views.sql").write_text("")  # today's views read tables of later migrations
    abstracts = _abstracts()[:40]
    import uuid

    import psycopg
    from psycopg.conninfo import conninfo_to_dict, make_conninfo

    name = "rp_test_" + uuid.uuid4().hex[:12]
    url = make_conninfo(**{**conninfo_to_dict(pg_server_url), "dbname": name})
    with psycopg.connect(pg_server_url, autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
        try:
            with database.connect(url) as conn:
                store.migrations.migrate(conn, old)
                conn.execute("INSERT INTO embedding_models (name, revision, weights_sha256, dimension, normalized, max_tokens)"
                             " VALUES ('m', 'r', 'x', 3, true, 256)")
                conn.execute("INSERT INTO runs (run_id, sources, status, model_id) VALUES ('old', '{sci}', 'published', 1)")
                for n, (title, text) in enumerate(abstracts):
                    conn.execute("INSERT INTO documents (id, source, uri) VALUES (%s, 'sci', %s)", (n + 1, f"doc-{n}"))
                    status = "staged" if n >= 35 else "live"
                    conn.execute("INSERT INTO document_versions (id, document_id, version_no, kind, status, checksum,"
                                 " acl_groups, model_id, run_id, valid_from) VALUES (%s, %s, 1, 'content', %s, 'c', '{a}', 1, 'old',"
                                 " CASE WHEN %s = 'live' THEN now() END)", (n + 1, n + 1, status, status))
                    for c in _chunks(title, text):
                        conn.execute("INSERT INTO chunks (version_id, ord, char_start, char_end, token_count, content_hash,"
                                     " text, model_id, embedding, ts_config, tsv) VALUES (%s, %s, 0, 1, %s, 'h', %s, 1,"
                                     " '[1,0,0]', 'english', to_tsvector('english', %s))",
                                     (n + 1, c["ord"], c["token_count"], c["text"], c["text"]))
                store.migrations.migrate(conn)
            with database.connect(url) as conn:  # pgvector's types, registered at connect
                assert bm25_stats.kept(conn) == bm25_stats.recount(conn)
                assert bm25_stats.kept(conn)[0] == {(("a",), "english"): sum(len(_chunks(*a)) for a in abstracts[:35])}
                assert conn.execute("SELECT count(*) FROM chunks WHERE bm25 IS NULL").fetchone()[0] == 0
                vector = np.ones(3, dtype=np.float32)
                found = store.search.search_chunks(conn, vector, QUERIES[0], ["a"], 1, 10, mode="fulltext")
                assert found
                assert_same(found, reference(conn, QUERIES[0], ["a"], View(), 10))
        finally:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.mark.parametrize("mode", ["vector", "fulltext", "hybrid"])
def test_term_coverage_is_the_share_of_the_query_idf_in_every_mode(corpus: dict, mode: str) -> None:
    query = "white matter diffusion zzyzxqv"  # one term no chunk holds: it counts in the whole
    with database.connect(corpus["url"]) as conn:
        n, df = visible_stats(conn, ["a", "b"])
        terms = [r[0] for r in conn.execute("SELECT DISTINCT u.lexeme FROM unnest(to_tsvector('english', %s)) u", (query,))]
        idf = {t: math.log(1 + (n - df.get(("english", t), 0) + 0.5) / (df.get(("english", t), 0) + 0.5)) for t in terms}
        vector = np.ones(384, dtype=np.float32) / math.sqrt(384)
        found = store.search.search_chunks(conn, vector, query, ["a", "b"], corpus["model_id"], 10, mode=mode)
        assert found
        for r in found:
            held = {x[0] for x in conn.execute("SELECT u.lexeme FROM chunks c, unnest(c.tsv) u WHERE c.id = %s",
                                               (r["chunk_id"],))}
            expected = sum(v for t, v in idf.items() if t in held) / sum(idf.values())
            assert r["term_coverage"] == pytest.approx(expected, abs=1e-9)
        assert mode == "vector" or found[0]["term_coverage"] > 0


def test_a_rebuild_from_scratch_equals_what_publish_kept(corpus: dict) -> None:
    with database.connect(corpus["url"]) as conn:
        before = bm25_stats.kept(conn)
        with conn.transaction():
            conn.execute("UPDATE fts_acl_terms SET df = df + 7")  # statistics gone wrong
            assert bm25_stats.kept(conn) != bm25_stats.recount(conn)
            bm25_stats.rebuild(conn)
        assert bm25_stats.kept(conn) == bm25_stats.recount(conn) == before


def test_a_terms_coverage_query_matches_exactly_the_chunks_holding_its_lexeme(pg_server_url: str) -> None:
    """Term coverage tests each query term's tsquery against a chunk's tsvector (idf_params'
    `s_q`): a lexeme holding tsquery syntax (quotes, backslashes, `:*`, `|`, `&`, `!`, `<->`,
    parentheses) must match the chunks holding it and no other, never be parsed as operators."""
    texts = ["http://example.com/a'b?x=1:2*3|4 O'Neil's C:\\temp\\x a:*b foo|bar x&y !not <-> (paren)",
             "see example.com/a'b?x=1:2*3 and https://a.b/c:d*e", "it''s \\\\ :* |& ! () plain words only",
             "Ünïcödé ʼapostropheʼ 10-K 800-53 s.2155 ½ ∞ /a'b?x=1:2*3"]
    with database.connect(pg_server_url) as conn:
        for cfg in ("simple", "english"):
            vectors = [conn.execute("SELECT to_tsvector(%s::regconfig, %s)", (cfg, t)).fetchone()[0] for t in texts]
            lexemes = sorted({r[0] for t in texts for r in conn.execute(
                "SELECT u.lexeme FROM unnest(to_tsvector(%s::regconfig, %s)) u", (cfg, t))})
            assert any("'" in x and ":" in x and "*" in x for x in lexemes), lexemes  # URL parts hold them
            for lexeme in lexemes:
                (query,) = bm25.idf_params([bm25.Term(cfg, lexeme, 0, 1, 1.0, 1.0)])["s_q"]
                for text, tsv in zip(texts, vectors, strict=True):
                    matched, held = conn.execute(
                        "SELECT %s::tsvector @@ %s::tsquery, %s = ANY(tsvector_to_array(%s::tsvector))",
                        (tsv, query, lexeme, tsv)).fetchone()
                    assert matched == held, (cfg, lexeme, text)

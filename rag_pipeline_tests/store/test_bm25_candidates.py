"""The full-text branch's candidate query (store/bm25.py, store/bm25_match.py): "any taken term, or at least m of the
common ones" as one tsquery per common term in one bitmap index scan. Its matches are exactly
the chunks holding that many of the terms, and the list it ranks is exactly BM25's (an
independent computation in Python, test_bm25.reference) on a corpus built to be awkward: a term in
every chunk, common words at many frequencies, rare words, whole chunks repeated (tied scores,
ordered by id), two text-search configurations (English and German documents), two groups.
Budgets are squeezed so that every shape of the candidate query runs: rare terms alone, rare
terms with common ones over a threshold or m of them together, several tries, and overflows that
must say they are not exact."""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Iterator

import numpy as np
import pytest
from conftest import fresh_database
from helpers import explained, plan_nodes

from rag_pipeline import store
from rag_pipeline.store import bm25, bm25_match, database
from rag_pipeline.store.search import View
from rag_pipeline_tests.store.test_bm25 import assert_same, reference

COMMON = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel"]
SHARE = [0.6, 0.5, 0.4, 0.35, 0.3, 0.25, 0.2, 0.15]  # of the chunks holding each common word
FILLER = ["river", "stone", "window", "garden", "music", "paper", "cloud", "bridge", "market", "forest"]
DOCS = 160


def _rare(rnd: random.Random) -> list[str]:
    return ["".join(rnd.choices("bcdfgklmnprstvz", k=7)) for _ in range(40)]


def _texts(rnd: random.Random, rare: list[str]) -> list[str]:
    """Two chunks per document; every chunk holds `omnipresent`; every tenth document repeats the
    previous document's text word for word (tied scores)."""
    found: list[str] = []
    for n in range(DOCS):
        if n % 10 == 9:
            found += found[-2:]
            continue
        for _ in range(2):
            words = ["omnipresent"] * rnd.randint(1, 2) + rnd.choices(FILLER, k=rnd.randint(5, 40))
            for word, share in zip(COMMON, SHARE, strict=True):
                if rnd.random() < share:
                    words += [word] * rnd.randint(1, 3)
            if rnd.random() < 0.3:
                words += rnd.sample(rare, rnd.randint(1, 2))
            rnd.shuffle(words)
            found.append(" ".join(words))
    return found


@pytest.fixture(scope="module")
def corpus(pg_server_url: str, embedder) -> Iterator[dict]:
    rnd, rng = random.Random(11), np.random.default_rng(11)
    rare = _rare(rnd)
    texts = _texts(rnd, rare)
    with fresh_database(pg_server_url) as url, database.connect(url) as conn:
        model_id = store.models.register_model(conn, embedder.identity.to_dict())
        store.runs.create_run(conn, "r1", ["t"], model_id)
        for n in range(DOCS):
            parts = texts[2 * n:2 * n + 2]
            chunks = [{"ord": i, "section_path": [], "char_start": 0, "char_end": len(p), "token_count": len(p.split()),
                       "content_hash": f"{n}-{i}", "text": p, "search_text": p} for i, p in enumerate(parts)]
            fields = {"checksum": f"c{n}", "acl_groups": ["ab"[n % 2]], "model_id": model_id,
                      "language": "de" if n % 4 >= 2 else "en"}
            vectors = rng.standard_normal((len(chunks), 384)).astype(np.float32)
            store.versions.stage_content_version(conn, "r1", "t", f"doc-{n}", fields, chunks, vectors)
        store.versions.publish(conn, "r1")
        assert {r[0] for r in conn.execute("SELECT DISTINCT ts_config::text FROM chunks")} == {"english", "german"}
        yield {"url": url, "model_id": model_id, "rare": rare}


def _fulltext(conn, corpus: dict, query: str, groups: list[str], k: int = 10) -> list[dict]:
    vector = np.ones(384, dtype=np.float32) / math.sqrt(384)
    return store.search.search_chunks(conn, vector, query, groups, corpus["model_id"], k, mode="fulltext")


def _queries(corpus: dict) -> list[str]:
    rare = corpus["rare"]
    many = " ".join(COMMON + rare + [f"word{chr(97 + i % 26)}{chr(97 + i // 26)}x" for i in range(260)])
    return [
        "alpha bravo charlie delta echo foxtrot golf hotel",  # common words only
        "omnipresent",  # a term every chunk holds
        "omnipresent alpha",
        f"{rare[0]} {rare[1]} golf hotel omnipresent",  # rare and common
        f"{rare[2]} charlie",
        many,  # 300 distinct terms, most held by no chunk
        "the of and is to",  # stop words only: no lexeme, no candidate
        "",
        "alpha' | !bravo & (charlie <-> delta):* \\ %s %(x)s -- ;",  # hostile: only ever lexemes
    ]


@pytest.mark.parametrize("shape", ["by version", "by index"])
@pytest.mark.parametrize("squeeze", [None, (40, 400), (10, 150), (5, 60)])
def test_the_candidate_query_ranks_exactly_bm25(corpus: dict, shape: str, squeeze: tuple[int, int] | None,
                                               monkeypatch) -> None:
    """Default budgets (every term taken at once on this small corpus) and squeezed ones (first
    try of rare terms, then a threshold or m common ones together, more tries, overflows): the list is either
    proven exact and equal to the reference, ties ordered by id, or says it is not exact."""
    if shape == "by index":
        monkeypatch.setattr(bm25, "BY_VERSION_MAX_CHUNKS", 0)
    if squeeze is not None:
        monkeypatch.setattr(bm25, "FIRST_ROWS", squeeze[0])
        monkeypatch.setattr(bm25, "ROW_BUDGET", squeeze[1])
    proven, records = 0, []
    with database.connect(corpus["url"]) as conn:
        for query in _queries(corpus):
            for groups in (["a", "b"], ["a"]):
                found = _fulltext(conn, corpus, query, groups)
                expected = reference(conn, query, groups, View(), 10)
                if not expected:
                    assert found == []
                    continue
                plan = found[0]["fulltext_plan"]
                records.append(plan)
                assert plan["matched"] <= squeeze[1] + 1 if squeeze else True
                if plan["exact"]:
                    assert_same(found, expected)
                    proven += 1
                else:
                    assert plan["exact_depth"] < 10
                    scores = [r["fulltext_score"] for r in found]
                    assert scores == sorted(scores, reverse=True)  # the best of its candidates, exactly scored
    assert proven >= (14 if squeeze is None else 4)
    if squeeze is not None:  # the squeeze reached the candidate query's every shape
        assert any(r["tries"] > 1 for r in records) and any(r["at_least"] or r.get("threshold") for r in records)


def test_ties_are_ordered_by_id(corpus: dict) -> None:
    with database.connect(corpus["url"]) as conn:
        found = _fulltext(conn, corpus, "omnipresent", ["a", "b"], k=50)
    pairs = [(r["fulltext_score"], r["chunk_id"]) for r in found]
    tied = [(a, b) for a, b in zip(pairs, pairs[1:], strict=False) if a[0] == b[0]]
    assert tied and all(a[1] < b[1] for a, b in tied)


@pytest.mark.parametrize("at_least", [1, 2, 3, 4, 8])
def test_at_least_m_common_terms_matches_exactly_the_chunks_holding_m(corpus: dict, at_least: int) -> None:
    """The tsqueries of 'at least m of the common terms' (one per term, rarest first) match a
    chunk exactly when it holds m of them (counted in Python from its tsvector), per configuration."""
    with database.connect(corpus["url"]) as conn:
        terms, _ = bm25.query_terms(conn, " ".join(COMMON), None, ["a", "b"])
        common = sorted((t for t in terms if t.df > 0), key=lambda t: (t.df, t.cfg, t.lexeme))
        queries = bm25_match.match_queries([], common, at_least)
        for cfg, pieces in queries.items():
            lexemes = {t.lexeme for t in common if t.cfg == cfg}
            matched = {r[0] for r in conn.execute(
                "SELECT id FROM chunks WHERE ts_config = %s::regconfig AND tsv @@ ANY(%s::tsquery[])", (cfg, pieces))}
            held = {r[0] for r in conn.execute(
                "SELECT c.id FROM chunks c, unnest(c.tsv) u WHERE c.ts_config = %s::regconfig AND u.lexeme = ANY(%s)"
                " GROUP BY c.id HAVING count(*) >= %s", (cfg, list(lexemes), at_least))}
            assert matched == held and (held or at_least > 3)
            assert bm25_match.clause_leaves([t for t in common if t.cfg == cfg], at_least) == sum(p.count("'") // 2 for p in pieces)


def test_reader_and_superuser_get_the_same_list_and_no_other_groups_chunk(corpus: dict, monkeypatch) -> None:
    monkeypatch.setattr(bm25, "BY_VERSION_MAX_CHUNKS", 0)
    monkeypatch.setattr(bm25, "FIRST_ROWS", 10)
    monkeypatch.setattr(bm25, "ROW_BUDGET", 150)
    queries = _queries(corpus)[:6]
    with database.connect(corpus["url"]) as conn:
        as_superuser = [_fulltext(conn, corpus, q, ["a"]) for q in queries]
        store.roles.assume(conn, store.roles.READER)
        with conn.transaction():
            store.search_log.set_session_groups(conn, ["a"])
            as_reader = [_fulltext(conn, corpus, q, ["a"]) for q in queries]
    for mine, theirs in zip(as_reader, as_superuser, strict=True):
        assert [(r["chunk_id"], r["fulltext_score"], r["fulltext_plan"]) for r in mine] == \
               [(r["chunk_id"], r["fulltext_score"], r["fulltext_plan"]) for r in theirs]
        assert all(r["acl_groups"] == ["a"] for r in mine)


def test_a_view_without_live_chunks_still_plans_its_tries() -> None:
    """A preview of the first run (no live chunk yet: every df 0, the loose bound): every term is
    taken at once (no expected row count divides by the live chunks) and an empty match is an
    exact empty list."""
    terms = [bm25.Term("english", f"w{i}", i + 1, 0, 0.0, bm25.idf(0, 0)) for i in range(30)]
    ranking = bm25.Ranking(terms, 10, budget=bm25.ROW_BUDGET, loose_bound=True, live_chunks=0)
    params = ranking.params()
    assert params["q_cfg"] == ["english"] and params["q_cfg_0"] == "english" and params["q_or_0"]
    found = ranking.judge(0, [])
    assert found is not None and found.ids == [] and found.record["exact"] and found.record["taken"] == 30


@pytest.mark.parametrize("loose", [False, True])
def test_a_thousand_term_question_gets_an_aimed_try_it_can_run(loose: bool) -> None:
    """The longest question scored (MAX_QUERY_TERMS rare terms) whose first try failed: the
    aimed try is chosen among a thousand ways to take terms without trying every 'at least m'
    (a larger m would need too long a query), and it is one the statement can run: its bound is
    under the score reached, its tsqueries within MAX_LEAVES, its expected rows within the budget."""
    terms = [bm25.Term("english", f"w{i}", i + 1, 12, 1.5, bm25.idf(100_000, 12)) for i in range(bm25.MAX_QUERY_TERMS)]
    ranking = bm25.Ranking(terms, 50, budget=bm25.ROW_BUDGET, loose_bound=loose, live_chunks=100_000,
                           corpus_chunks=100_000)
    first = (ranking.taken, ranking.at_least)
    reached = 20.0 - 9 * 0.1
    assert ranking.judge(900, [(i, 20.0 - i * 0.1) for i in range(60)]) is None  # the bound failed: another try
    assert ranking.record["aimed"] == 1 and (ranking.taken, ranking.at_least) != first
    common = ranking.scored[ranking.taken:]
    assert ranking.threshold is None  # a question this long is aimed by 'at least m' alone (bm25_aim.THRESHOLD_TERMS)
    assert bm25._bound(common, ranking.at_least, loose) < reached
    assert ranking.at_least is None or bm25.clause_leaves(common, ranking.at_least) <= bm25.MAX_LEAVES
    params = ranking.params()
    assert sum(len(q) for q in params["q_or_0"]) > 0 and ranking.taken >= first[0]


def test_each_configurations_candidates_come_out_of_the_index_alone(corpus: dict, monkeypatch) -> None:
    """A broad caller's candidates are read from chunks_tsv with the configuration inside the index
    condition (migration 036), one scan per configuration of the try, as the reader: the index
    yields no chunk of another configuration to be fetched and thrown away (a lexeme rare among a
    caller's German chunks and common among the English ones cost 600 ms at 100,000 chunks,
    bench/README.md), and the list is still BM25's. A table this small is read through a btree
    (on the configuration, on the model) instead, cheaper here: those indexes are dropped for the
    statement's plan, in a transaction rolled back."""
    monkeypatch.setattr(bm25, "BY_VERSION_MAX_CHUNKS", 0)
    query = f"{corpus['rare'][0]} alpha golf hotel omnipresent"
    found: list[list[dict]] = []
    with database.connect(corpus["url"]) as conn:

        def run() -> None:
            store.search_log.set_session_groups(conn, ["a", "b"])
            conn.execute("SELECT set_config('enable_seqscan', 'off', true)")  # what a large index gets by cost
            found.append(_fulltext(conn, corpus, query, ["a", "b"]))

        with conn.transaction(force_rollback=True):
            for (name,) in conn.execute(  # every other index of chunks a key does not need
                    "SELECT i.indexrelid::regclass::text FROM pg_index i WHERE i.indrelid = 'chunks'::regclass"
                    " AND i.indexrelid::regclass::text <> 'chunks_tsv' AND NOT EXISTS"
                    " (SELECT 1 FROM pg_constraint k WHERE k.conindid = i.indexrelid)").fetchall():
                conn.execute(f'DROP INDEX "{name}"')
            plans = explained(conn, run)
        scans = [n for p in plans if "fts_cand" in p["Query Text"] for n in plan_nodes(p["Plan"])
                 if n.get("Index Name") == "chunks_tsv"]
        assert len(scans) == 2, [n.get("Index Cond") for n in scans]  # English and German, one scan each
        assert all("ts_config" in n["Index Cond"] for n in scans), [n["Index Cond"] for n in scans]
        assert_same(found[0], reference(conn, query, ["a", "b"], View(), 10))


def _squeeze(monkeypatch, first: int, budget: int, *, by_index: bool = True) -> None:
    """Budgets small enough that this corpus's searches take several tries."""
    if by_index:
        monkeypatch.setattr(bm25, "BY_VERSION_MAX_CHUNKS", 0)
    monkeypatch.setattr(bm25, "FIRST_ROWS", first)
    monkeypatch.setattr(bm25, "ROW_BUDGET", budget)
    monkeypatch.setattr(bm25, "TOGETHER_ROWS", first * 2)


def _searched(corpus: dict, queries: list[str]) -> Iterator[tuple[list[dict], dict, Callable[[], list]]]:
    """Each query's full-text search for both callers: its rows, its plan, and its reference list
    (computed when asked)."""
    with database.connect(corpus["url"]) as conn:
        for query in queries:
            for groups in (["a", "b"], ["a"]):
                found = _fulltext(conn, corpus, query, groups)
                yield (found, found[0]["fulltext_plan"] if found else {},
                       lambda q=query, g=groups: reference(conn, q, g, View(), 10))


def _rare_and_common(corpus: dict) -> list[str]:
    """Questions of two rare words and common ones: a first try of the rare words fails its bound."""
    rare = corpus["rare"]
    return [f"{rare[i]} {rare[i + 20]} {' '.join(COMMON[i % 4:])}" for i in range(12)]


@pytest.mark.parametrize("squeeze", [(10, 150), (5, 60), (20, 2000)])
def test_a_try_aimed_at_the_score_already_reached_proves_the_list(corpus: dict, squeeze: tuple[int, int],
                                                                  monkeypatch) -> None:
    """After a try whose bound failed, the next is chosen so that its bound is under the score
    its tenth best candidate already has (bm25_aim.aim): it cannot fail again unless its rows
    overflow, so a list needs one aimed try at most, and it equals the reference."""
    _squeeze(monkeypatch, *squeeze)
    rare, aimed = corpus["rare"], []
    queries = [*_queries(corpus), *(f"{rare[i]} {' '.join(COMMON[i % 4:])}" for i in range(3, 12))]
    for found, plan, expected in _searched(corpus, queries):
        if plan.get("aimed"):
            aimed.append(plan)
            if not plan.get("overflows"):  # an aimed try that overflowed is not aimed at again
                assert plan["aimed"] == 1 and plan["exact"], str(plan)
                assert_same(found, expected())
    assert aimed, "no squeeze made a try fail its bound"


@pytest.mark.parametrize("shape", ["by version", "by index"])
def test_a_try_that_takes_more_terms_reads_only_their_chunks_and_its_list_is_still_bm25s(
        corpus: dict, shape: str, monkeypatch) -> None:
    """A later try reads only the chunks of the terms it newly takes and of its own common-term
    arms, and keeps the best the tries before it found (Ranking.extends): its list equals the
    reference, and the rows all its tries read stay within the budget."""
    _squeeze(monkeypatch, 10, 150, by_index=shape == "by index")
    extended = []
    for found, plan, expected in _searched(corpus, [*_queries(corpus), *_rare_and_common(corpus)]):
        if plan.get("extended"):
            extended.append(plan)
            assert plan["matched"] <= 151, plan
            if plan["exact"]:
                assert_same(found, expected())
    assert sum(1 for p in extended if p["exact"]) >= 3, extended


@pytest.mark.parametrize("over", [0.5, 2.0, 3.5, 6.0])
def test_a_threshold_matches_exactly_the_chunks_whose_terms_bounds_exceed_it(corpus: dict, over: float) -> None:
    """The tsqueries of 'common terms whose bounds sum to more than the threshold'
    (bm25_match.threshold_queries, what a try aimed at a score asks) match a chunk exactly when
    the bounds of the terms it holds (counted in Python from its tsvector) sum to more."""
    with database.connect(corpus["url"]) as conn:
        terms, _ = bm25.query_terms(conn, " ".join(COMMON), None, ["a", "b"])
        common = sorted((t for t in terms if t.df > 0), key=lambda t: (t.df, t.cfg, t.lexeme))
        weights = [1.0 + (i % 3) * 0.75 for i in range(len(common))]  # uneven: 1, 1.75, 2.5, 1, ...
        formula = bm25_match.threshold_queries(common, weights, {t.cfg: over for t in common}, bm25.MAX_LEAVES)
        assert formula is not None
        queries, leaves = formula
        assert leaves == sum(q.count("'") // 2 for arms in queries.values() for q in arms)
        for cfg in {t.cfg for t in common}:
            bounds = {t.lexeme: w for t, w in zip(common, weights, strict=True) if t.cfg == cfg}
            matched = {r[0] for r in conn.execute(
                "SELECT id FROM chunks WHERE ts_config = %s::regconfig AND tsv @@ ANY(%s::tsquery[])",
                (cfg, queries.get(cfg, [])))}
            held = {r[0] for r in conn.execute(
                "SELECT c.id, array_agg(u.lexeme) FROM chunks c, unnest(c.tsv) u WHERE c.ts_config = %s::regconfig"
                " AND u.lexeme = ANY(%s) GROUP BY c.id", (cfg, list(bounds))).fetchall()
                if sum(bounds[x] for x in r[1]) > over}
            assert matched == held and held, (cfg, over)


def test_a_formula_too_long_for_a_threshold_is_not_asked() -> None:
    """Forty common terms of equal bounds, a threshold that needs twenty of them: the formula
    would hold more lexemes than MAX_LEAVES, so there is none (the try is aimed by 'at least m')."""
    common = [bm25.Term("english", f"w{i}", i + 1, 100, 1.0, 1.0) for i in range(40)]
    assert bm25_match.threshold_queries(common, [1.0] * 40, {"english": 19.5}, bm25.MAX_LEAVES) is None
    assert bm25_match.threshold_queries(common, [1.0] * 40, {"english": 0.5}, bm25.MAX_LEAVES) == (
        {"english": [f"'w{i}'" for i in range(40)]}, 40)  # any one of them
    assert bm25_match.threshold_queries(common, [1.0] * 40, {"english": -0.5}, bm25.MAX_LEAVES) is None  # every chunk


@pytest.mark.parametrize("shape", ["by version", "by index"])
def test_a_try_aimed_by_a_threshold_ranks_exactly_bm25(corpus: dict, shape: str, monkeypatch) -> None:
    """After a failed try, the aimed one may ask for the chunks whose common terms' bounds sum to
    more than a threshold just under the score reached (bm25_aim.py): its list equals the
    reference, or, when its terms go together more than expected and it overflows, the next try
    is aimed by 'at least m' and its list still says whether it is exact."""
    _squeeze(monkeypatch, 10, 150, by_index=shape == "by index")
    rare, by_threshold = corpus["rare"], []
    queries = [*_queries(corpus), *_rare_and_common(corpus), *(f"{rare[i]} {' '.join(COMMON[i % 3:])}" for i in range(12, 20))]
    for found, plan, expected in _searched(corpus, queries):
        if plan.get("threshold"):
            by_threshold.append(plan)
            assert plan["bound"] == plan["threshold"]
        if plan.get("exact"):
            assert_same(found, expected())
    assert sum(1 for p in by_threshold if p["exact"]) >= 3, by_threshold

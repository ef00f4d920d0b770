"""Migration 018 (issue 22, item 2), part one: revocation and deletion reach the past for readers.

A reader's as-of search returns a version only if the caller's groups could read it then AND may
read the document now; a deleted document shows no history at all. Tried as each database role
over SQL (rag_reader by plain SELECTs and by the library's search, rag_compliance through the
views, the login through `explain`), on an index the store's own functions wrote as rag_writer:

    run r1 (time T1 after it): keep/1 {a}, revoke/1 {a}, delete/1 {a}, narrow/1 {a,b}, widen/1 {a}
    run r2: keep/1 rewritten {a}; revoke/1 moved to {c}; delete/1 tombstoned; narrow/1 to {b};
            widen/1 to {a,b}
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime
from typing import Any

import psycopg
import pytest
from conftest import fresh_database
from helpers import ACL_TEXTS as TEXTS
from helpers import acl_first_run, acl_second_run
from psycopg import sql

from rag_pipeline import store
from rag_pipeline.retrieval.explain import explain
from rag_pipeline.retrieval.search import search
from rag_pipeline.store import database, roles
from rag_pipeline.store.search import MODES

QUESTION = "zephyrine plans"


@pytest.fixture(scope="module")
def index(pg_server_url: str, embedder: Any) -> Iterator[dict[str, Any]]:
    """The index of the module docstring, and a search logged as rag_reader in group a between
    the runs (it returned revoke/1, delete/1 and narrow/1 then). Yields url, T1 and the log id."""
    with fresh_database(pg_server_url) as url:
        model_id = acl_first_run(url, embedder)
        with database.connect_as(url, roles.WRITER) as writer:
            t1 = writer.execute("SELECT clock_timestamp()").fetchone()[0]
        with database.connect_as(url, roles.READER) as reader:
            then = search(reader, embedder, QUESTION, ["a"], k=10, user="alice")
            assert {h.uri for h in then} == set(TEXTS)
        acl_second_run(url, embedder, model_id)
        with database.connect_as(url, roles.WRITER) as writer:
            store.versions.publish(writer, "r2")
            store.runs.update_run(writer, "r2", status="published", finished=True)
        yield {"url": url, "t1": t1, "log_id": then.log_id, "model_id": model_id}


@pytest.fixture
def reader(index: dict[str, Any]) -> Iterator[psycopg.Connection]:
    with database.connect_as(index["url"], roles.READER) as conn:
        yield conn


@pytest.fixture
def admin(index: dict[str, Any]) -> Iterator[psycopg.Connection]:
    with database.connect(index["url"]) as conn:
        yield conn


def _as_reader(conn: psycopg.Connection, groups: str, statement: str, params: Any = None) -> list[tuple]:
    with conn.transaction():
        conn.execute("SELECT set_config('rag.groups', %s, true)", (groups,))
        return conn.execute(statement, params).fetchall()


def _versions_seen(conn: psycopg.Connection, groups: str) -> set[tuple[str, int]]:
    """(uri, version) of every version row a plain SELECT shows, and (the check that chunks and
    documents agree) of every chunk's version."""
    versions = set(_as_reader(conn, groups, "SELECT d.uri, v.version_no FROM document_versions v"
                                            " JOIN documents d ON d.id = v.document_id"))
    chunked = set(_as_reader(conn, groups, "SELECT d.uri, v.version_no FROM chunks c"
                                           " JOIN document_versions v ON v.id = c.version_id"
                                           " JOIN documents d ON d.id = v.document_id"))
    assert chunked <= versions
    return versions


def _hits(conn: psycopg.Connection, embedder: Any, groups: list[str], as_of: datetime | None,
          mode: str = "hybrid") -> set[tuple[str, int]]:
    found = search(conn, embedder, QUESTION, groups, k=50, as_of=as_of, log=False, mode=mode)
    return {(h.uri, h.version_no) for h in found}


# ---------------------------------------------------------------- rag_reader


@pytest.mark.parametrize("mode", MODES)
def test_a_readers_as_of_search_returns_nothing_of_a_revoked_deleted_or_narrowed_document(
        reader: psycopg.Connection, embedder: Any, index: dict[str, Any], mode: str) -> None:
    """Group a could read all five documents at T1; now it may read keep/1 and widen/1 only."""
    assert _hits(reader, embedder, ["a"], index["t1"], mode) == {("keep/1", 1), ("widen/1", 1)}
    assert _hits(reader, embedder, ["a"], None, mode) == {("keep/1", 2), ("widen/1", 2)}


def test_a_reader_still_sees_the_history_of_documents_it_may_read_now(
        reader: psycopg.Connection, embedder: Any, index: dict[str, Any]) -> None:
    """b may read narrow/1 now and could then; it could not read widen/1 at T1 (only a could), so
    widening does not reach back either."""
    assert _hits(reader, embedder, ["b"], index["t1"]) == {("narrow/1", 1)}
    assert _hits(reader, embedder, ["b"], None) == {("narrow/1", 2), ("widen/1", 2)}
    assert _hits(reader, embedder, ["c"], index["t1"]) == set()  # revoke/1 v1 was a's, not c's
    assert _hits(reader, embedder, ["a", "b"], index["t1"]) == {("keep/1", 1), ("widen/1", 1), ("narrow/1", 1)}


def test_a_plain_select_as_reader_follows_the_same_rule(reader: psycopg.Connection) -> None:
    assert _versions_seen(reader, "a") == {("keep/1", 1), ("keep/1", 2), ("widen/1", 1), ("widen/1", 2)}
    assert _versions_seen(reader, "b") == {("narrow/1", 1), ("narrow/1", 2), ("widen/1", 2)}
    assert _versions_seen(reader, "c") == {("revoke/1", 2)}
    assert _versions_seen(reader, "") == set()
    documents = {r[0] for r in _as_reader(reader, "a", "SELECT uri FROM documents")}
    assert documents == {"keep/1", "widen/1"}  # a deleted or revoked document's name is gone too
    texts = [r[0] for r in _as_reader(reader, "a,zz", "SELECT text FROM chunks")]
    assert not any(word in t for t in texts for word in ("Northwind", "layoffs", "salary"))


def test_the_readers_full_text_statistics_hold_nothing_of_what_it_lost(reader: psycopg.Connection) -> None:
    """fts_acl_terms counts live chunks only, per access set, and a term that left a set loses its
    row: group a cannot learn that 'northwind' or 'layoff' was ever in one of its documents."""
    lexemes = {r[0] for r in _as_reader(reader, "a", "SELECT lexeme FROM fts_acl_terms")}
    assert "zephyrin" in lexemes and "budget" in lexemes
    assert not lexemes & {"northwind", "layoff", "salari", "acquisit"}
    assert {r[0] for r in _as_reader(reader, "c", "SELECT lexeme FROM fts_acl_terms")} >= {"northwind", "acquisit"}


def test_a_reader_cannot_call_around_the_rule(reader: psycopg.Connection, admin: psycopg.Connection) -> None:
    """The policy's helper answers only what setting rag.groups answers; it reads no row."""
    deleted = admin.execute("SELECT id FROM documents WHERE uri = 'delete/1'").fetchone()[0]
    assert _as_reader(reader, "a", "SELECT rag_readable_now(%s, '{a}')", (deleted,)) == [(False,)]
    with pytest.raises(psycopg.errors.InsufficientPrivilege):
        _as_reader(reader, "a", "SELECT * FROM document_history")
    # the live groups the policies test (migration 019): a reader sees only the rows of documents
    # it may read now, so no row tells it that a revoked or deleted document exists
    uris = {u for (u,) in _as_reader(reader, "a", "SELECT d.uri FROM document_live_access a JOIN documents d"
                                                  " ON d.id = a.document_id")}
    assert uris == {"keep/1", "widen/1"}
    assert {u for (u,) in _as_reader(reader, "c", "SELECT d.uri FROM document_live_access a JOIN documents d"
                                                  " ON d.id = a.document_id")} >= {"revoke/1"}


@pytest.mark.parametrize("role", [roles.WRITER, roles.READER, roles.COMPLIANCE])
def test_no_role_can_widen_a_readers_past_by_writing_the_live_groups(index: dict[str, Any], role: str) -> None:
    """Only the publish trigger writes document_live_access: a role that could write a row could
    give a reader back the history of a revoked or deleted document."""
    for statement in ("INSERT INTO document_live_access SELECT id, '{a}' FROM documents WHERE uri = 'delete/1'",
                      "UPDATE document_live_access SET acl_groups = '{a}'", "DELETE FROM document_live_access"):
        with database.connect_as(index["url"], role) as conn, pytest.raises(psycopg.errors.InsufficientPrivilege):
            conn.execute(statement)


def test_the_live_groups_follow_every_publish(admin: psycopg.Connection) -> None:
    """One row per document with a live version, holding that version's groups; none for a
    tombstoned document: what the trigger keeps equals what the versions say."""
    kept = admin.execute("SELECT document_id, acl_groups FROM document_live_access ORDER BY 1").fetchall()
    derived = admin.execute("SELECT document_id, acl_groups FROM document_versions WHERE status = 'live' ORDER BY 1").fetchall()
    assert kept == derived and kept
    deleted = admin.execute("SELECT id FROM documents WHERE uri = 'delete/1'").fetchone()[0]
    assert deleted not in {d for d, _ in kept}


# ---------------------------------------------------------------- rag_compliance and the login


def test_compliance_still_sees_every_version_and_what_each_search_returned(index: dict[str, Any]) -> None:
    with database.connect_as(index["url"], roles.COMPLIANCE) as conn:
        assert conn.execute("SELECT current_user").fetchone()[0] == roles.COMPLIANCE
        rows = conn.execute("SELECT uri, version_no, text FROM chunk_history").fetchall()
        assert {(r[0], r[1]) for r in rows} >= {("revoke/1", 1), ("delete/1", 1), ("narrow/1", 1)}
        assert any("Northwind" in r[2] for r in rows)
        returned = conn.execute("SELECT uri, text_unchanged FROM search_results WHERE search_id = %s",
                                (index["log_id"],)).fetchall()
        assert {r[0] for r in returned} == set(TEXTS) and all(r[1] for r in returned)


def test_explain_as_the_login_replays_a_search_that_returned_revoked_content_exactly(
        admin: psycopg.Connection, embedder: Any, index: dict[str, Any]) -> None:
    """What alice saw before the revocation stays answerable: explain runs as the login, the
    search's own WHERE clause is unchanged, so the replay as of then is identical."""
    result = explain(admin, embedder, index["log_id"])
    assert result.replay.identical, result.replay.differences
    assert result.identical
    assert {r["uri"] for r in result.replay.results} == set(TEXTS)
    gone = {d["uri"] for d in result.now.differences if d["change"] == "gone"}
    assert {"revoke/1", "delete/1", "narrow/1"} <= gone


def test_the_writer_and_superuser_are_unaffected(index: dict[str, Any], admin: psycopg.Connection) -> None:
    everything = admin.execute("SELECT count(*) FROM document_versions").fetchone()[0]
    with database.connect(index["url"]) as conn, conn.transaction():
        conn.execute(sql.SQL("SET LOCAL ROLE {}").format(sql.Identifier(roles.WRITER)))
        assert conn.execute("SELECT count(*) FROM document_versions").fetchone()[0] == everything

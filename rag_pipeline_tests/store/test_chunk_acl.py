"""Migration 028 (issue 21, item 2): the reader's chunk policy on the chunk's own groups.

A chunk carries its version's groups (set by the database at insert, never by the writer, never
rewritten), and what the groups alone do not decide sits in `reader_exceptions`, kept by the
database at every status change. The visibility rule itself is 019's, which test_reader_history
and test_reader_policies check end to end; here: the column cannot be forged, the exceptions
follow a real edit / revoke / delete / narrow / widen, an index written before 028 is backfilled
to the same answers, and a reader's search plan tests chunks on their own row, with no version
lookup per chunk for the policy.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import psycopg
import pytest
from conftest import fresh_database
from helpers import ACL_TEXTS as TEXTS
from helpers import acl_first_run as first_run
from helpers import acl_second_run as stage_second_run
from helpers import explained, plan_nodes, stage_text

from rag_pipeline import store
from rag_pipeline.retrieval.search import search
from rag_pipeline.store import database, roles
from rag_pipeline.store.migrations import sql_dir


def publish_second_run(url: str) -> None:
    with database.connect_as(url, roles.WRITER) as writer:
        store.versions.publish(writer, "r2")
        store.runs.update_run(writer, "r2", status="published", finished=True)


def exceptions(conn: psycopg.Connection) -> dict[tuple[str, int, str], list[str]]:
    """(uri, version, status) -> groups that may see it, for every exception."""
    return {(uri, no, status): sorted(groups) for uri, no, status, groups in conn.execute(
        "SELECT d.uri, v.version_no, v.status, e.readable_by FROM reader_exceptions e"
        " JOIN document_versions v ON v.id = e.version_id JOIN documents d ON d.id = e.document_id")}


def visible(url: str, groups: str) -> set[tuple[str, int]]:
    """(uri, version) of every chunk a reader in `groups` may select, by plain SQL."""
    with database.connect_as(url, roles.READER) as reader, reader.transaction():
        reader.execute("SELECT set_config('rag.groups', %s, true)", (groups,))
        return {(u, n) for u, n in reader.execute(
            "SELECT d.uri, v.version_no FROM chunks c JOIN document_versions v ON v.id = c.version_id"
            " JOIN documents d ON d.id = v.document_id")}


@pytest.fixture(scope="module")
def index(pg_server_url: str, embedder: Any) -> Iterator[dict[str, Any]]:
    with fresh_database(pg_server_url) as url:
        model_id = first_run(url, embedder)
        yield {"url": url, "model_id": model_id}


def test_a_chunk_has_its_versions_groups_whatever_the_insert_says(index: dict[str, Any], embedder: Any) -> None:
    url = index["url"]
    with database.connect_as(url, roles.WRITER) as writer:
        store.runs.create_run(writer, "forge", ["docs"], index["model_id"])
        stage_text(writer, embedder, index["model_id"], "forge", "forged/1", "Forged: zephyrine secrets.", ["board"])
        version = writer.execute("SELECT v.id FROM document_versions v JOIN documents d ON d.id = v.document_id"
                                 " WHERE d.uri = 'forged/1'").fetchone()[0]
        # a second chunk written by hand, claiming every group of the company
        writer.execute(
            "INSERT INTO chunks (version_id, ord, char_start, char_end, token_count, content_hash, text, model_id,"
            " embedding, ts_config, tsv, acl_groups) SELECT version_id, ord + 100, char_start, char_end, token_count,"
            " content_hash, text, model_id, embedding, ts_config, tsv, ARRAY['a', 'b', 'c', 'all-staff']"
            " FROM chunks WHERE version_id = %s", (version,))
        groups = {tuple(r[0]) for r in writer.execute("SELECT acl_groups FROM chunks WHERE version_id = %s", (version,))}
    assert groups == {("board",)}
    with database.connect(url) as admin:
        assert admin.execute("SELECT count(*) FROM chunks WHERE acl_groups IS DISTINCT FROM"
                             " (SELECT acl_groups FROM document_versions v WHERE v.id = version_id)").fetchone()[0] == 0


@pytest.mark.parametrize(("role", "refusal"), [(None, psycopg.errors.RestrictViolation),  # the trigger
                                               (roles.WRITER, psycopg.errors.InsufficientPrivilege)],  # no grant
                         ids=["superuser", "writer"])
def test_a_chunks_groups_are_never_rewritten(index: dict[str, Any], role: str | None, refusal: type) -> None:
    connect = database.connect(index["url"]) if role is None else database.connect_as(index["url"], role)
    with connect as conn, pytest.raises(refusal):
        conn.execute("UPDATE chunks SET acl_groups = ARRAY['everyone'] WHERE id = (SELECT min(id) FROM chunks)")


def test_the_exceptions_follow_an_edit_a_revoke_a_delete_a_narrowing_and_a_widening(
        pg_server_url: str, embedder: Any) -> None:
    with fresh_database(pg_server_url) as url:
        model_id = first_run(url, embedder)
        with database.connect(url) as admin:
            assert exceptions(admin) == {}  # everything live: the groups decide alone
        stage_second_run(url, embedder, model_id)
        with database.connect(url) as admin:
            staged = exceptions(admin)
        assert staged == {(uri, 2, "staged"): [] for uri in TEXTS}  # nobody sees a staged version
        assert visible(url, "a,b,c") == {(uri, 1) for uri in TEXTS}
        publish_second_run(url)
        with database.connect(url) as admin:
            assert exceptions(admin) == {
                ("revoke/1", 1, "superseded"): ["c"],  # only who may read it now, and also then
                ("delete/1", 1, "superseded"): [],  # deleted: no history for readers
                ("delete/1", 2, "tombstoned"): [],
                ("narrow/1", 1, "superseded"): ["b"],
            }  # keep/1 (same groups) and widen/1 (more groups) need no row
        assert visible(url, "a") == {("keep/1", 1), ("keep/1", 2), ("widen/1", 1), ("widen/1", 2)}
        assert visible(url, "b") == {("narrow/1", 1), ("narrow/1", 2), ("widen/1", 2)}
        assert visible(url, "c") == {("revoke/1", 2)}
        assert visible(url, "") == set()


def test_an_index_written_before_028_is_backfilled_to_the_same_answers(pg_server_url: str, embedder: Any) -> None:
    """Migrated up to 027, synced twice, then migrated: every chunk gets its version's groups,
    the exceptions are counted, and readers see what they saw before."""
    with fresh_database(pg_server_url) as url:
        with database.connect(url) as admin:  # back to 027: 019's policies, no column, no exceptions
            admin.execute("DROP POLICY reader_groups ON chunks")
            admin.execute("DROP POLICY reader_groups ON model_vectors")
            admin.execute("DROP POLICY reader_groups ON document_versions")
            admin.execute("DROP POLICY reader_groups ON chunk_multilingual")  # 035's reads reader_exceptions too
            admin.execute("DROP TRIGGER chunks_groups_of_version ON chunks")
            admin.execute("DROP TRIGGER document_versions_reader_exceptions ON document_versions")
            admin.execute("DROP TABLE reader_exceptions")
            admin.execute("ALTER TABLE chunks DROP COLUMN acl_groups")
            # later ones stay applied, but 035, which builds on 028's exceptions, is applied again
            admin.execute("DELETE FROM schema_migrations WHERE version IN ('028_chunk_acl', '035_multilingual_row_groups')")
            for name in ("019_reader_history_fast.sql", "023_model_migration.sql"):
                admin.execute((sql_dir() / "migrations" / name).read_text(encoding="utf-8"))
        model_id = first_run(url, embedder)
        stage_second_run(url, embedder, model_id)
        publish_second_run(url)
        before = {g: visible(url, g) for g in ("a", "b", "c", "a,b,c")}
        with database.connect(url) as admin:
            assert store.migrations.migrate(admin) == ["028_chunk_acl", "035_multilingual_row_groups"]
            missing = admin.execute("SELECT count(*) FROM chunks c JOIN document_versions v ON v.id = c.version_id"
                                    " WHERE c.acl_groups IS DISTINCT FROM v.acl_groups").fetchone()[0]
            counted = exceptions(admin)
        assert missing == 0
        assert counted[("revoke/1", 1, "superseded")] == ["c"] and len(counted) == 4
        assert {g: visible(url, g) for g in before} == before


def test_a_readers_search_tests_chunks_on_their_own_row(index: dict[str, Any], embedder: Any) -> None:
    """EXPLAIN of every statement of a reader's hybrid search: each scan of chunks carries the
    policy as a test of the row (its groups against the statement's one InitPlan, its version
    against one hashed set of exceptions), and nothing under it reads document_versions."""
    hits: list = []
    with database.connect(index["url"]) as su:
        plans = explained(su, lambda: hits.extend(search(su, embedder, "zephyrine budget review", ["a"], k=5,
                                                         mode="hybrid", log=False)))
    assert hits and {h.uri for h in hits} <= {"keep/1", "revoke/1", "delete/1", "narrow/1", "widen/1"}
    chunk_scans = [n for p in plans for n in plan_nodes(p["Plan"])
                   if n.get("Relation Name") == "chunks" and "Scan" in n["Node Type"]]
    assert chunk_scans
    for scan in chunk_scans:
        quals = " ".join(scan.get(q, "") for q in ("Filter", "Index Cond", "Recheck Cond"))
        assert "acl_groups && (InitPlan" in quals and "hashed SubPlan" in quals, quals
        below = {n.get("Relation Name") for n in plan_nodes(scan)}
        assert "document_versions" not in below and "reader_exceptions" in below, below


"""Migration 006's roles on a real synced index: compliance reads every view and the search log
and writes nothing; the pipeline's writer cannot rewrite history (grants), and neither can a
superuser session (triggers); a reader in group [all-staff] cannot read a chunk of [hr] by any raw
query, views included; the library's search runs under those rules and logs the caller."""

from __future__ import annotations

import hashlib
import shutil
from collections.abc import Iterator

import psycopg
import pytest
from conftest import DEMO_DIR, PROJECT_ROOT, fresh_database, write_config
from psycopg import errors, sql

from rag_pipeline import store
from rag_pipeline.retrieval.search import MAX_GROUPS, QueryError, search
from rag_pipeline.store import database

SALARIES = "hr/salaries-2026.pdf"


@pytest.fixture(scope="module")
def synced(pg_server_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The demo corpus synced once by the real pipeline (acting as rag_writer), plus one logged search."""
    root = tmp_path_factory.mktemp("roles")
    shutil.copytree(DEMO_DIR / "docs", root / "docs")
    with fresh_database(pg_server_url) as url:
        from rag_pipeline import cli

        config = str(write_config(root, url, docs=root / "docs"))
        assert cli.main(["sync", "--config", config, "--json"]) == 0
        assert cli.main(["search", "travel approval", "--groups", "all-staff", "--user", "auditor", "--config", config]) == 0
        yield url


@pytest.fixture
def conn(synced: str) -> Iterator[psycopg.Connection]:
    with database.connect(synced) as c:
        yield c


def attempt(conn: psycopg.Connection, statement: str, role: str | None = None, groups: str | None = None) -> Exception | list:
    """Run one statement as `role` in a transaction that is always rolled back; the error it
    raised, or its rows."""
    try:
        with conn.transaction() as tx:
            if role:
                conn.execute(sql.SQL("SET LOCAL ROLE {}").format(sql.Identifier(role)))
            if groups is not None:
                conn.execute("SELECT set_config('rag.groups', %s, true)", (groups,))
            cur = conn.execute(statement)
            found = cur.fetchall() if cur.description else []
            raise psycopg.Rollback(tx)
    except psycopg.Error as exc:
        return exc
    return found


def views(conn: psycopg.Connection) -> list[str]:
    return [r[0] for r in conn.execute("SELECT viewname FROM pg_views WHERE schemaname = current_schema() ORDER BY 1")]


def test_migration_006_runs_again_on_a_migrated_database(conn: psycopg.Connection) -> None:
    body = (PROJECT_ROOT / "sql" / "migrations" / "006_audit_roles.sql").read_text()
    with conn.transaction():
        conn.execute(body)
        conn.execute((PROJECT_ROOT / "sql" / "views.sql").read_text())
    roles = {r[0] for r in conn.execute("SELECT rolname FROM pg_roles WHERE rolname LIKE 'rag_%'")}
    assert {"rag_writer", "rag_reader", "rag_compliance"} <= roles


def test_compliance_reads_every_view_and_the_log_and_can_write_nothing(conn: psycopg.Connection) -> None:
    names = views(conn)
    assert {"document_history", "live_documents", "chunk_history", "document_changes", "search_results"} <= set(names)
    for view in names:
        rows = attempt(conn, f"SELECT count(*) FROM {view}", "rag_compliance")
        assert isinstance(rows, list), f"{view}: {rows}"
    assert attempt(conn, "SELECT count(*) FROM chunk_history", "rag_compliance")[0][0] > 0
    assert isinstance(attempt(conn, "SELECT id, caller, results FROM search_log", "rag_compliance"), list)
    refused = [
        "INSERT INTO search_log (query, groups, k, results) VALUES ('x', '{}', 1, '[]')",
        "UPDATE search_log SET query = 'x'",
        "DELETE FROM search_log",
        "UPDATE chunks SET text = 'tampered'",
        "DELETE FROM chunks",
        "INSERT INTO documents (source, uri) VALUES ('s', 'u')",
        "SELECT text FROM chunks",  # the tables themselves: only through the views
        "SELECT * FROM document_versions",
        "SELECT * FROM runs",
    ]
    for statement in refused:
        assert isinstance(attempt(conn, statement, "rag_compliance"), errors.InsufficientPrivilege), statement
    for view in names:  # refused for want of a right, or because the view cannot be written at all
        for statement in (f"DELETE FROM {view}", f"UPDATE {view} SET query = 'x'" if view in ("search_results", "answer_record")
                          else f"UPDATE {view} SET uri = 'x'"):
            failure = attempt(conn, statement, "rag_compliance")
            assert isinstance(failure, (errors.InsufficientPrivilege, errors.ObjectNotInPrerequisiteState)), statement


def test_the_writer_may_not_rewrite_content_or_the_log(conn: psycopg.Connection) -> None:
    """The grant layer: refused with 'permission denied' before any trigger runs."""
    for statement in (
        "UPDATE chunks SET text = 'tampered'",
        "DELETE FROM chunks",
        "TRUNCATE chunks",
        "UPDATE search_log SET results = '[]'",
        "DELETE FROM search_log",
        "TRUNCATE search_log",
        "UPDATE document_versions SET acl_groups = '{everyone}'",
        "UPDATE document_versions SET checksum = 'forged'",
        "DELETE FROM document_versions",
        "DELETE FROM documents",
        "UPDATE embedding_models SET weights_sha256 = 'x'",
    ):
        assert isinstance(attempt(conn, statement, "rag_writer"), errors.InsufficientPrivilege), statement
    # what publishing needs stays possible: status and the validity window
    closed = attempt(conn, "UPDATE document_versions SET status = 'superseded', valid_to = now()"
                           " WHERE status = 'live' RETURNING id", "rag_writer")
    assert isinstance(closed, list) and len(closed) == 7


def test_triggers_refuse_rewrites_even_for_a_superuser(conn: psycopg.Connection) -> None:
    """The second line: no role switch, the server's own superuser."""
    assert conn.execute("SELECT rolsuper FROM pg_roles WHERE rolname = current_user").fetchone()[0]
    for statement in (
        "UPDATE chunks SET text = 'tampered'",
        "DELETE FROM chunks",
        "TRUNCATE chunks CASCADE",
        "UPDATE search_log SET caller = 'someone else'",
        "DELETE FROM search_log",
        "TRUNCATE search_log",
        "UPDATE document_versions SET acl_groups = '{everyone}'",
        "UPDATE document_versions SET version_no = version_no + 10",
        "UPDATE document_versions SET valid_from = valid_from - interval '1 year' WHERE status = 'live'",
        "UPDATE document_versions SET status = 'staged' WHERE status = 'live'",
        "DELETE FROM document_versions",
        "UPDATE documents SET uri = 'elsewhere'",
        "UPDATE embedding_models SET dimension = 1",
    ):
        failure = attempt(conn, statement)
        assert isinstance(failure, errors.RestrictViolation), f"{statement}: {failure}"
        assert "append-only" in str(failure) or "immutable" in str(failure) or "never moved" in str(failure) \
            or "not a publishing step" in str(failure)
    assert isinstance(attempt(conn, "UPDATE document_versions SET status = 'superseded', valid_to = now()"
                                    " WHERE status = 'live' RETURNING id"), list)
    assert isinstance(attempt(conn, "UPDATE documents SET uri = uri RETURNING id"), list)  # the no-op upsert


def _salary_version_ids(conn: psycopg.Connection) -> list[int]:
    return [r[0] for r in conn.execute(
        "SELECT v.id FROM document_versions v JOIN documents d ON d.id = v.document_id WHERE d.uri = %s", (SALARIES,))]


def test_a_reader_in_all_staff_cannot_read_an_hr_chunk_by_any_query(conn: psycopg.Connection) -> None:
    salary_versions = _salary_version_ids(conn)
    assert salary_versions
    salary_chunks = [r[0] for r in conn.execute("SELECT id FROM chunks WHERE version_id = ANY(%s)", (salary_versions,))]
    ids = ",".join(str(i) for i in salary_chunks)
    reader = "rag_reader"
    for statement in (
        "SELECT id, text FROM chunks WHERE version_id IN (SELECT id FROM document_versions WHERE 'hr' = ANY(acl_groups))",
        f"SELECT id, text FROM chunks WHERE id IN ({ids})",
        f"SELECT c.id FROM chunks c JOIN document_versions v ON v.id = c.version_id WHERE v.id IN ({','.join(map(str, salary_versions))})",
        "SELECT * FROM document_versions WHERE 'hr' = ANY(acl_groups)",
        f"SELECT * FROM documents WHERE uri = '{SALARIES}'",
        "SELECT id FROM chunks WHERE text ILIKE '%warehouse manager%'",
    ):
        assert attempt(conn, statement, reader, "all-staff") == [], statement
    visible = attempt(conn, "SELECT count(*) FROM chunks", reader, "all-staff")[0][0]
    assert visible > 0  # the policy filters, it does not simply deny
    assert attempt(conn, f"SELECT count(*) FROM chunks WHERE id IN ({ids})", reader, "hr")[0][0] == len(salary_chunks)
    assert attempt(conn, "SELECT count(*) FROM chunks", reader)[0][0] == 0  # no groups set: default deny
    assert attempt(conn, "SELECT count(*) FROM chunks", reader, " , ,")[0][0] == 0
    for view in views(conn):  # no view runs with its owner's rights for a reader
        assert isinstance(attempt(conn, f"SELECT * FROM {view}", reader, "all-staff"), errors.InsufficientPrivilege), view
    for statement in ("SELECT query, groups FROM search_log", "UPDATE chunks SET text = 'x'",
                      "INSERT INTO chunks (version_id, ord, char_start, char_end, token_count, content_hash, text,"
                      " model_id, embedding, tsv) SELECT version_id, 999, 0, 1, 1, 'h', 't', model_id, embedding, tsv FROM chunks LIMIT 1"):
        assert isinstance(attempt(conn, statement, reader, "all-staff"), errors.InsufficientPrivilege), statement


def test_a_raw_sql_reader_sets_its_groups_for_the_session(synced: str) -> None:
    with database.connect(synced) as c:
        c.execute("SET ROLE rag_reader")
        c.execute("SET rag.groups = 'all-staff'")
        uris = {r[0] for r in c.execute("SELECT uri FROM documents")}
        assert SALARIES not in uris and "policies/travel-policy.pdf" in uris
        c.execute("SET rag.groups = 'hr'")
        assert {r[0] for r in c.execute("SELECT uri FROM documents")} == {SALARIES}


def test_connect_as_takes_the_role_and_closes_the_connection(synced: str) -> None:
    """The one way the CLI, the Dagster IO manager and the sync steps open a connection as a role."""
    with database.connect_as(synced, store.roles.READER) as reader:
        assert reader.execute("SELECT current_user").fetchone()[0] == store.roles.READER
    assert reader.closed
    with database.connect_as(synced, None) as login:  # no role: the login itself
        assert login.execute("SELECT current_user = session_user").fetchone()[0] is True
    assert login.closed


def test_library_search_as_the_reader_is_filtered_and_logged(conn: psycopg.Connection, embedder) -> None:
    assert store.roles.assume(conn, store.roles.READER)
    hits = search(conn, embedder, "salary band of a warehouse manager", ["all-staff"], k=5, user="svc:chat alice")
    assert hits and all(h.uri != SALARIES for h in hits)
    hr_hits = search(conn, embedder, "salary band of a warehouse manager", ["hr"], k=5, user="svc:chat bob")
    assert hr_hits and all(h.uri == SALARIES for h in hr_hits)
    assert hits.log_id and hr_hits.log_id and hr_hits.log_id > hits.log_id
    conn.execute("RESET ROLE")
    caller, db_user, groups, results, candidates = conn.execute(
        "SELECT caller, db_user, groups, results, candidates FROM search_log WHERE id = %s", (hits.log_id,)).fetchone()
    assert caller == "svc:chat alice" and groups == ["all-staff"] and db_user
    assert [r["chunk_id"] for r in results] == [h.chunk_id for h in hits]
    for logged, hit in zip(results, hits, strict=True):
        assert logged["text_sha256"] == hashlib.sha256(hit.text.encode("utf-8")).hexdigest()
        assert "vector" in logged["branches"] and logged["branches"]["vector"]["rank"] >= 1
    assert all(c["chunk_id"] not in {h.chunk_id for h in hits} for c in candidates)
    # the logged hashes are those the compliance view computes from the index
    shown = conn.execute("SELECT bool_and(text_unchanged), count(*) FROM search_results WHERE search_id = %s",
                         (hits.log_id,)).fetchone()
    assert shown == (True, len(hits))


def test_hostile_callers_and_group_lists_are_refused_before_anything_runs(conn: psycopg.Connection, embedder) -> None:
    before = conn.execute("SELECT count(*) FROM search_log").fetchone()[0]
    for groups, user in (
        ([f"g{i}" for i in range(MAX_GROUPS + 1)], None),
        (["x" * 10_000], None),
        (["all-staff,hr"], None),  # a comma would widen the row-level security list
        (["all-staff\x00hr"], None),
        (["all-staff"], "alice\x00"),
        (["all-staff"], "u" * 100_000),
    ):
        with pytest.raises(QueryError):
            search(conn, embedder, "travel", groups, user=user)
    assert conn.execute("SELECT count(*) FROM search_log").fetchone()[0] == before
    odd = "alice\x1b[31m\x07\r\n\u202e"
    hits = search(conn, embedder, "travel approval", ["all-staff"], user=odd)
    assert conn.execute("SELECT caller FROM search_log WHERE id = %s", (hits.log_id,)).fetchone()[0] == odd


def test_passwords_come_from_the_environment_and_let_the_role_log_in(conn: psycopg.Connection, synced: str) -> None:
    from psycopg.conninfo import conninfo_to_dict, make_conninfo

    assert store.roles.apply_passwords(conn, {}) == []
    assert store.roles.apply_passwords(conn, {"RAG_COMPLIANCE_PASSWORD": "s3cret-from-env"}) == ["rag_compliance"]
    stored = conn.execute("SELECT rolcanlogin FROM pg_roles WHERE rolname = 'rag_compliance'").fetchone()[0]
    assert stored is True
    params = conninfo_to_dict(synced)
    params.update(user="rag_compliance", password="s3cret-from-env")
    with psycopg.connect(make_conninfo(**params), autocommit=True) as officer:
        assert officer.execute("SELECT current_user").fetchone()[0] == "rag_compliance"
        assert officer.execute("SELECT count(*) FROM document_history").fetchone()[0] > 0
        with pytest.raises(errors.InsufficientPrivilege):
            officer.execute("DELETE FROM search_log")
        assert store.roles.assume(officer, store.roles.WRITER) is False  # may not become the writer

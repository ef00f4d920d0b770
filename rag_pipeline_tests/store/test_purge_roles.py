"""Migration 018 (issue 22, item 2), part two: the purge, tried as each database role over SQL.

A purge (sync.purge.purge_document, as the login) empties the text, search prefix, vector and
full-text terms of a version's chunks for every role, keeps every other column and the version
row, records who purged what and why, and counts a live version's chunks out of the full-text
statistics. No rag_* role can purge or write the record; no role, superuser included, can change
a chunk in any other way, or without the record."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import psycopg
import pytest
from conftest import fresh_database
from helpers import stage_text
from psycopg import errors, sql

from rag_pipeline import store
from rag_pipeline.blobs import BlobStore
from rag_pipeline.retrieval.search import search
from rag_pipeline.store import bm25_stats, database, roles
from rag_pipeline.sync.purge import PurgeRefusedError, purge_document

SECRET = "The quokkanite merger with Northwind is announced on the ninth."
TEXTS = {"leak/1": SECRET, "plain/1": "Parking permits are issued once a year by facilities."}


@pytest.fixture
def index(pg_server_url: str, embedder: Any) -> Iterator[dict[str, Any]]:
    """leak/1 v1 superseded by v2 (the same secret, one more sentence), both in group a; plain/1
    live in a. Written as rag_writer. A fresh database per test: purges are irreversible."""
    with fresh_database(pg_server_url) as url:
        with database.connect(url) as admin:
            model_id = store.models.register_model(admin, embedder.identity.to_dict())
        with database.connect_as(url, roles.WRITER) as writer:
            for run_id in ("r1", "r2", "r3"):
                store.runs.create_run(writer, run_id, ["docs"], model_id)
            for uri, text in TEXTS.items():
                stage_text(writer, embedder, model_id, "r1", uri, text, ["a"])
            store.versions.publish(writer, "r1")
            store.runs.update_run(writer, "r1", status="published", finished=True)
            stage_text(writer, embedder, model_id, "r2", "leak/1", SECRET + " Details follow.", ["a"])
            store.versions.publish(writer, "r2")
            store.runs.update_run(writer, "r2", status="published", finished=True)
        yield {"url": url, "model_id": model_id}


@pytest.fixture
def admin(index: dict[str, Any]) -> Iterator[psycopg.Connection]:
    with database.connect(index["url"]) as conn:
        yield conn


def _chunks(conn: psycopg.Connection, uri: str) -> list[dict[str, Any]]:
    return store._sql.rows(conn,
        "SELECT c.*, v.version_no FROM chunks c JOIN document_versions v ON v.id = c.version_id"
        " JOIN documents d ON d.id = v.document_id WHERE d.uri = %s ORDER BY v.version_no, c.ord", (uri,))


def _attempt(conn: psycopg.Connection, role: str | None, statement: str, params: Any = None) -> Exception | None:
    """Run `statement` as `role` (None: the superuser login) in a transaction always rolled back."""
    try:
        with conn.transaction() as tx:
            if role:
                conn.execute(sql.SQL("SET LOCAL ROLE {}").format(sql.Identifier(role)))
            conn.execute(statement, params)
            raise psycopg.Rollback(tx)
    except psycopg.Error as exc:
        return exc
    return None


def test_a_purge_removes_text_and_vectors_for_every_role_and_keeps_metadata(
        admin: psycopg.Connection, index: dict[str, Any], embedder: Any, tmp_path: Path) -> None:
    before = _chunks(admin, "leak/1")
    versions_before = admin.execute("SELECT * FROM document_versions ORDER BY id").fetchall()
    result = purge_document(admin, BlobStore(tmp_path), "docs", "leak/1", None, "shared by mistake", "dpo")
    assert [(v["version"], v["status"], v["result"]) for v in result.purged] == [
        (1, "superseded", "purged"), (2, "live", "purged")]
    assert all(v["blob"] == "none" and v["chunks"] >= 1 for v in result.purged)
    after = _chunks(admin, "leak/1")
    assert len(after) == len(before)
    for b, a in zip(before, after, strict=True):
        assert (a["text"], a["search_prefix"], a["embedding"], a["tsv"]) == ("", None, None, "")
        assert a["purged_at"] is not None
        kept = ("id", "version_id", "ord", "section_path", "page_start", "page_end", "char_start", "char_end",
                "token_count", "content_hash", "model_id", "ts_config")
        assert {k: a[k] for k in kept} == {k: b[k] for k in kept}
    assert admin.execute("SELECT * FROM document_versions ORDER BY id").fetchall() == versions_before
    assert _chunks(admin, "plain/1")[0]["text"] == TEXTS["plain/1"]

    with database.connect_as(index["url"], roles.READER) as reader, reader.transaction():
        reader.execute("SELECT set_config('rag.groups', 'a', true)")
        texts = [r[0] for r in reader.execute("SELECT text FROM chunks")]
        assert SECRET not in " ".join(texts) and TEXTS["plain/1"] in texts
        assert isinstance(_attempt(reader, None, "SELECT * FROM purges"), errors.InsufficientPrivilege)
    with database.connect_as(index["url"], roles.COMPLIANCE) as compliance:
        rows = compliance.execute("SELECT text, purged_at FROM chunk_history WHERE uri = 'leak/1'").fetchall()
        assert rows and all(r[0] == "" and r[1] is not None for r in rows)
        record = compliance.execute("SELECT version_no, reason, purged_by, db_user, checksum FROM purge_record"
                                    " ORDER BY version_no").fetchall()
        assert [(r[0], r[1], r[2]) for r in record] == [(1, "shared by mistake", "dpo"), (2, "shared by mistake", "dpo")]
        assert all(r[3] == "postgres" and r[4] for r in record)  # the login; the checksum (a hash) stays
        history = compliance.execute("SELECT version_no, purged_at IS NOT NULL FROM document_history"
                                     " WHERE uri = 'leak/1' ORDER BY 1").fetchall()
        assert history == [(1, True), (2, True)]


def test_a_purge_counts_the_live_chunks_out_of_the_full_text_statistics(
        admin: psycopg.Connection, index: dict[str, Any], embedder: Any, tmp_path: Path) -> None:
    assert admin.execute("SELECT count(*) FROM fts_acl_terms WHERE lexeme = 'quokkanit'").fetchone()[0] == 1
    purge_document(admin, BlobStore(tmp_path), "docs", "leak/1", None, "legal order 2026-17", None)
    assert bm25_stats.kept(admin) == bm25_stats.recount(admin)
    for word in ("quokkanit", "northwind"):  # no row says the word was ever there
        assert admin.execute("SELECT count(*) FROM fts_acl_terms WHERE lexeme = %s", (word,)).fetchone()[0] == 0
    with database.connect_as(index["url"], roles.READER) as reader:
        for mode in ("vector", "fulltext", "hybrid"):
            hits = search(reader, embedder, "quokkanite merger Northwind", ["a"], k=10, log=False, mode=mode)
            assert {h.uri for h in hits} <= {"plain/1"}, mode
            assert all(h.text for h in hits)
            old = search(reader, embedder, "quokkanite merger Northwind", ["a"], k=10, log=False, mode=mode,
                         as_of=admin.execute("SELECT valid_to FROM document_versions WHERE version_no = 1"
                                             " AND status = 'superseded'").fetchone()[0] - timedelta(microseconds=1))
            assert {h.uri for h in old} <= {"plain/1"}, mode


def test_a_purged_vector_is_never_reused(admin: psycopg.Connection, index: dict[str, Any], tmp_path: Path) -> None:
    hashes = [c["content_hash"] for c in _chunks(admin, "leak/1")]
    assert store.embeddings.find_embeddings(admin, hashes, index["model_id"])
    purge_document(admin, BlobStore(tmp_path), "docs", "leak/1", None, "shared by mistake", None)
    assert store.embeddings.find_embeddings(admin, hashes, index["model_id"]) == {}


def test_purging_one_version_leaves_the_others(admin: psycopg.Connection, tmp_path: Path) -> None:
    purge_document(admin, BlobStore(tmp_path), "docs", "leak/1", 1, "v1 only", None)
    texts = {c["version_no"]: c["text"] for c in _chunks(admin, "leak/1")}
    assert texts[1] == "" and SECRET in texts[2]
    again = purge_document(admin, BlobStore(tmp_path), "docs", "leak/1", 1, "twice", None)
    assert again.purged == [] and [v["result"] for v in again.already] == ["already purged"]
    assert again.already[0]["reason"] == "v1 only"  # the first record stands
    assert admin.execute("SELECT count(*) FROM purges").fetchone()[0] == 1


@pytest.mark.parametrize(("uri", "version", "reason", "message"), [
    ("leak/1", 9, "x", "has no version 9"),
    ("nothing/1", None, "x", "no document"),
    ("leak/1", None, "", "--reason is empty"),
    ("leak/1", None, "   \t ", "--reason is empty"),
    ("leak/1", None, "a" * 2001, "at most 2,000"),
    ("leak/1", None, "ok\nforged: line", "--reason holds"),
    ("leak/1", None, "ok\x1b[31m", "--reason holds"),
    ("leak/1", None, "ok\x00", "--reason holds"),
    ("leak/1", None, "ok\ud800", "--reason holds"),
])
def test_a_purge_that_cannot_be_done_changes_nothing(admin: psycopg.Connection, tmp_path: Path, uri: str,
                                                     version: int | None, reason: str, message: str) -> None:
    with pytest.raises(PurgeRefusedError, match=message):
        purge_document(admin, BlobStore(tmp_path), "docs", uri, version, reason, None)
    assert admin.execute("SELECT count(*) FROM purges").fetchone()[0] == 0
    assert admin.execute("SELECT count(*) FROM chunks WHERE purged_at IS NOT NULL").fetchone()[0] == 0


def test_a_document_a_running_sync_holds_is_not_purged(admin: psycopg.Connection, index: dict[str, Any],
                                                       embedder: Any, tmp_path: Path) -> None:
    with database.connect_as(index["url"], roles.WRITER) as writer:
        stage_text(writer, embedder, index["model_id"], "r3", "leak/1", SECRET + " Third.", ["a"])
    with pytest.raises(PurgeRefusedError, match="being synced by run r3"):
        purge_document(admin, BlobStore(tmp_path), "docs", "leak/1", None, "x", None)
    assert admin.execute("SELECT count(*) FROM purges").fetchone()[0] == 0


# ---------------------------------------------------------------- as each role over SQL

PURGE_SHAPE = ("UPDATE chunks SET text = '', search_prefix = NULL, embedding = NULL, tsv = ''::tsvector,"
               " purged_at = now() WHERE id = (SELECT min(id) FROM chunks)")


@pytest.mark.parametrize("role", [roles.WRITER, roles.READER, roles.COMPLIANCE])
def test_no_rag_role_can_purge_or_write_the_record(admin: psycopg.Connection, role: str, tmp_path: Path) -> None:
    version = admin.execute("SELECT min(id) FROM document_versions").fetchone()[0]
    for statement in (PURGE_SHAPE, "UPDATE chunks SET text = 'forged' WHERE id = (SELECT min(id) FROM chunks)",
                      f"INSERT INTO purges (version_id, reason, chunks, blob) VALUES ({version}, 'x', 0, 'none')",
                      "DELETE FROM purges", "UPDATE purges SET reason = 'x'",
                      "SELECT * FROM purge_record" if role != roles.COMPLIANCE else "TRUNCATE purges",
                      "SELECT * FROM purges" if role != roles.WRITER else "TRUNCATE purges"):
        assert isinstance(_attempt(admin, role, statement), errors.InsufficientPrivilege), (role, statement)
    admin.execute(sql.SQL("SET ROLE {}").format(sql.Identifier(role)))
    try:
        with pytest.raises(errors.InsufficientPrivilege):
            purge_document(admin, BlobStore(tmp_path), "docs", "leak/1", None, "x", None)
    finally:
        admin.execute("RESET ROLE")
    assert admin.execute("SELECT count(*) FROM chunks WHERE purged_at IS NOT NULL").fetchone()[0] == 0


def test_no_role_changes_a_chunk_but_by_a_recorded_purge(admin: psycopg.Connection) -> None:
    version = admin.execute("SELECT version_id FROM chunks WHERE id = (SELECT min(id) FROM chunks)").fetchone()[0]
    refused = _attempt(admin, None, PURGE_SHAPE)  # the superuser, without the record
    assert isinstance(refused, errors.RestrictViolation) and "only change a chunk takes is its purge" in str(refused)
    record = f"INSERT INTO purges (version_id, reason, chunks, blob) VALUES ({version}, 'test', 1, 'none'); "
    assert _attempt(admin, None, record + PURGE_SHAPE) is None  # with it: the one allowed change
    for partial in ("UPDATE chunks SET text = '' WHERE id = (SELECT min(id) FROM chunks)",  # vector left behind
                    PURGE_SHAPE.replace("text = ''", "text = 'rewritten'"),
                    PURGE_SHAPE.replace("purged_at = now()", "purged_at = now() - interval '1 year'"),
                    PURGE_SHAPE.replace("tsv = ''::tsvector", "tsv = to_tsvector('forged')"),
                    PURGE_SHAPE.replace("purged_at = now()", "purged_at = now(), ord = 99"),
                    PURGE_SHAPE.replace("purged_at = now()", "purged_at = now(), content_hash = 'x'"),
                    "DELETE FROM chunks WHERE id = (SELECT min(id) FROM chunks)"):
        assert isinstance(_attempt(admin, None, record + partial), errors.RestrictViolation), partial
    twice = record + PURGE_SHAPE + "; " + PURGE_SHAPE  # purged_at is set once
    assert isinstance(_attempt(admin, None, twice), errors.RestrictViolation)
    for statement in ("UPDATE purges SET reason = 'other'", "DELETE FROM purges", "TRUNCATE purges"):
        assert isinstance(_attempt(admin, None, record + statement), errors.RestrictViolation), statement
    assert admin.execute("SELECT count(*) FROM purges").fetchone()[0] == 0


def test_an_access_change_of_a_purged_live_version_copies_it_purged(
        admin: psycopg.Connection, index: dict[str, Any], tmp_path: Path) -> None:
    result = purge_document(admin, BlobStore(tmp_path), "docs", "leak/1", 2, "shared by mistake", None)
    assert result.same_content == []  # v1 has other text (one sentence less)
    with database.connect_as(index["url"], roles.WRITER) as writer:
        assert store.versions.live_versions(writer, "docs")["leak/1"].purged
        assert not store.versions.live_versions(writer, "docs")["plain/1"].purged
        assert store.versions.stage_acl_version(writer, "r3", "docs", "leak/1", ["a", "b"])
        store.versions.publish(writer, "r3")
    copies = [c for c in _chunks(admin, "leak/1") if c["version_no"] == 3]
    assert copies and all(c["text"] == "" and c["embedding"] is None and c["purged_at"] for c in copies)
    assert bm25_stats.kept(admin) == bm25_stats.recount(admin)
    everything = purge_document(admin, BlobStore(tmp_path), "docs", "leak/1", None, "all of it", None)
    assert [v["version"] for v in everything.purged] == [1] and everything.same_content == []
    assert [(v["version"], v["reason"]) for v in everything.already] == [(2, "shared by mistake"), (3, None)]


def test_purging_one_version_names_the_copies_an_access_change_made_of_it(
        admin: psycopg.Connection, index: dict[str, Any], tmp_path: Path) -> None:
    with database.connect_as(index["url"], roles.WRITER) as writer:
        assert store.versions.stage_acl_version(writer, "r3", "docs", "leak/1", ["a", "b"])
        store.versions.publish(writer, "r3")
    result = purge_document(admin, BlobStore(tmp_path), "docs", "leak/1", 2, "shared by mistake", None)
    assert [v["version"] for v in result.purged] == [2] and result.same_content == [3]
    assert SECRET in " ".join(c["text"] for c in _chunks(admin, "leak/1") if c["version_no"] == 3)

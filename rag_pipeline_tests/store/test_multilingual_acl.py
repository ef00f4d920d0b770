"""Migration 035 (issue 21, item 2, for the vector tables beside chunks): a multilingual vector
(034) and a migrated model's vector (023) carry their chunk's groups and version, and the reader's
policy tests them on the row itself.

On the access-history index of test_chunk_acl (five documents, then an edit, a revoke, a delete, a
narrowing and a widening, published), with a multilingual vector and a second model's vector for
every chunk: the copied columns cannot be forged or rewritten, a reader sees exactly the vectors
of the chunks it sees for any groups (history included), an index written before 035 is
backfilled to the same answers, and a reader's walk of either vector index reads no chunk for the
policy (before, it could hash every chunk the caller may see before its first row:
bench_search_scale.py --multilingual)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import numpy as np
import psycopg
import pytest
from conftest import fresh_database
from helpers import acl_first_run as first_run
from helpers import acl_second_run as stage_second_run
from helpers import explained, plan_nodes, stage_text

from rag_pipeline import store
from rag_pipeline.embedding import multilingual
from rag_pipeline.store import database, roles
from rag_pipeline.store.multilingual_vectors import Query

MIGRATION = "035_multilingual_row_groups"
GROUP_SETTINGS = ("a", "b", "c", "a,b,c", "", "nobody")
TABLES = ("chunk_multilingual", "model_vectors")
SECOND_MODEL = {"name": "second-model", "revision": "test", "weights_sha256": "2" * 64, "dimension": 384,
                "normalized": True, "max_tokens": 256}
# the policies an index written before 035 has (034's, 028's)
POLICIES_BEFORE = {
    "chunk_multilingual": "CREATE POLICY reader_groups ON chunk_multilingual FOR SELECT TO rag_reader"
                          " USING (EXISTS (SELECT 1 FROM chunks c WHERE c.id = chunk_multilingual.chunk_id))",
    "model_vectors": "CREATE POLICY reader_groups ON model_vectors FOR SELECT TO rag_reader"
                     " USING (EXISTS (SELECT 1 FROM chunks c WHERE c.id = model_vectors.chunk_id"
                     " AND c.acl_groups && (SELECT rag_session_groups())))",
}


def _history(url: str, embedder: Any) -> None:
    """Both runs of the access-history index published, and a multilingual vector and a second
    model's vector (random, 384-d) for every chunk, written as the stage step and a migration
    write them."""
    model_id = first_run(url, embedder)
    stage_second_run(url, embedder, model_id)
    with database.connect_as(url, roles.WRITER) as writer:
        store.versions.publish(writer, "r2")
        store.runs.update_run(writer, "r2", status="published", finished=True)
        ids = [r[0] for r in writer.execute("SELECT id FROM chunks ORDER BY id")]
        vectors = np.random.default_rng(3).standard_normal((len(ids), multilingual.DIMENSION)).astype(np.float32)
        store.multilingual_vectors.insert(writer, multilingual.MODEL, list(zip(ids, vectors, strict=True)))
        second = store.models.register_model(writer, SECOND_MODEL)
        store.model_vectors.insert_vectors(writer, second, list(zip(ids, vectors[::-1], strict=True)))


@pytest.fixture(scope="module")
def index(pg_server_url: str, embedder: Any) -> Iterator[str]:
    with fresh_database(pg_server_url) as url:
        _history(url, embedder)
        yield url


def seen(url: str, groups: str, table: str = "chunk_multilingual") -> tuple[set[int], set[int]]:
    """(chunk ids of the vectors in `table`, chunk ids of the chunks) a reader in `groups` may select."""
    assert table in TABLES
    with database.connect_as(url, roles.READER) as reader, reader.transaction():
        reader.execute("SELECT set_config('rag.groups', %s, true)", (groups,))
        vectors = {r[0] for r in reader.execute(f"SELECT chunk_id FROM {table}")}
        return vectors, {r[0] for r in reader.execute("SELECT id FROM chunks")}


FORGED = {  # a vector written by hand for chunk %s, claiming every group of the company and version %s
    "chunk_multilingual": "INSERT INTO chunk_multilingual (chunk_id, model, embedding, acl_groups, version_id)"
                          " SELECT %s, model, embedding, ARRAY['a', 'b', 'c', 'all-staff'], %s FROM chunk_multilingual LIMIT 1",
    "model_vectors": "INSERT INTO model_vectors (chunk_id, model_id, embedding, acl_groups, version_id)"
                     " SELECT %s, model_id, embedding, ARRAY['a', 'b', 'c', 'all-staff'], %s FROM model_vectors LIMIT 1",
}


@pytest.mark.parametrize("table", TABLES)
def test_a_vector_has_its_chunks_groups_and_version_whatever_the_insert_says(index: str, embedder: Any, table: str) -> None:
    with database.connect_as(index, roles.WRITER) as writer:
        model_id = writer.execute("SELECT id FROM embedding_models WHERE name <> %s", (SECOND_MODEL["name"],)).fetchone()[0]
        store.runs.create_run(writer, f"forge-{table}", ["docs"], model_id)  # staged, never published
        stage_text(writer, embedder, model_id, f"forge-{table}", f"forged/{table}", "Forged: zephyrine secrets.", ["board"])
        chunk_id, version_id = writer.execute(
            "SELECT c.id, c.version_id FROM chunks c JOIN document_versions v ON v.id = c.version_id"
            " JOIN documents d ON d.id = v.document_id WHERE d.uri = %s", (f"forged/{table}",)).fetchone()
        with writer.transaction(force_rollback=True):
            writer.execute(FORGED[table], (chunk_id, version_id - 1))
            stored = writer.execute(f"SELECT acl_groups, version_id FROM {table} WHERE chunk_id = %s",
                                    (chunk_id,)).fetchone()
    assert stored == (["board"], version_id), stored
    with database.connect(index) as admin:
        assert admin.execute(
            f"SELECT count(*) FROM {table} x JOIN chunks c ON c.id = x.chunk_id"
            " WHERE (x.acl_groups, x.version_id) IS DISTINCT FROM (c.acl_groups, c.version_id)").fetchone()[0] == 0


@pytest.mark.parametrize("table", TABLES)
@pytest.mark.parametrize("role", [roles.WRITER, roles.READER])
def test_a_vectors_groups_are_never_rewritten(index: str, role: str, table: str) -> None:
    with database.connect_as(index, role) as conn, pytest.raises(psycopg.errors.InsufficientPrivilege):
        conn.execute(f"UPDATE {table} SET acl_groups = ARRAY['everyone']")


@pytest.mark.parametrize("table", TABLES)
@pytest.mark.parametrize("groups", GROUP_SETTINGS)
def test_a_reader_sees_exactly_the_vectors_of_the_chunks_it_sees(index: str, groups: str, table: str) -> None:
    vectors, chunks = seen(index, groups, table)
    assert vectors == chunks
    assert bool(vectors) == (groups not in ("", "nobody"))


@pytest.mark.parametrize("table", TABLES)
def test_history_decides_as_for_chunks(index: str, table: str) -> None:
    """A superseded version's vectors are readable only by a caller in its own groups who may
    also read the document now: the narrowed document's first version ({a, b}, now {b}) by b,
    not a; the revoked one's ({a}, now {c}) by a and c together, by neither alone; the deleted
    one's by nobody."""
    with database.connect(index) as admin:
        first = dict(admin.execute(
            "SELECT d.uri, c.id FROM chunks c JOIN document_versions v ON v.id = c.version_id"
            " JOIN documents d ON d.id = v.document_id WHERE v.version_no = 1").fetchall())

    def vectors(groups: str) -> set[int]:
        return seen(index, groups, table)[0]

    assert first["narrow/1"] not in vectors("a") and first["narrow/1"] in vectors("b")
    assert first["revoke/1"] not in vectors("a") | vectors("c") and first["revoke/1"] in vectors("a,c")
    assert first["delete/1"] not in vectors("a,b,c")


def test_an_index_written_before_035_is_backfilled_to_the_same_answers(pg_server_url: str, embedder: Any) -> None:
    with fresh_database(pg_server_url) as url:
        with database.connect(url) as admin:  # back to 034: the policies that look the chunk up, no columns, no triggers
            for table, policy in POLICIES_BEFORE.items():
                admin.execute(f"DROP POLICY reader_groups ON {table}")
                admin.execute(policy)
                admin.execute(f"DROP TRIGGER {table}_groups_of_chunk ON {table}")
                admin.execute(f"ALTER TABLE {table} DROP COLUMN acl_groups, DROP COLUMN version_id")
            admin.execute("DELETE FROM schema_migrations WHERE version = %s", (MIGRATION,))
        _history(url, embedder)
        with database.connect(url) as admin, admin.transaction():
            admin.execute("SELECT rag_ensure_model_vector_index(384)")
        before = {(g, t): seen(url, g, t) for g in GROUP_SETTINGS for t in TABLES}
        with database.connect(url) as admin:
            assert store.migrations.migrate(admin) == [MIGRATION]
            # the HNSW indexes, dropped for the backfill, are there again and valid
            assert {r[0] for r in admin.execute(
                "SELECT c.relname FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid"
                " WHERE i.indisvalid AND c.relname IN ('chunk_multilingual_hnsw', 'model_vectors_hnsw_384')")} == {
                "chunk_multilingual_hnsw", "model_vectors_hnsw_384"}
            wrong = [admin.execute(
                f"SELECT count(*) FROM {table} x JOIN chunks c ON c.id = x.chunk_id"
                " WHERE (x.acl_groups, x.version_id) IS DISTINCT FROM (c.acl_groups, c.version_id)").fetchone()[0]
                for table in TABLES]
        assert wrong == [0, 0]
        assert {(g, t): seen(url, g, t) for g in GROUP_SETTINGS for t in TABLES} == before
        assert all(vectors == chunks for vectors, chunks in before.values())


WALKS = {  # a broad caller's walk of each vector table's HNSW index
    "chunk_multilingual": ("SELECT chunk_id FROM chunk_multilingual ORDER BY embedding <=> %s::vector(384) LIMIT 5",
                           "chunk_multilingual_hnsw"),
    "model_vectors": ("SELECT chunk_id FROM model_vectors WHERE vector_dims(embedding) = 384"
                      " ORDER BY embedding::vector(384) <=> %s::vector(384) LIMIT 5", "model_vectors_hnsw_384"),
}


@pytest.mark.parametrize("table", TABLES)
def test_a_readers_walk_of_the_vectors_reads_no_chunk_for_the_policy(index: str, table: str) -> None:
    """EXPLAIN ANALYZE of a walk of the table's HNSW index as the reader: the scan carries the
    policy as a test of the row (its groups against one InitPlan, its version against one hashed
    set of exceptions), and nothing in the plan reads chunks."""
    vector = np.random.default_rng(4).standard_normal(multilingual.DIMENSION).astype(np.float32)
    statement, index_name = WALKS[table]
    with database.connect(index) as admin, admin.transaction():
        admin.execute("SELECT rag_ensure_model_vector_index(384)")
    with database.connect_as(index, roles.READER) as reader, reader.transaction():
        reader.execute("SELECT set_config('rag.groups', 'a', true)")
        reader.execute("SET LOCAL enable_seqscan = off")  # the index a large table is walked by
        (plan,) = reader.execute("EXPLAIN (ANALYZE, FORMAT JSON) " + statement, (vector,)).fetchone()[0]
    found = list(plan_nodes(plan["Plan"]))
    (walk,) = [n for n in found if n.get("Index Name") == index_name]
    assert "acl_groups && (InitPlan" in walk.get("Filter", "") and "hashed SubPlan" in walk["Filter"], walk
    assert "chunks" not in {n.get("Relation Name") for n in found}, json.dumps(plan)[:2000]
    assert plan["Plan"]["Actual Rows"] > 0


def test_a_broad_callers_search_walks_the_multilingual_index_whatever_the_planner_guesses(
        index: str, embedder: Any) -> None:
    """The whole search statement of a broad caller, as the reader: the list walks
    chunk_multilingual_hnsw. On this small table the planner would rather read and sort it
    whole (it guesses that 0.5% of the rows pass the policy), which at 33,000 vectors cost 90 ms
    against the walk's 7; a selective caller's exact scan is left to the planner."""
    question = "zephyrine budget review"
    crossed = Query(np.random.default_rng(5).standard_normal(multilingual.DIMENSION).astype(np.float32),
                    multilingual.MODEL, -1.0, "index")
    broad = store.search._plan(10**6, 384, "chunks_embedding_hnsw_384", 0)  # what a caller seeing a large index gets
    rows: list[dict[str, Any]] = []

    def searched() -> None:
        with su.transaction():
            store.search_log.set_session_groups(su, ["a"])
            rows.extend(store.search.search_chunks(su, embedder.encode([question])[0], question, ["a"], model_id, 5,
                                                   plan=broad, multilingual=crossed, transaction=False))

    with database.connect(index) as su:
        model_id = su.execute("SELECT id FROM embedding_models WHERE name <> %s", (SECOND_MODEL["name"],)).fetchone()[0]
        plans = explained(su, searched)
    assert any(r["multilingual_rank"] is not None for r in rows), rows
    (statement,) = [p for p in plans if "chunk_multilingual" in p["Query Text"]]
    scans = {(n.get("Relation Name"), n["Node Type"], n.get("Index Name")) for n in plan_nodes(statement["Plan"])
             if n.get("Relation Name") == "chunk_multilingual"}
    assert scans == {("chunk_multilingual", "Index Scan", "chunk_multilingual_hnsw")}, scans

"""The stage step writes documents' versions on several connections at once (one per core),
and a first load into an empty index builds its vector index after the rows (migration 033).
What a user relies on is unchanged: every document staged exactly once per run with all its
chunks in order; a step that failed on one document, with the others staged beside it,
finishes on its retry without staging anything twice; every staged chunk is in the vector
index once the step is done, and an index that serves rows is never dropped."""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from pathlib import Path

import psycopg
import pytest
from psycopg.conninfo import conninfo_to_dict, make_conninfo

from rag_pipeline import store
from rag_pipeline.sync import stage
from rag_pipeline.sync.context import SyncContext

DOCS = 12
INDEX = "chunks_embedding_hnsw_384"


@pytest.fixture
def folder(tmp_path: Path, corpus_dir: Path) -> Path:
    """Twelve reports of three sections each, real abstracts (SciFact): several chunks each."""
    lines = (corpus_dir / "qa" / "scifact_beir" / "corpus.jsonl").read_text(encoding="utf-8").splitlines()
    abstracts = [json.loads(line) for line in lines[: 3 * DOCS]]
    docs = tmp_path / "docs"
    docs.mkdir()
    for i in range(DOCS):
        sections = "\n\n".join(f"## {s + 1}. {a['title']}\n\n{a['text']}" for s, a in enumerate(abstracts[3 * i: 3 * i + 3]))
        (docs / f"report-{i:02d}.md").write_text(f"# Report {i}\n\n{sections}\n", encoding="utf-8")
    return docs


def _embedded(tmp_path: Path, db_url: str, docs: Path, embedder, run_id: str) -> tuple[SyncContext, int]:
    from conftest import write_config
    from helpers import embedded_run

    return embedded_run(write_config(tmp_path, db_url, docs=docs), db_url, run_id, embedder)


def _staged(db_url: str, run_id: str) -> list[tuple]:
    """(uri, staged versions, chunks, ords in order, ids rising with ord) per document of the run."""
    with psycopg.connect(db_url) as conn:
        return conn.execute(
            "SELECT d.uri, count(DISTINCT v.id), count(c.id),"
            " array_agg(c.ord ORDER BY c.ord) = array_agg(c.ord ORDER BY c.id),"
            " min(c.ord) = 0 AND max(c.ord) = count(c.id) - 1"
            " FROM document_versions v JOIN documents d ON d.id = v.document_id JOIN chunks c ON c.version_id = v.id"
            " WHERE v.run_id = %s AND v.status = 'staged' GROUP BY d.uri ORDER BY d.uri",
            (run_id,),
        ).fetchall()


def _index_oid(db_url: str) -> int | None:
    with psycopg.connect(db_url) as conn:
        return conn.execute("SELECT to_regclass(%s)::oid", (INDEX,)).fetchone()[0]


def _unfound_through_index(db_url: str) -> list[int]:
    """Chunks whose own vector does not come back at distance 0 from a walk of the HNSW index:
    rows the index lacks. The walk is forced (no sequential scan) and checked to be the index's."""
    with psycopg.connect(db_url) as conn:
        conn.execute("SET enable_seqscan = off")
        conn.execute("SET hnsw.ef_search = 200")
        nearest = ("SELECT x.embedding::vector(384) <=> %s::vector(384) FROM chunks x"
                   " WHERE vector_dims(x.embedding) = 384 ORDER BY x.embedding::vector(384) <=> %s::vector(384) LIMIT 1")
        rows = conn.execute("SELECT id, embedding::text FROM chunks ORDER BY id").fetchall()
        assert len(rows) >= DOCS
        plan = "\n".join(r[0] for r in conn.execute("EXPLAIN " + nearest, (rows[0][1], rows[0][1])).fetchall())
        assert INDEX in plan, plan
        return [i for i, vector in rows if conn.execute(nearest, (vector, vector)).fetchone()[0] > 1e-6]


def test_a_first_load_builds_its_vector_index_after_the_rows_and_never_drops_a_serving_one(
        tmp_path: Path, db_url: str, folder: Path, embedder) -> None:
    ctx, model_id = _embedded(tmp_path, db_url, folder, embedder, "stage-index-1")
    registered = _index_oid(db_url)
    assert registered is not None  # recording the model built the (empty) index
    stage.stage_items(ctx, model_id)
    rebuilt = _index_oid(db_url)
    assert rebuilt is not None and rebuilt != registered  # dropped before the load, built after it
    assert _unfound_through_index(db_url) == []
    with psycopg.connect(db_url, autocommit=True) as conn:  # now it serves rows: never dropped
        assert store.models.defer_vector_index(conn, 384) is False
        assert store.models.defer_vector_index(conn, 4096) is False  # beyond HNSW: no index to defer
        for hostile in (True, "384); DROP TABLE chunks; --", -384, 0, None):  # the dimension reaches DDL
            with pytest.raises(store.models.ModelDimensionError):
                store.models.defer_vector_index(conn, hostile)
    assert _index_oid(db_url) == rebuilt


def test_a_reader_left_open_on_the_chunks_does_not_stall_a_first_load(
        tmp_path: Path, db_url: str, folder: Path, embedder) -> None:
    """Dropping the index would wait for a reader idle in its transaction (for ever, at the
    server's default lock_timeout), and every new search would queue behind the drop: the step
    gives up on deferring after a second instead, and loads into the index as it is, with the
    reader served throughout. The step runs beside the test so that a wait fails it, after
    minutes where a second is expected, instead of hanging the suite."""
    ctx, model_id = _embedded(tmp_path, db_url, folder, embedder, "stage-index-2")
    registered = _index_oid(db_url)
    with ThreadPoolExecutor(1) as pool, psycopg.connect(db_url) as reader:
        assert reader.execute("SELECT count(*) FROM chunks").fetchone()[0] == 0  # and its transaction stays open
        step = pool.submit(stage.stage_items, ctx, model_id)
        try:
            result = step.result(timeout=300)
        except FutureTimeout:
            reader.rollback()  # lets the drop through, so the step's thread ends
            pytest.fail("the first load waited for a reader's open transaction")
        assert reader.execute("SELECT count(*) FROM chunks").fetchone()[0] == result.counts["chunks"]  # still served
    assert result.counts["versions"] == DOCS
    assert _index_oid(db_url) == registered  # kept: the rows went into it one by one
    assert _unfound_through_index(db_url) == []


def test_every_document_is_staged_once_with_its_chunks_in_order(tmp_path: Path, db_url: str, folder: Path,
                                                                  embedder) -> None:
    assert stage.stage_writers() >= 1
    ctx, model_id = _embedded(tmp_path, db_url, folder, embedder, "stage-writers-1")
    result = stage.stage_items(ctx, model_id)
    rows = _staged(db_url, ctx.run_id)
    assert len(rows) == DOCS and all(r[1] == 1 and r[3] and r[4] for r in rows)
    assert result.counts["versions"] == DOCS and result.counts["chunks"] == sum(r[2] for r in rows)
    assert all(r[2] >= 3 for r in rows), rows  # several chunks each: the order check means something
    again = stage.stage_items(ctx, model_id)  # a retried step: everything is staged already
    assert again.counts.get("versions", 0) == 0 and _staged(db_url, ctx.run_id) == rows


def test_a_stage_step_failing_on_one_document_finishes_on_retry_without_staging_twice(
        tmp_path: Path, db_url: str, folder: Path, embedder) -> None:
    """A real fault: another session holds the row of one document's work item, and the step's
    writers give up on it after a second (lock_timeout). The step fails; its retry stages
    what is left and nothing twice."""
    params = conninfo_to_dict(db_url)
    impatient = make_conninfo(**{**params, "options": f"{params.get('options') or ''} -c lock_timeout=1000".strip()})
    ctx, model_id = _embedded(tmp_path, db_url, folder, embedder, "stage-writers-2")
    ctx = SyncContext(config=ctx.config, db_url=impatient, run_id=ctx.run_id)
    blocked = "report-05.md"
    with psycopg.connect(db_url) as holder:
        holder.execute("SELECT 1 FROM run_items WHERE run_id = %s AND uri LIKE %s FOR UPDATE",
                       (ctx.run_id, f"%{blocked}"))
        with pytest.raises(psycopg.errors.LockNotAvailable):
            stage.stage_items(ctx, model_id)
        first = _staged(db_url, ctx.run_id)
        assert not any(uri.endswith(blocked) for uri, *_ in first)
        assert _index_oid(db_url) is None  # left out until the step finishes
        assert len(first) >= 5  # those before it in the batch, at least (more where writers run beside it)
        holder.rollback()
    retry = stage.stage_items(ctx, model_id)
    rows = _staged(db_url, ctx.run_id)
    assert retry.counts["versions"] == 1
    assert len(rows) == DOCS and all(r[1] == 1 and r[3] and r[4] for r in rows)
    assert _unfound_through_index(db_url) == []  # the retry built it over both attempts' rows


def _pending_pages(db_url: str) -> dict[str, int]:
    """Pages each GIN index of the schema still holds in its pending list, read by merging them
    (as the owner): what every scan of that index would otherwise have read in full."""
    with psycopg.connect(db_url, autocommit=True) as conn:
        names = [r[0] for r in conn.execute(
            "SELECT c.relname FROM pg_class c JOIN pg_am a ON a.oid = c.relam"
            " WHERE a.amname = 'gin' AND c.relnamespace = current_schema()::regnamespace ORDER BY 1")]
        assert {"chunks_tsv", "chunks_section_keys", "document_versions_acl"} <= set(names)
        return {n: conn.execute("SELECT gin_clean_pending_list(%s::regclass)", (n,)).fetchone()[0] for n in names}


def test_stage_and_publish_leave_no_pending_list_for_the_searches_after_them(
        tmp_path: Path, db_url: str, folder: Path, embedder) -> None:
    """A GIN index takes new rows into a pending list that every search scanning it reads in
    full until autovacuum merges it (migration 037): the stage step and publish merge what they
    wrote, so neither the gate's searches nor the first searches after a sync pay for it. Only
    the writer may merge; a reader may not call the owner's function."""
    ctx, model_id = _embedded(tmp_path, db_url, folder, embedder, "stage-pending-1")
    with psycopg.connect(db_url, autocommit=True) as conn:  # a list that does not start empty
        conn.execute("SELECT rag_flush_pending_lists()")
    result = stage.stage_items(ctx, model_id)
    assert result.counts["chunks"] >= DOCS
    assert set(_pending_pages(db_url).values()) == {0}
    with ctx.connect() as conn:  # as the stage step's role
        assert store.versions.publish(conn, ctx.run_id)["published"] == DOCS
    assert set(_pending_pages(db_url).values()) == {0}
    with store.database.connect_as(db_url, store.roles.READER) as reader, pytest.raises(
            psycopg.errors.InsufficientPrivilege):
        reader.execute("SELECT rag_flush_pending_lists()")


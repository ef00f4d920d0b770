"""Migration 038 (issue 21): a chunk's vector and BM25 weights live in its row, so a search that
computes distances or approximate scores reads no TOAST; rows written before the migration move
into the row when the table is rewritten, and answer the same."""

from __future__ import annotations

from pathlib import Path

import psycopg

from rag_pipeline.retrieval import search as retrieval
from rag_pipeline.store import database
from rag_pipeline.store.migrations import sql_dir
from rag_pipeline_tests.helpers import index_documents

# Long sections: each chunk's row is well over the 2 kB at which PostgreSQL moves values out.
BODY = ("Travel claims are filed within thirty days of return with every receipt attached. " * 12).strip()
DOCS = {f"policy-{n}.md": (f"Policy {n}", f"Section {n}. {BODY} Rule {n} applies to team {n}.") for n in range(6)}


def _placement(conn: psycopg.Connection) -> dict[str, tuple[int, int]]:
    """Per column, (chunks whose value is stored out of line, chunks)."""
    found = {}
    for column in ("embedding", "bm25", "acl_groups", "text", "tsv"):
        found[column] = conn.execute(
            f"SELECT count(*) FILTER (WHERE pg_column_toast_chunk_id({column}) IS NOT NULL), count(*) FROM chunks"
        ).fetchone()
    return found


def test_new_chunks_keep_their_vector_and_weights_in_the_row(db_url: str, embedder) -> None:
    index_documents(db_url, embedder, DOCS, "staff")
    with database.connect(db_url) as conn:
        placed = _placement(conn)
        widths = conn.execute("SELECT min(pg_column_size(c.*)) FROM chunks c").fetchone()[0]
    assert placed["embedding"][1] >= len(DOCS) and widths > 2_000, (placed, widths)
    # what every candidate's distance, approximate score and row policy read: never out of line
    assert placed["embedding"][0] == placed["bm25"][0] == placed["acl_groups"][0] == 0, placed


def test_rows_written_before_move_into_the_row_when_the_table_is_rewritten(db_url: str, embedder) -> None:
    """As an index written before 038 holds them: vectors out of line. The migration alone leaves
    those rows (it cannot rewrite the table in its transaction); VACUUM FULL moves them in, and
    every search answers as before."""
    with database.connect(db_url) as conn:
        conn.execute("ALTER TABLE chunks RESET (toast_tuple_target)")
        conn.execute("ALTER TABLE chunks ALTER COLUMN embedding SET STORAGE EXTERNAL,"
                     " ALTER COLUMN bm25 SET STORAGE EXTERNAL, ALTER COLUMN acl_groups SET STORAGE EXTENDED")
    index_documents(db_url, embedder, DOCS, "staff")
    migration = Path(sql_dir()) / "migrations" / "038_inline_vectors.sql"
    with database.connect(db_url) as conn:
        conn.execute(migration.read_text(encoding="utf-8"))  # what the migration runs, again
        conn.commit()
        before = _placement(conn)
        assert before["embedding"][0] == before["embedding"][1] > 0, before
        searched = {mode: [(h.chunk_id, round(h.score, 9)) for h in retrieval.search(
            conn, embedder, "travel claims for team 3", ["staff"], k=5, mode=mode, log=False)]
            for mode in ("vector", "fulltext", "hybrid+rerank")}
    with psycopg.connect(db_url, autocommit=True) as admin:
        admin.execute("VACUUM FULL chunks")
    with database.connect(db_url) as conn:
        after = _placement(conn)
        again = {mode: [(h.chunk_id, round(h.score, 9)) for h in retrieval.search(
            conn, embedder, "travel claims for team 3", ["staff"], k=5, mode=mode, log=False)]
            for mode in ("vector", "fulltext", "hybrid+rerank")}
    assert after["embedding"] == (0, before["embedding"][1]) and after["bm25"][0] == after["acl_groups"][0] == 0, after
    assert again == searched and all(searched.values()), (searched, again)

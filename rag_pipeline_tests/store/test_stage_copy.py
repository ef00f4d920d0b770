"""Staging writes chunk rows with COPY: what a search later reads back is exactly what the chunker
and the model produced, whatever the text holds; a failed or nested staging leaves nothing
behind; and a run's step results stay bounded however many documents it holds."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import psycopg
import pytest
from conftest import write_config

from rag_pipeline import store
from rag_pipeline.store import database, text_search
from rag_pipeline.sync import clean, parse, plan
from rag_pipeline.sync.context import SyncContext

HOSTILE_TEXTS = [
    "tab\there, newline\nthere, carriage\rreturn, backslash \\ and \\N and \\.",
    "quotes ' \" `` and a COPY end marker on its own line:\n\\.\nafter it",
    "unicode: Zürich, 東京, עברית, emoji 🧪, combining e\u0301, zero-width\u200bjoin, \u2028line sep",
    "commas, {braces}, \"NULL\", NULL, semicolons; -- a comment; DROP TABLE chunks;",
    "x" * 20000,  # a long chunk
]


def _chunks(dim: int) -> tuple[list[dict], np.ndarray]:
    chunks = []
    for ord_, text in enumerate(HOSTILE_TEXTS):
        chunks.append({
            "ord": ord_,
            "section_path": [] if ord_ == 0 else ["A, \"quoted\" {part}", "tab\tand\nnewline", "NULL", "\\"][: ord_],
            "page_start": None if ord_ % 2 else ord_ + 1,
            "page_end": None if ord_ % 2 else ord_ + 2,
            "char_start": ord_ * 100,
            "char_end": ord_ * 100 + len(text),
            "token_count": 7 + ord_,
            "content_hash": f"hash-{ord_}\t\\",
            "text": text,
            "search_prefix": None if ord_ == 1 else f"Doc: prefix {ord_}\n",
            "search_text": f"searchable {text}",
        })
    rng = np.random.default_rng(7)
    vectors = rng.standard_normal((len(chunks), dim)).astype(np.float32)
    vectors[0, :4] = [0.0, -0.0, 1e-38, 65504.0]  # tiny, signed-zero and large floats survive exactly
    return chunks, vectors


def _model(conn: psycopg.Connection, dimension: int) -> int:
    return store.models.register_model(conn, {"name": "copy-test", "revision": "r", "weights_sha256": "w",
                                              "dimension": dimension, "normalized": True, "max_tokens": 256})


def _stored(conn: psycopg.Connection, version_id: int) -> list[tuple]:
    return conn.execute(
        "SELECT ord, section_path, page_start, page_end, char_start, char_end, token_count, content_hash,"
        " text, search_prefix, model_id, embedding, ts_config::text, tsv::text, id"
        " FROM chunks WHERE version_id = %s ORDER BY ord",
        (version_id,),
    ).fetchall()


def _version_id(conn: psycopg.Connection, uri: str) -> int:
    return conn.execute(
        "SELECT v.id FROM document_versions v JOIN documents d ON d.id = v.document_id WHERE d.uri = %s", (uri,)
    ).fetchone()[0]


def test_staged_chunks_read_back_exactly_as_given_with_hostile_text(db_url: str) -> None:
    """As the writer role the sync acts as: text, section path, pages, prefix, model and every
    float of the embedding round-trip unchanged; tsv is that of the search text; ids follow ord."""
    with database.connect(db_url) as conn:
        model_id = _model(conn, 8)
        store.runs.create_run(conn, "r1", ["s"], model_id)
        assert store.roles.assume(conn, store.roles.WRITER)
        chunks, vectors = _chunks(8)
        fields = {"checksum": "c", "acl_groups": ["g", "h"], "model_id": model_id, "language": "de"}
        assert store.versions.stage_content_version(conn, "r1", "s", "doc \t\n.md", fields, chunks, vectors)
        rows = _stored(conn, _version_id(conn, "doc \t\n.md"))
        config = text_search.config_for_language("de")
        assert len(rows) == len(chunks)
        for row, chunk, vector in zip(rows, chunks, vectors):
            assert row[:10] == (chunk["ord"], chunk["section_path"], chunk["page_start"], chunk["page_end"],
                                chunk["char_start"], chunk["char_end"], chunk["token_count"], chunk["content_hash"],
                                chunk["text"], chunk["search_prefix"])
            assert row[10] == model_id
            assert np.array_equal(row[11].to_numpy(), vector)
            assert row[12] == config
            expected_tsv = conn.execute("SELECT to_tsvector(%s::regconfig, %s)::text", (config, chunk["search_text"])).fetchone()[0]
            assert row[13] == expected_tsv
        assert [r[14] for r in rows] == sorted(r[14] for r in rows)
        assert conn.execute("SELECT acl_groups FROM document_versions WHERE id = %s", (_version_id(conn, "doc \t\n.md"),)).fetchone()[0] == ["g", "h"]


def test_a_staging_that_fails_leaves_no_rows_and_the_next_one_on_the_same_connection_works(db_url: str) -> None:
    """The temporary table behind COPY is created inside the failed transaction and rolled back
    with it; the next document on the connection must still stage, and no row of the failed one
    may reach chunks or be carried over into it."""
    with database.connect(db_url) as conn:
        model_id = _model(conn, 4)
        store.runs.create_run(conn, "r1", ["s"], model_id)
        chunks, vectors = _chunks(4)
        broken = [*chunks[:2], {**chunks[1], "ord": 1}]  # duplicate ord: the unique key refuses it
        with pytest.raises(psycopg.errors.UniqueViolation):
            store.versions.stage_content_version(conn, "r1", "s", "bad.md", {"model_id": model_id}, broken, vectors[:3])
        assert conn.execute("SELECT count(*) FROM chunks").fetchone()[0] == 0
        assert store.versions.stage_content_version(conn, "r1", "s", "good.md", {"model_id": model_id}, chunks[:2], vectors[:2])
        assert [r[8] for r in _stored(conn, _version_id(conn, "good.md"))] == [c["text"] for c in chunks[:2]]


def test_two_documents_staged_in_one_outer_transaction_keep_their_own_chunks(db_url: str) -> None:
    """Each staging is a savepoint inside the caller's transaction: the rows copied for the first
    document must not be inserted again under the second."""
    with database.connect(db_url) as conn:
        model_id = _model(conn, 4)
        store.runs.create_run(conn, "r1", ["s"], model_id)
        chunks, vectors = _chunks(4)
        with conn.transaction():
            store.versions.stage_content_version(conn, "r1", "s", "one.md", {"model_id": model_id}, chunks[:3], vectors[:3])
            store.versions.stage_content_version(conn, "r1", "s", "two.md", {"model_id": model_id}, chunks[3:], vectors[3:])
        assert [r[8] for r in _stored(conn, _version_id(conn, "one.md"))] == HOSTILE_TEXTS[:3]
        assert [r[8] for r in _stored(conn, _version_id(conn, "two.md"))] == HOSTILE_TEXTS[3:]


def test_staging_goes_on_after_an_outer_rollback_and_after_a_role_switch(db_url: str) -> None:
    """The session's COPY table must not be assumed to exist when the transaction that created
    it was rolled back by the caller, and must stay usable when the session later acts as the
    writer role (as the sync's connections do)."""
    with database.connect(db_url) as conn:
        model_id = _model(conn, 4)
        store.runs.create_run(conn, "r1", ["s"], model_id)
        chunks, vectors = _chunks(4)

        class Abandon(Exception):
            pass

        with pytest.raises(Abandon), conn.transaction():
            store.versions.stage_content_version(conn, "r1", "s", "gone.md", {"model_id": model_id}, chunks[:2], vectors[:2])
            raise Abandon
        assert store.versions.stage_content_version(conn, "r1", "s", "one.md", {"model_id": model_id}, chunks[:2], vectors[:2])
        assert store.roles.assume(conn, store.roles.WRITER)
        assert store.versions.stage_content_version(conn, "r1", "s", "two.md", {"model_id": model_id}, chunks[2:], vectors[2:])
        assert [r[8] for r in _stored(conn, _version_id(conn, "two.md"))] == HOSTILE_TEXTS[2:]
        assert conn.execute("SELECT count(*) FROM documents WHERE uri = 'gone.md'").fetchone()[0] == 0


def test_a_version_without_chunks_stages_with_no_rows(db_url: str) -> None:
    with database.connect(db_url) as conn:
        model_id = _model(conn, 4)
        store.runs.create_run(conn, "r1", ["s"], model_id)
        assert store.versions.stage_content_version(conn, "r1", "s", "empty.md", {"model_id": model_id}, [], np.zeros((0, 4), np.float32))
        assert _stored(conn, _version_id(conn, "empty.md")) == []


def test_the_clean_steps_per_document_table_is_capped_and_counts_every_document(
    tmp_path: Path, db_url: str, embedder, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A run's result must not grow with the corpus: past the cap, documents are counted, not
    listed (the cap is lowered here so a small folder crosses it)."""
    monkeypatch.setattr(clean, "LISTED_DOCUMENTS", 10)
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "_access.yaml").write_text("groups: [all-staff]\n")
    for i in range(40):
        (docs / f"doc-{i:03d}.md").write_text(f"# Note {i}\n\nDistinct content number {i} about topic {i * 7}.\n")
    from rag_pipeline.config import load_config

    ctx = SyncContext(config=load_config(write_config(tmp_path, db_url, docs=docs)), db_url=db_url, run_id="r-many")
    with ctx.connect() as conn:
        model_id = store.models.register_model(conn, embedder.identity.to_dict())
    plan.plan_run(ctx, model_id)
    parsed = parse.parse_items(ctx)
    cleaned = clean.clean_items(ctx)
    assert parsed.counts["parsed"] == 40
    assert cleaned.documents == 40
    assert len(cleaned.per_document) == 10

"""The typed work item and step results: what crosses from one step to the next (through the
database) and from one shard's process to the combining one. The stored JSON is the format
earlier versions wrote, so a run interrupted before an upgrade resumes after it; an item stored
by an older version takes the defaults the steps always gave, and one that cannot be read stops
the step with its document and step named."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from rag_pipeline.chunking.chunks import Chunk
from rag_pipeline.parsing.types import Element, ParsedDocument
from rag_pipeline.sync.chunk import ChunkResult
from rag_pipeline.sync.clean import CleanResult
from rag_pipeline.sync.embed import EmbedResult
from rag_pipeline.sync.items import Chunked, Cleaned, Parsed, StoredItemError, WorkItem, embeddings_to_bytes
from rag_pipeline.sync.parse import LISTED_WARNINGS, ParseResult
from rag_pipeline.sync.plan import PlanResult
from rag_pipeline.sync.publish import PublishResult
from rag_pipeline.sync.stage import StageResult
from rag_pipeline.sync.steps import SHARDED_STEPS

ELEMENTS = [Element("heading", "Travel", level=1, page=1), Element("paragraph", "Book early.", page=1,
                                                                     bbox=(1.0, 2.0, 3.0, 4.0), page_height=800.0)]
CHUNK = Chunk(ord=0, text="Book early.", section_path=["Travel"], page_start=1, page_end=1, char_start=0, char_end=11,
              token_count=4, content_hash="h0", search_text="Travel\nBook early.", search_prefix="Travel\n")
ROW = {"source": "docs", "uri": "policies/travel.md", "action": "new", "checksum": "c", "blob_sha256": "b" * 64,
       "size_bytes": 12, "acl_groups": ["all-staff"]}


def _json(data: dict) -> dict:
    return json.loads(json.dumps(data))  # as it comes back from a jsonb column


def test_each_payload_is_stored_as_before_and_reads_back_the_same() -> None:
    parsed = Parsed(ParsedDocument(ELEMENTS, "p/1", page_count=2, warnings=["w"], ocr_pages=[2], title="T"), {"secret:x": 1})
    assert set(parsed.to_dict()) == {"elements", "parser", "page_count", "warnings", "ocr_pages", "title", "safety"}
    assert Parsed.from_dict(_json(parsed.to_dict())) == parsed
    cleaned = Cleaned(ELEMENTS, "p/1", {"page_number": 3}, "T")
    assert cleaned.to_dict() == {"elements": [e.to_dict() for e in ELEMENTS], "parser": "p/1",
                                 "cleaning": {"page_number": 3}, "title": "T"}
    assert Cleaned.from_dict(_json(cleaned.to_dict())) == cleaned
    chunked = Chunked([CHUNK], "p/1", {"page_number": 3}, "T", "english")
    assert chunked.to_dict() == {"elements": None, "parser": "p/1", "cleaning": {"page_number": 3}, "title": "T",
                                 "chunks": [CHUNK.to_dict()], "language": "english"}
    assert Chunked.from_dict(_json(chunked.to_dict())) == chunked


def test_a_row_becomes_a_work_item_once_with_every_payload_typed() -> None:
    matrix = np.arange(6, dtype=np.float32).reshape(1, 6)
    chunked = Chunked([CHUNK], "p/1")
    item = WorkItem.from_row({**ROW, "chunks": _json(chunked.to_dict()), "embeddings": embeddings_to_bytes(matrix)},
                             "stage", ("chunks", "embeddings"))
    assert (item.source, item.uri, item.action, item.acl_groups) == ("docs", "policies/travel.md", "new", ["all-staff"])
    assert item.chunked == chunked and item.parsed is None and item.cleaned is None
    assert np.array_equal(item.embeddings, matrix)
    empty = WorkItem.from_row({**ROW, "chunks": _json(Chunked([], "p/1").to_dict()), "embeddings": b""}, "stage")
    assert empty.embeddings.shape == (0, 1)


def test_an_item_stored_by_an_older_version_takes_the_defaults_the_steps_always_gave() -> None:
    old_parsed = {"elements": [e.to_dict() for e in ELEMENTS], "parser": "p/0"}  # no safety, title, pages, warnings
    item = WorkItem.from_row({**ROW, "parsed": old_parsed}, "clean", ("parsed",))
    assert item.parsed.safety == {} and item.parsed.document.title is None and item.parsed.document.page_count is None
    old_cleaned = {"elements": [e.to_dict() for e in ELEMENTS], "parser": "p/0"}
    assert WorkItem.from_row({**ROW, "cleaned": old_cleaned}, "chunk").cleaned == Cleaned(ELEMENTS, "p/0", {}, None)
    chunk = {k: v for k, v in CHUNK.to_dict().items() if k not in ("page_start", "page_end", "search_prefix")}
    chunked = WorkItem.from_row({**ROW, "chunks": {"chunks": [chunk], "parser": "p/0"}}, "embed").chunked
    assert chunked.cleaning == {} and chunked.language is None
    assert (chunked.chunks[0].page_start, chunked.chunks[0].page_end, chunked.chunks[0].search_prefix) == (None, None, "")


@pytest.mark.parametrize(("column", "payload", "step", "says"), [
    ("parsed", {"parser": "p"}, "clean", "lacks 'elements'"),
    ("parsed", {"elements": [{"kind": "paragraph"}], "parser": "p"}, "clean", "cannot be read"),
    ("cleaned", {"elements": []}, "chunk", "lacks 'parser'"),
    ("cleaned", ["not", "an", "object"], "chunk", "not an object"),
    ("chunks", {"parser": "p", "elements": None}, "embed", "lacks 'chunks'"),
    ("chunks", {"parser": "p", "chunks": [{**CHUNK.to_dict(), "vector": [1]}]}, "embed", "unknown chunk fields"),
    ("chunks", {"parser": "p", "chunks": [{"text": "x"}]}, "embed", "cannot be read"),
])
def test_a_payload_that_cannot_be_read_names_the_document_and_the_step(column: str, payload, step: str, says: str) -> None:
    with pytest.raises(StoredItemError, match=rf"'policies/travel.md' at step {step}: .*{says}"):
        WorkItem.from_row({**ROW, column: payload}, step, (column,))


def test_a_missing_payload_or_bad_vectors_name_the_document_and_the_step() -> None:
    with pytest.raises(StoredItemError, match=r"'policies/travel.md' at step clean: no stored parsed output"):
        WorkItem.from_row(ROW, "clean", ("parsed",))
    with pytest.raises(StoredItemError, match=r"'policies/travel.md' at step stage: the stored embeddings output"):
        WorkItem.from_row({**ROW, "chunks": Chunked([CHUNK], "p").to_dict(), "embeddings": b"\x00" * 5}, "stage")
    with pytest.raises(StoredItemError, match=r"'policies/travel.md' at step parse: the stored row lacks 'source'"):
        WorkItem.from_row({**ROW, "source": None}, "parse")


def test_parse_results_of_shards_combine_and_cross_processes_as_dicts() -> None:
    shards = [ParseResult({"parsed": 2, "pages": 5}, ["a.pdf: w1"], 1), ParseResult({"parsed": 1, "quarantined": 1}, [], 3),
              ParseResult({"parsed": 4, "warning_count": 300}, [f"b.pdf: w{i}" for i in range(300)], 2)]
    combined = ParseResult.combine([ParseResult.from_dict(_json(r.to_dict())) for r in shards])
    assert combined.counts == {"parsed": 7, "pages": 5, "quarantined": 1, "warning_count": 300}
    assert combined.parsers == 3 and len(combined.warnings) == LISTED_WARNINGS and combined.warnings[0] == "a.pdf: w1"
    assert ParseResult.combine([]) == ParseResult(counts={}, warnings=[], parsers=0)


def test_clean_results_of_shards_combine_with_the_table_capped(monkeypatch: pytest.MonkeyPatch) -> None:
    from rag_pipeline.sync import clean

    monkeypatch.setattr(clean, "LISTED_DOCUMENTS", 3)
    shards = [CleanResult({"page_number": 2}, {"a": {"page_number": 2}, "b": {}}, 2),
              CleanResult({"page_number": 1, "secret:x": 1}, {"c": {"page_number": 1}, "d": {"secret:x": 1}}, 5)]
    combined = CleanResult.combine([CleanResult.from_dict(_json(r.to_dict())) for r in shards])
    assert combined.removed == {"page_number": 3, "secret:x": 1} and combined.documents == 7
    assert list(combined.per_document) == ["a", "b", "c"]
    assert CleanResult.combine([]) == CleanResult(removed={}, per_document={}, documents=0)


def test_chunk_and_embed_results_of_shards_combine() -> None:
    chunks = [ChunkResult({"documents": 1, "chunks": 3, "tokens": 90}), ChunkResult({"documents": 2, "chunks": 1, "tokens": 10})]
    assert ChunkResult.combine([ChunkResult.from_dict(_json(r.to_dict())) for r in chunks]).counts == {
        "documents": 3, "chunks": 4, "tokens": 100}
    assert ChunkResult.combine([]) == ChunkResult(counts={})
    embeds = [EmbedResult({"reused": 4}), EmbedResult({"embedded": 2, "reused": 1}, {"backend": "onnx"}),
              EmbedResult({"embedded": 1}, {"backend": "reference"})]
    combined = EmbedResult.combine([EmbedResult.from_dict(_json(r.to_dict())) for r in embeds])
    assert combined.counts == {"reused": 5, "embedded": 3} and combined.backend == {"backend": "onnx"}
    assert EmbedResult.combine([]) == EmbedResult(counts={}, backend=None)


def test_every_sharded_step_is_registered_with_its_result_type() -> None:
    assert list(SHARDED_STEPS) == ["parse", "clean", "chunk", "embed"]
    for step in SHARDED_STEPS.values():
        empty = step.result.combine([])
        assert step.result.from_dict(_json(empty.to_dict())) == empty


def test_the_unsharded_results_cross_processes_as_dicts() -> None:
    for result in (StageResult({"versions": 2, "chunks": 9}), PublishResult({"published": 2})):
        assert type(result).from_dict(_json(result.to_dict())) == result
    plan = PlanResult()
    plan.counts.update({"new": 2})
    plan.per_source["docs"] = plan.counts.copy()
    assert PlanResult.from_dict(_json(plan.to_dict())) == plan


def test_a_run_whose_items_were_stored_by_an_older_version_resumes(tmp_path: Path, db_url: str, demo_copy: Path,
                                                                     embedder) -> None:
    """Parsed items as an older version stored them (no safety counts, no title, no pages) are
    cleaned, chunked and embedded; one whose payload is damaged stops clean, named."""
    from conftest import write_config
    from helpers import query

    from rag_pipeline import store
    from rag_pipeline.config import load_config
    from rag_pipeline.sync import chunk, clean, embed, parse, plan
    from rag_pipeline.sync.context import SyncContext

    ctx = SyncContext(config=load_config(write_config(tmp_path, db_url, docs=demo_copy)), db_url=db_url, run_id="old-items")
    with ctx.connect() as conn:
        model_id = store.models.register_model(conn, embedder.identity.to_dict())
    plan.plan_run(ctx, model_id)
    assert parse.parse_items(ctx).counts["parsed"] == 7
    rows = query(db_url, "SELECT uri, parsed FROM run_items WHERE run_id = %s ORDER BY uri", ctx.run_id)
    with ctx.connect() as conn, conn.transaction():
        for uri, parsed in rows:
            old = {"elements": parsed["elements"], "parser": parsed["parser"]}
            conn.execute("UPDATE run_items SET parsed = %s::jsonb WHERE run_id = %s AND uri = %s",
                         (json.dumps(old), ctx.run_id, uri))
        damaged = rows[0][0]
        conn.execute("UPDATE run_items SET parsed = '{\"parser\": \"p\"}'::jsonb WHERE run_id = %s AND uri = %s",
                     (ctx.run_id, damaged))
    with pytest.raises(StoredItemError, match=rf"{damaged!r} at step clean: the stored parsed output lacks 'elements'"):
        clean.clean_items(ctx)
    with ctx.connect() as conn, conn.transaction():
        store.work_items.quarantine_item(conn, ctx.run_id, "larkspur", damaged, "clean", "damaged by the test")
    assert clean.clean_items(ctx).documents == 6
    assert chunk.chunk_items(ctx, embedder).counts["documents"] == 6
    assert embed.embed_items(ctx, embedder, model_id).counts["embedded"] > 0
    assert query(db_url, "SELECT count(*) FROM run_items WHERE run_id = %s AND stage = 'embedded'", ctx.run_id)[0][0] == 6


def test_a_document_a_step_fails_on_is_named_and_the_rest_is_kept(tmp_path: Path, db_url: str, demo_copy: Path,
                                                                   embedder, monkeypatch: pytest.MonkeyPatch) -> None:
    """A defect that makes clean or chunk raise on one document (injected: no real document is
    known to) stops the step with that document and source named and its cause chained; the
    documents done before it stay recorded, and the step run again once it is fixed finishes the
    rest without redoing them."""
    from conftest import write_config
    from helpers import query

    from rag_pipeline import store
    from rag_pipeline.config import load_config
    from rag_pipeline.sync import chunk, clean, parse, plan
    from rag_pipeline.sync.context import SyncContext
    from rag_pipeline.sync.failures import DocumentFailedError

    ctx = SyncContext(config=load_config(write_config(tmp_path, db_url, docs=demo_copy)), db_url=db_url, run_id="named")
    with ctx.connect() as conn:
        model_id = store.models.register_model(conn, embedder.identity.to_dict())
    plan.plan_run(ctx, model_id)
    assert parse.parse_items(ctx).counts["parsed"] == 7
    uris = [u for (u,) in query(db_url, "SELECT uri FROM run_items WHERE run_id = %s AND stage = 'parsed' ORDER BY uri",
                                ctx.run_id)]

    def stages() -> dict[str, int]:
        return dict(query(db_url, "SELECT stage, count(*) FROM run_items WHERE run_id = %s GROUP BY stage", ctx.run_id))

    broken = uris[3]
    first_text = query(db_url, "SELECT parsed FROM run_items WHERE run_id = %s AND uri = %s",
                       ctx.run_id, broken)[0][0]["elements"][0]["text"]
    real_clean, real_chunk = clean.clean_elements, chunk.chunk_document

    def clean_fails_on_one(elements, *args, **kwargs):
        if elements and elements[0].text == first_text:  # clean is given the elements, not the item
            raise KeyError("a defect")
        return real_clean(elements, *args, **kwargs)

    def chunk_fails_on_one(cleaned, uri, *args):
        if uri == broken:
            raise KeyError("a defect")
        return real_chunk(cleaned, uri, *args)

    for step, module, target, real, fake, run, stage in (
            ("clean", clean, "clean_elements", real_clean, clean_fails_on_one, lambda: clean.clean_items(ctx).documents, "cleaned"),
            ("chunk", chunk, "chunk_document", real_chunk, chunk_fails_on_one,
             lambda: chunk.chunk_items(ctx, embedder).counts["documents"], "chunked")):
        monkeypatch.setattr(module, target, fake)
        with pytest.raises(DocumentFailedError) as error:
            run()
        message = str(error.value)
        assert f"{step} step: document {broken!r} of source 'larkspur'" in message and "KeyError" in message
        assert isinstance(error.value.__cause__, KeyError)
        assert stages().get(stage) == 3, stages()  # the three documents before it are kept
        monkeypatch.setattr(module, target, real)
        assert run() == 4  # the rest, not the three again
    assert stages() == {"chunked": 7}


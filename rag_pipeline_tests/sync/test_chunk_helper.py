"""Helper processes of the chunk step (sync/chunk_helper.py). What a user relies on: a document
chunked by a helper has exactly the chunks, language and token ids it gets in the step's own
process (real documents in several languages and formats, a huge one, hostile text); the
encoder's vectors do not depend on where the ids came from; a helper that dies or cannot start
loses no document (the step chunks it itself); and the step run with helpers stores what it
stores without them."""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path

import numpy as np
import pytest

from rag_pipeline.cleaning.clean import clean_elements
from rag_pipeline.common.cpus import usable_cores
from rag_pipeline.embedding import Embedder
from rag_pipeline.parsing import parse_document
from rag_pipeline.parsing.config import ParseLimits
from rag_pipeline.parsing.types import Element
from rag_pipeline.sync import chunk, chunk_helper
from rag_pipeline.sync.chunk_document import chunk_document
from rag_pipeline.sync.chunk_helper import ChunkHelpers, helpers_wanted
from rag_pipeline.sync.items import Cleaned, WorkItem

REAL = ("md/openapi_spec_3.0.3.md", "html/wikipedia_de_deutschland.html", "pdf/kr_covid19_insurance_report_4p.pdf",
        "docx/docling_word_sample.docx", "html/readability_aktualne_cz.source.html")


def _item(uri: str, elements: list[Element], title: str | None = None) -> WorkItem:
    return WorkItem(source="docs", uri=uri, action="new", cleaned=Cleaned(elements=elements, parser="test", title=title))


@pytest.fixture(scope="module")
def items(corpus_dir: Path) -> list[WorkItem]:
    """Real documents as the clean step leaves them, a huge generated one and hostile ones."""
    out = []
    for relative in REAL:
        parsed = parse_document((corpus_dir / "docs" / relative).read_bytes(), Path(relative).name, ParseLimits(ocr=False))
        elements, _ = clean_elements(list(parsed.elements))
        out.append(_item(relative, elements, parsed.title))
    abstracts = [json.loads(line) for line in
                 (corpus_dir / "qa" / "scifact_beir" / "corpus.jsonl").read_text(encoding="utf-8").splitlines()[:400]]
    huge = [e for a in abstracts for e in (Element("heading", a["title"], level=2), Element("paragraph", a["text"]))]
    out.append(_item("huge.md", [Element("heading", "Abstracts", level=1), *huge]))
    out.append(_item("one-word.txt", [Element("paragraph", "x" * 300_000)]))
    out.append(_item("controls.txt", [Element("heading", "\u202e\u0000 evil " * 40, level=1),
                                       Element("paragraph", "Zdravím 😀 \ufeff" * 2000)]))
    out.append(_item("empty.txt", []))
    return out


def _inline(embedder: Embedder, item: WorkItem):
    return chunk_document(item.cleaned, item.uri, embedder.count_tokens, embedder.max_tokens)


def _through_helper(embedder: Embedder, items: list[WorkItem], helpers: int = 1) -> dict[str, object]:
    results: dict[str, object] = {}
    with ChunkHelpers(embedder.path, embedder.max_tokens, helpers) as pool:
        for item in items:
            while not pool.offer(item):  # room frees as the helper finishes
                results.update((i.uri, done) for i, done in pool.finished(wait=True))
        results.update((i.uri, done) for i, done in pool.finished(wait=True))
    return results


def test_a_helper_chunks_exactly_as_the_step(embedder: Embedder, items: list[WorkItem]) -> None:
    results = _through_helper(embedder, items)
    assert set(results) == {i.uri for i in items}
    languages = set()
    for item in items:
        done = results[item.uri]
        assert done is not None, item.uri
        chunked, ids = done
        own = _inline(embedder, item)
        assert chunked.to_dict() == own.to_dict(), item.uri
        languages.add(own.language)
        fresh = embedder.token_ids.ids([c.search_text for c in own.chunks])
        assert len(ids) == len(own.chunks)
        assert all(np.array_equal(a, b) for a, b in zip(ids, fresh, strict=True)), item.uri
    assert {"en", "de", "ko", "cs"} <= languages  # the real documents kept their languages
    huge = results["huge.md"][0]
    assert len(huge.chunks) > 200 and all(c.token_count <= embedder.max_tokens for c in huge.chunks)


def test_ids_from_a_helper_give_the_same_vectors(embedder: Embedder, items: list[WorkItem]) -> None:
    chunked, ids = _through_helper(embedder, items[:1])[items[0].uri]
    texts = [c.search_text for c in chunked.chunks][:24]
    given = Embedder()
    for text, text_ids in zip(texts, ids, strict=False):
        given.token_ids.remember(text, text_ids)
    vectors = given.encode(texts)
    assert given.stats.ids_reused == len(texts)
    alone = Embedder()
    assert np.array_equal(vectors, alone.encode(texts)) and alone.stats.ids_reused == 0


def _helper_pids(pool: ChunkHelpers) -> list[int]:
    return list(pool._pool._processes) if pool._pool is not None else []


def test_a_killed_helper_loses_no_document(embedder: Embedder, items: list[WorkItem]) -> None:
    """The helper is killed with SIGKILL while it holds documents: each comes back to the step
    (None: chunk it yourself), exactly once, and nothing more is offered to the dead pool."""
    huge = next(i for i in items if i.uri == "huge.md").cleaned.elements  # seconds each: still held at the kill
    work = [_item("empty.txt", [])] + [_item(f"huge-{n}.md", huge) for n in range(6)]
    with ChunkHelpers(embedder.path, embedder.max_tokens, 1) as pool:
        assert pool.offer(work[0])
        assert next(pool.finished(wait=True))[1] is not None  # started and working
        offered = [item for item in work[1:] if pool.offer(item)]
        assert offered
        for pid in _helper_pids(pool):
            os.kill(pid, signal.SIGKILL)
        back = list(pool.finished(wait=True))
        assert [i.uri for i, _ in back] == [i.uri for i in offered]
        assert any(done is None for _, done in back)
        assert not pool.offer(work[1])


def test_a_helper_that_cannot_start_hands_every_document_back(embedder: Embedder, items: list[WorkItem],
                                                              tmp_path: Path) -> None:
    """A model folder without tokenizer.json: the helper fails to start; the documents come back."""
    with ChunkHelpers(tmp_path, embedder.max_tokens, 1) as pool:
        offered = [item for item in items[:3] if pool.offer(item)]
        back = list(pool.finished(wait=True))
    assert [i.uri for i, _ in back] == [i.uri for i in offered] and all(done is None for _, done in back)


def test_helpers_only_for_large_batches_on_idle_cores(embedder: Embedder, tmp_path: Path) -> None:
    cores = usable_cores()
    assert helpers_wanted(chunk_helper.MIN_DOCUMENTS - 1, embedder.path, lambda: float(cores)) == 0
    assert helpers_wanted(1000, tmp_path, lambda: float(cores)) == 0  # no tokenizer.json
    assert helpers_wanted(1000, embedder.path, lambda: 0.3) == 0  # the machine is busy
    expected = min(cores - 1, chunk_helper.MAX_HELPERS)
    assert helpers_wanted(1000, embedder.path, lambda: float(cores)) == expected
    assert helpers_wanted(1000, embedder.path, lambda: None) == expected


@pytest.mark.skipif(usable_cores() < 2, reason="helpers need a second core")
def test_the_step_with_helpers_stores_what_it_stores_alone(tmp_path: Path, pg_server_url: str, corpus_dir: Path,
                                                           embedder: Embedder, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two runs of the same folder into fresh databases, chunked with and without helpers: the
    stored chunks and languages are the same, and the helpers did take documents."""
    from conftest import fresh_database, write_config
    from helpers import query

    from rag_pipeline import store
    from rag_pipeline.config import load_config
    from rag_pipeline.sync import clean, parse, plan
    from rag_pipeline.sync.context import SyncContext

    lines = (corpus_dir / "qa" / "scifact_beir" / "corpus.jsonl").read_text(encoding="utf-8").splitlines()
    docs = tmp_path / "docs"
    docs.mkdir()
    documents = chunk_helper.MIN_DOCUMENTS + 8
    for i in range(documents):
        abstracts = [json.loads(line) for line in lines[3 * i: 3 * i + 3]]
        body = "\n\n".join(f"## {a['title']}\n\n{a['text']}" for a in abstracts)
        (docs / f"report-{i:02d}.md").write_text(f"# Report {i}\n\n{body}\n", encoding="utf-8")
    monkeypatch.setattr(chunk_helper, "idle_cores", lambda: None)  # whatever else this machine runs
    stored = {}
    for helpers in (True, False):
        if not helpers:
            monkeypatch.setattr(chunk_helper, "MIN_DOCUMENTS", 10**9)
        root = tmp_path / ("with" if helpers else "without")
        root.mkdir()
        with fresh_database(pg_server_url) as url:
            ctx = SyncContext(load_config(write_config(root, url, docs=docs)), url, f"run-{helpers}")
            with ctx.connect() as conn:
                model_id = store.models.register_model(conn, embedder.identity.to_dict())
            plan.plan_run(ctx, model_id)
            parse.parse_items(ctx)
            clean.clean_items(ctx)
            result = chunk.chunk_items(ctx, embedder)
            assert (result.counts.get("by_helpers", 0) > 0) == helpers
            stored[helpers] = query(url, "SELECT uri, chunks FROM run_items WHERE run_id = %s ORDER BY uri", ctx.run_id)
    assert len(stored[True]) == documents
    assert stored[True] == stored[False]


def _offer_in_daemon(model_dir: str, max_tokens: int, results) -> None:
    """In a daemonic process (as a Celery worker's may be), where no child process may start."""
    item = _item("daemon.md", [Element("paragraph", "One paragraph.")])
    try:
        with ChunkHelpers(Path(model_dir), max_tokens, 1) as pool:
            results.put(("offered", pool.offer(item), list(pool.finished(wait=True))))
    except BaseException as exc:  # noqa: BLE001 -- reported to the test, which fails on it
        results.put(("raised", repr(exc), []))


def test_a_process_that_may_not_start_helpers_chunks_alone(embedder: Embedder) -> None:
    import multiprocessing

    context = multiprocessing.get_context("spawn")
    results = context.Queue()
    daemon = context.Process(target=_offer_in_daemon, args=(str(embedder.path), embedder.max_tokens, results), daemon=True)
    daemon.start()
    outcome = results.get(timeout=300)
    daemon.join(timeout=60)
    assert outcome == ("offered", False, [])


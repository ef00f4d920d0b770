"""A model migration to a model that reads fewer tokens than some live chunks hold: their
documents are re-chunked from the stored chunks, never re-parsed, and published as new versions
before the switch, so the new model embeds whole text and no search ever reads half an index.

Each chunk the new model cannot read whole (the fill finds them: fill.FillProgress.too_long) is
cut at its paragraphs, sentences and words (chunking.chunks.split_chunk) to fit both models:
tokens counted by both tokenizers, the smaller limit kept, so the live model goes on serving the
same text until the switch. Chunks that fit are kept as they are (and keep their vectors of
both models: reused by content hash). The new versions have the same bytes, parse, groups and
language as the ones they replace, a new version number, and the live model's vectors; they are
staged and published by a run of their own (`rechunk-<migration>-...` in `rag-pipeline status`),
which holds the documents' sources like a sync, so no sync stages a competing version meanwhile.
As-of searches before that run, and `explain` replays, see the versions they saw.

A kill -9 at any point loses nothing: the run is found dead by the next claim of its sources,
its staged versions are discarded, and the next migration run cuts the same chunks again (their
vectors are found by content hash, not encoded twice). After a failed gate or a rollback the
smaller chunks stay: they are the same text, and the next change of a document chunks it at the
index's model's limit again."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
import psycopg

from rag_pipeline import store
from rag_pipeline.chunking.chunks import Chunk, split_chunk
from rag_pipeline.embedding import Embedder

Progress = Callable[[str, int, int], None]  # (step, done, total)


@dataclass
class RechunkResult:
    """What one re-chunking run did."""

    run_id: str | None = None
    documents: int = 0  # versions re-chunked and published
    chunks_before: int = 0
    chunks_after: int = 0
    embedded: int = 0  # new chunks encoded with the live model (the rest reused by content hash)
    skipped: list[int] = field(default_factory=list)  # versions superseded or purged meanwhile

    def to_dict(self) -> dict[str, object]:
        return {"run_id": self.run_id, "documents": self.documents, "chunks_before": self.chunks_before,
                "chunks_after": self.chunks_after, "embedded": self.embedded, "skipped": len(self.skipped)}


def both_counted(live: Embedder, target: Embedder) -> tuple[Callable[[list[str]], list[int]], int]:
    """A token counter that holds for both models (the larger of their counts) and the smaller limit."""
    if live.path == target.path:  # one tokenizer (another backend or numeric format of the same folder)
        return target.count_tokens, min(live.max_tokens, target.max_tokens)

    def count(texts: list[str]) -> list[int]:
        return [max(a, b) for a, b in zip(live.count_tokens(texts), target.count_tokens(texts))]

    return count, min(live.max_tokens, target.max_tokens)


def rechunk(conn: psycopg.Connection, migration_id: int, too_long: Sequence[int], live_model: int,
            live: Embedder, target: Embedder, *, wait_seconds: float = 0.0,
            progress: Progress = lambda step, done, total: None) -> RechunkResult:
    """Re-chunk the live documents holding the chunks `too_long` and publish them, in one run."""
    versions = store.versions.live_versions_of_chunks(conn, too_long)
    result = RechunkResult()
    if not versions:
        return result
    sources = store.versions.version_sources(conn, versions)
    result.run_id = f"rechunk-{migration_id}-{uuid.uuid4().hex[:8]}"
    store.runs.claim_sources(conn, result.run_id, sources, lambda run_id, started: True, model_id=live_model,
                             wait_seconds=wait_seconds)
    store.runs.hold_run(conn, result.run_id)
    try:
        count, limit = both_counted(live, target)
        for done, version_id in enumerate(versions, 1):
            _rechunk_version(conn, result, version_id, live_model, live, count, limit)
            progress("re-chunk", done, len(versions))
        store.runs.update_run(conn, result.run_id, gate_passed=True, gate_reason=(
            f"re-chunked for model migration {migration_id}: the same text cut to {limit} tokens; "
            "the migration's gate judges the index"))
        published = store.versions.publish(conn, result.run_id)
        store.runs.update_run(conn, result.run_id, status="published" if published["published"] else "nothing_to_do",
                              counts={"rechunk": result.to_dict(), "published": published}, finished=True)
    except BaseException as exc:
        store.runs.fail_run(conn, result.run_id, status="failed", reason=f"re-chunking stopped: {exc}")
        raise
    finally:
        store.runs.release_run(conn, result.run_id, 0)
    return result


def _rechunk_version(conn: psycopg.Connection, result: RechunkResult, version_id: int, live_model: int,
                     live: Embedder, count: Callable[[list[str]], list[int]], limit: int) -> None:
    """Stage one version again with its too-long chunks cut, embedded with the live model."""
    stored = [Chunk.from_dict(row) for row in store.versions.version_chunks(conn, version_id)]
    chunks: list[Chunk] = []
    for chunk in stored:
        chunks.extend(split_chunk(chunk, count, limit, len(chunks)))
    hashes = [c.content_hash for c in chunks]
    known = store.embeddings.find_embeddings(conn, hashes, live_model)
    todo = sorted({c.content_hash: c.search_text for c in chunks if c.content_hash not in known}.items())
    if todo:
        vectors = live.encode([text for _, text in todo])
        known.update({h: vectors[i] for i, (h, _) in enumerate(todo)})
    embeddings = np.stack([known[h] for h in hashes])
    if store.versions.stage_rechunked_version(conn, result.run_id or "", version_id, live_model,
                                               [c.to_dict() for c in chunks], embeddings):
        result.documents += 1
        result.chunks_before += len(stored)
        result.chunks_after += len(chunks)
        result.embedded += len(todo)
    else:
        result.skipped.append(version_id)

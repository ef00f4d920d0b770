"""Step 4, chunk: each cleaned document cut by its structure into chunks within the embedding
model's input limit (tokens counted with the model's own tokenizer), each led by the document's
identity line; the language of its text picks the full-text search configuration."""

from __future__ import annotations

from collections import Counter

import psycopg

from rag_pipeline import store
from rag_pipeline.embedding import Embedder
from rag_pipeline.sync.batches import Shard, stage_shards, work_batches
from rag_pipeline.sync.chunk_document import chunk_document
from rag_pipeline.sync.chunk_helper import ChunkHelpers, helpers_wanted
from rag_pipeline.sync.context import SyncContext
from rag_pipeline.sync.counts import Counts
from rag_pipeline.sync.failures import naming
from rag_pipeline.sync.items import Chunked, WorkItem


class ChunkResult(Counts):
    """counts: documents, chunks, tokens, by_helpers (documents a helper process chunked)."""


def chunk_or_explain(item: WorkItem, embedder: Embedder) -> Chunked:
    """The step's one way to chunk a document in its own process (a failure names the document)."""
    with naming(item, "chunk"):
        return chunk_document(item.cleaned, item.uri, embedder.count_tokens, embedder.max_tokens)


def shards(ctx: SyncContext) -> list[Shard]:
    return stage_shards(ctx, "cleaned")


def finish(ctx: SyncContext, results: list[ChunkResult]) -> ChunkResult:
    return ChunkResult.combine(results)


def chunk_items(ctx: SyncContext, embedder: Embedder, shard: Shard | None = None) -> ChunkResult:
    """Chunk each cleaned document of the shard (or of every shard of the run in turn); on a
    large shard, helper processes on the idle cores take documents beside this one
    (sync/chunk_helper.py)."""
    if shard is None:
        return finish(ctx, [chunk_items(ctx, embedder, s) for s in shards(ctx)])
    counts: Counter = Counter()

    def record(conn: psycopg.Connection, item: WorkItem, chunked: Chunked) -> None:
        with conn.transaction():
            store.work_items.advance_item(conn, ctx.run_id, item.source, item.uri, "chunked", "chunks",
                                          chunked.to_dict())
        counts["documents"] += 1
        counts["chunks"] += len(chunked.chunks)
        counts["tokens"] += sum(c.token_count for c in chunked.chunks)

    def record_finished(conn: psycopg.Connection, helpers: ChunkHelpers, wait: bool = False) -> None:
        for item, done in helpers.finished(wait):
            if done is None:  # the helper failed: chunked here (a real error is raised here)
                record(conn, item, chunk_or_explain(item, embedder))
                continue
            chunked, ids = done
            for chunk, chunk_ids in zip(chunked.chunks, ids, strict=True):
                embedder.token_ids.remember(chunk.search_text, chunk_ids)
            record(conn, item, chunked)
            counts["by_helpers"] += 1

    helpers = helpers_wanted(len(shard.uris), embedder.path)
    with ctx.connect() as conn, ChunkHelpers(embedder.path, embedder.max_tokens, helpers) as pool:
        for batch in work_batches(ctx, conn, "cleaned", ("cleaned",), "chunk", shard):
            for item in batch:
                record_finished(conn, pool)
                if not pool.offer(item):
                    record(conn, item, chunk_or_explain(item, embedder))
        record_finished(conn, pool, wait=True)
    return ChunkResult(counts=dict(counts))

"""Step 4, chunk: each cleaned document cut by its structure into chunks within the embedding
model's input limit (tokens counted with the model's own tokenizer), each led by the document's
identity line; the language of its text picks the full-text search configuration."""

from __future__ import annotations

from collections import Counter

from rag_pipeline import store
from rag_pipeline.chunking.chunks import chunk_elements, cleaned_text
from rag_pipeline.chunking.document_identity import document_identity
from rag_pipeline.embedding import Embedder
from rag_pipeline.store import text_search
from rag_pipeline.sync.batches import Shard, stage_shards, work_batches
from rag_pipeline.sync.context import SyncContext
from rag_pipeline.sync.counts import Counts
from rag_pipeline.sync.items import Chunked


class ChunkResult(Counts):
    """counts: documents, chunks, tokens."""


def shards(ctx: SyncContext) -> list[Shard]:
    return stage_shards(ctx, "cleaned")


def finish(ctx: SyncContext, results: list[ChunkResult]) -> ChunkResult:
    return ChunkResult.combine(results)


def chunk_items(ctx: SyncContext, embedder: Embedder, shard: Shard | None = None) -> ChunkResult:
    """Chunk each cleaned document of the shard (or of every shard of the run in turn)."""
    if shard is None:
        return finish(ctx, [chunk_items(ctx, embedder, s) for s in shards(ctx)])
    counts: Counter = Counter()
    with ctx.connect() as conn:
        for batch in work_batches(ctx, conn, "cleaned", ("cleaned",), "chunk", shard):
            for item in batch:
                cleaned = item.cleaned
                identity = document_identity(cleaned.title, cleaned.elements, item.uri)
                chunks = chunk_elements(cleaned.elements, embedder.count_tokens, embedder.max_tokens, identity=identity)
                language = text_search.detect_language(cleaned_text(cleaned.elements)[0])
                chunked = Chunked(chunks=chunks, parser=cleaned.parser, cleaning=cleaned.cleaning, title=cleaned.title,
                                  language=language)
                with conn.transaction():
                    store.work_items.advance_item(conn, ctx.run_id, item.source, item.uri, "chunked", "chunks",
                                                  chunked.to_dict())
                counts["documents"] += 1
                counts["chunks"] += len(chunks)
                counts["tokens"] += sum(c.token_count for c in chunks)
    return ChunkResult(counts=dict(counts))

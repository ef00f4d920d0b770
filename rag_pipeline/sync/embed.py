"""Step 5, embed: every chunk's search text through the pinned model, batch by batch; a chunk
whose exact model input was embedded before under the same model reuses the stored vector, so
only edited chunks are encoded."""

from __future__ import annotations

from collections import Counter
from dataclasses import asdict, dataclass, replace
from typing import Any

import numpy as np

from rag_pipeline import store
from rag_pipeline.embedding import Embedder
from rag_pipeline.embedding.tokens import EncodeStats
from rag_pipeline.sync.batches import Shard, stage_shards, work_batches
from rag_pipeline.sync.context import SyncContext
from rag_pipeline.sync.counts import Counts
from rag_pipeline.sync.items import embeddings_to_bytes


@dataclass
class EmbedResult:
    counts: dict[str, int]  # embedded (encoded now), reused (stored vectors of identical input)
    backend: dict[str, Any] | None = None  # which encoding backend encoded them and why (None: nothing encoded)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> EmbedResult:
        return cls(counts=dict(data.get("counts") or {}), backend=data.get("backend"))

    @classmethod
    def combine(cls, results: list[EmbedResult]) -> EmbedResult:
        """Over the run from its shards': counts add up; the backend of the first shard that encoded anything."""
        return cls(counts=Counts.summed(results), backend=next((r.backend for r in results if r.backend), None))


def encode_counts(before: EncodeStats, after: EncodeStats) -> dict[str, int]:
    """What one encode call cost, as whole numbers for the run's counts: real and padded tokens
    (padding share = 1 - tokens / padded_tokens), batches, and texts whose token ids the chunk
    step had already computed (reused, not tokenised again)."""
    return {"tokens": after.tokens - before.tokens, "padded_tokens": after.padded_tokens - before.padded_tokens,
            "batches": after.batches - before.batches, "ids_reused": after.ids_reused - before.ids_reused}


def shards(ctx: SyncContext) -> list[Shard]:
    return stage_shards(ctx, "chunked")


def finish(ctx: SyncContext, results: list[EmbedResult]) -> EmbedResult:
    """The step's result over the run, its counts recorded on the run (what the CLI and the runs list report)."""
    combined = EmbedResult.combine(results)
    ctx.record_counts("embed", combined.counts)
    return combined


def embed_items(ctx: SyncContext, embedder: Embedder, model_id: int, shard: Shard | None = None) -> EmbedResult:
    """Embed the chunks of the shard (or of every shard of the run in turn), reusing stored
    vectors of identical model input under the same model."""
    if shard is None:
        return finish(ctx, [embed_items(ctx, embedder, model_id, s) for s in shards(ctx)])
    counts: Counter = Counter()
    with ctx.connect() as conn:
        for batch in work_batches(ctx, conn, "chunked", ("chunks",), "embed", shard):
            chunk_lists = [item.chunked.chunks for item in batch]
            hashes = [c.content_hash for chunks in chunk_lists for c in chunks]
            known = store.embeddings.find_embeddings(conn, hashes, model_id)
            missing = sorted({c.content_hash: c.search_text for cl in chunk_lists for c in cl
                              if c.content_hash not in known}.items())
            if missing:
                before = replace(embedder.stats)
                vectors = embedder.encode([text for _, text in missing])
                known.update({h: vectors[i] for i, (h, _) in enumerate(missing)})
                counts.update(encode_counts(before, embedder.stats))
            counts["embedded"] += len(missing)
            counts["reused"] += len(hashes) - len(missing)
            for item, chunks in zip(batch, chunk_lists):
                dim = embedder.identity.dimension
                matrix = np.stack([known[c.content_hash] for c in chunks]) if chunks else np.zeros((0, dim), np.float32)
                with conn.transaction():
                    store.work_items.advance_item(conn, ctx.run_id, item.source, item.uri, "embedded", "embeddings",
                                                  embeddings_to_bytes(matrix))
    backend = embedder.encoded_with.to_dict() if counts["embedded"] and embedder.encoded_with is not None else None
    return EmbedResult(counts=dict(counts), backend=backend)

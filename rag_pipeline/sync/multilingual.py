"""Part of the stage step: a multilingual vector for every chunk of a document not in English
(migration 034), so that a question in another language than the document finds its passage
(embedding/multilingual.py says why the index's own model cannot).

Runs after the run's versions are staged and before the gate, so the gate judges the index with
the vectors a search will read. It encodes only what has no vector yet: a chunk whose exact input
was encoded before (an unchanged chunk of an edited document, an access change's copy) reuses
it, and the live chunks of an index synced before migration 034 are caught up here too. English
documents cost nothing; the multilingual model reads about 6 passages a second on 2 cores, so a
non-English chunk costs several times what the index's own model spends on it."""

from __future__ import annotations

from rag_pipeline import store
from rag_pipeline.embedding import multilingual
from rag_pipeline.sync.context import SyncContext

BATCH = 32  # chunks per encode call and per insert transaction


def embed_missing(ctx: SyncContext) -> dict[str, int]:
    """Encode and store the multilingual vectors the run's staged versions and the live index
    lack; returns how many were encoded and how many reused. A kill loses at most one batch:
    the rest is stored, and the retried step goes on from what is missing."""
    counts = {"encoded": 0, "reused": 0}
    with ctx.connect() as conn:
        total = store.multilingual_vectors.count_missing(conn, ctx.run_id)
        after = 0
        while pending := store.multilingual_vectors.missing(conn, ctx.run_id, BATCH, after):
            known = store.multilingual_vectors.known(conn, [p.content_hash for p in pending], multilingual.MODEL)
            todo = [p for p in pending if p.content_hash not in known]
            encoded = dict(zip([p.chunk_id for p in todo], multilingual.encode_passages([p.model_input for p in todo]),
                               strict=True))
            rows = [(p.chunk_id, encoded[p.chunk_id] if p.chunk_id in encoded else known[p.content_hash])
                    for p in pending]
            store.multilingual_vectors.insert(conn, multilingual.MODEL, rows)
            counts["encoded"] += len(todo)
            counts["reused"] += len(pending) - len(todo)
            after = pending[-1].chunk_id
            ctx.progress("multilingual", counts["encoded"] + counts["reused"], total)
    return counts

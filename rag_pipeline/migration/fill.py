"""Step 1 of a model migration: embed every live chunk with the new model into model_vectors,
batch by batch.

Resumable by construction: a batch's rows commit together (ON CONFLICT DO NOTHING), and the work
list is "live chunks without a vector of the model" (store.model_vectors.missing), so a run
killed at any point continues with the chunks it had not stored, and a chunk a sync published
meanwhile is simply part of the list. The chunk's stored model input (search prefix and text) is
embedded: nothing is re-parsed. Identical model input (a copy made by an access change, the same
paragraph in two documents) is encoded once and its vector reused. A chunk longer than the
model reads is never embedded truncated: the fill reports it (`too_long`) and the migration
re-chunks its document (rechunk.py), then fills again."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

import psycopg

from rag_pipeline import store
from rag_pipeline.embedding import Embedder

BATCH = 256  # chunks per batch: one transaction, one encode call; memory is bounded by it


@dataclass
class FillProgress:
    """Where a fill stands: chunks that have a vector of the model, of those that need one,
    what this run encoded and reused, and an estimate of the time left from this run's rate."""

    done: int
    total: int
    embedded: int = 0
    reused: int = 0
    seconds: float = 0.0
    too_long: list[int] = field(default_factory=list)  # chunks the model cannot read whole: re-chunked, then filled
    rechunked: int = 0  # documents re-chunked for the model's limit (steps.fill_fitted), their chunks before and after
    rechunked_from: int = 0
    rechunked_to: int = 0

    @property
    def eta_seconds(self) -> float | None:
        made = self.embedded + self.reused
        if not made or self.done >= self.total:
            return None if not made else 0.0
        return (self.total - self.done) * self.seconds / made

    def to_dict(self) -> dict[str, float | int | None]:
        return {"done": self.done, "total": self.total, "embedded": self.embedded, "reused": self.reused,
                "too_long": len(self.too_long), "rechunked_documents": self.rechunked,
                "rechunked_chunks_before": self.rechunked_from, "rechunked_chunks_after": self.rechunked_to,
                "seconds": round(self.seconds, 3), "eta_seconds": None if self.eta_seconds is None else round(self.eta_seconds, 1)}


FillReport = Callable[[FillProgress], None]


def fill(conn: psycopg.Connection, model_id: int, embedder: Embedder, *, batch: int = BATCH,
         report: FillReport = lambda p: None, max_batches: int | None = None,
         earlier: FillProgress | None = None) -> FillProgress:
    """Embed the live chunks lacking a vector of `model_id` with `embedder` until none lacks one
    (or `max_batches` were done). Each batch commits; `report` is called after each. `earlier`:
    the migration's previous round (steps.fill_fitted), whose counts and time this one goes on from."""
    total = store.model_vectors.count_live(conn)
    progress = FillProgress(done=total - store.model_vectors.count_missing(conn, model_id), total=total)
    if earlier is not None:
        progress.embedded, progress.reused, progress.seconds = earlier.embedded, earlier.reused, earlier.seconds
        progress.rechunked, progress.rechunked_from, progress.rechunked_to = \
            earlier.rechunked, earlier.rechunked_from, earlier.rechunked_to
    report(progress)
    started, after, batches = time.perf_counter() - progress.seconds, 0, 0
    while max_batches is None or batches < max_batches:
        pending = store.model_vectors.missing(conn, model_id, batch, after)
        if not pending:
            break
        known = store.model_vectors.known_vectors(conn, [p.content_hash for p in pending], model_id)
        todo = sorted({p.content_hash: p.model_input for p in pending if p.content_hash not in known}.items())
        too_long = _too_long(embedder, todo)
        todo = [t for t in todo if t[0] not in too_long]
        if todo:
            vectors = embedder.encode([text for _, text in todo])
            known.update({h: vectors[i] for i, (h, _) in enumerate(todo)})
        stored = [p for p in pending if p.content_hash not in too_long]
        store.model_vectors.insert_vectors(conn, model_id, [(p.chunk_id, known[p.content_hash]) for p in stored])
        progress.too_long.extend(p.chunk_id for p in pending if p.content_hash in too_long)
        progress.embedded += len(todo)
        progress.reused += len(stored) - len(todo)
        progress.done = min(progress.total, progress.done + len(stored))
        progress.seconds = time.perf_counter() - started
        after, batches = pending[-1].chunk_id, batches + 1
        report(progress)
    return progress


def _too_long(embedder: Embedder, todo: list[tuple[str, str]]) -> set[str]:
    """The model inputs (by hash) the model would truncate: never embedded cut, they are left
    without a vector, which keeps the switch refused until they are re-chunked (rechunk.py).
    Counting keeps the token ids, so encoding the rest does not tokenise them again."""
    counts = embedder.count_tokens([text for _, text in todo])
    return {h for (h, _), n in zip(todo, counts) if n > embedder.max_tokens}

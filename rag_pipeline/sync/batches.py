"""Batches of work: steps stream a run's items in fixed-size batches so memory is bounded by
the batch size, not by the size of the corpus."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import psycopg

from rag_pipeline import store
from rag_pipeline.sync.context import SyncContext

CONTENT_ACTIONS = ("new", "changed", "reparse")  # items whose content goes through parse .. embed


def iter_batches(items: Sequence[Any], size: int) -> Iterator[Sequence[Any]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


def work_batches(
    ctx: SyncContext, conn: psycopg.Connection, stage: str, columns: tuple[str, ...], label: str
) -> Iterator[list[dict[str, Any]]]:
    """The run's content items waiting at `stage`, loaded with `columns`, batch by batch;
    progress is reported under `label` after each batch."""
    keys = store.work_items.item_keys(conn, ctx.run_id, stage, CONTENT_ACTIONS)
    done = 0
    for batch in iter_batches(keys, ctx.config.batch_size):
        yield store.work_items.load_items(conn, ctx.run_id, batch, columns)
        done += len(batch)
        ctx.progress(label, done, len(keys))

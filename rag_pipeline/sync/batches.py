"""Batches and shards of work. Steps stream a run's items in fixed-size batches so memory is
bounded by the batch size, not by the size of the corpus. A shard is the part of one step that
may run as a step of its own, in another process or on another machine: the items of one source,
`shard_size` documents at a time. Shards name their items explicitly, so a shard means the same
items however far the other shards have got."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import psycopg

from rag_pipeline import store
from rag_pipeline.sync.context import SyncContext
from rag_pipeline.sync.items import WorkItem

CONTENT_ACTIONS = ("new", "changed", "reparse")  # items whose content goes through parse .. embed


@dataclass(frozen=True)
class Shard:
    """Items of one source, by uri, at position `index` of the run's shards; `offset` items come
    before it and the step has `total` in all (progress is reported over the whole step)."""

    source: str
    index: int
    uris: tuple[str, ...]
    offset: int = 0
    total: int = 0

    @property
    def key(self) -> str:
        """A name for the shard's step, unique within the step: letters, digits and '_' only
        (what orchestrators accept in step names), whatever the source is called."""
        slug = re.sub(r"[^A-Za-z0-9]+", "_", self.source).strip("_")[:40] or "source"
        return f"{slug}_{self.index}"

    def keys(self) -> list[tuple[str, str]]:
        return [(self.source, uri) for uri in self.uris]

    def to_dict(self) -> dict[str, Any]:
        return {"source": self.source, "index": self.index, "uris": list(self.uris), "offset": self.offset,
                "total": self.total}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Shard:
        return cls(source=str(data["source"]), index=int(data["index"]), uris=tuple(str(u) for u in data["uris"]),
                   offset=int(data.get("offset", 0)), total=int(data.get("total", 0)))


def list_shards(keys: Iterable[tuple[str, str]], size: int) -> list[Shard]:
    """Cut (source, uri) keys into shards: by source, then `size` documents at a time, in
    (source, uri) order by code point, so the same keys always give the same shards."""
    if size < 1:
        raise ValueError(f"shard size must be a positive number of documents, got {size}")
    ordered = sorted(set(keys))
    by_source: dict[str, list[str]] = {}
    for source, uri in ordered:
        by_source.setdefault(source, []).append(uri)
    shards: list[Shard] = []
    offset = 0
    for source, uris in by_source.items():
        for part in iter_batches(uris, size):
            shards.append(Shard(source, len(shards), tuple(part), offset, len(ordered)))
            offset += len(part)
    return shards


def work_shards(ctx: SyncContext, conn: psycopg.Connection, stage: str) -> list[Shard]:
    """The shards of the run's content items waiting at `stage`."""
    keys = store.work_items.item_keys(conn, ctx.run_id, stage, CONTENT_ACTIONS)
    return list_shards(keys, ctx.config.shard_size)


def stage_shards(ctx: SyncContext, stage: str) -> list[Shard]:
    """`work_shards` on a connection of its own: what a step lists before its shards run."""
    with ctx.connect() as conn:
        return work_shards(ctx, conn, stage)


def iter_batches(items: Sequence[Any], size: int) -> Iterator[Sequence[Any]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


def work_batches(
    ctx: SyncContext, conn: psycopg.Connection, stage: str, columns: tuple[str, ...], label: str,
    shard: Shard | None = None,
) -> Iterator[list[WorkItem]]:
    """The run's content items waiting at `stage` (only the shard's, if one is given; those it
    already moved on are skipped, so a shard run again resumes), loaded with the stored
    `columns` they must have, batch by batch, as typed work items (a payload that cannot be
    read names the item and the step `label`); progress is reported under `label` after each
    batch."""
    among = shard.keys() if shard is not None else None
    keys = store.work_items.item_keys(conn, ctx.run_id, stage, CONTENT_ACTIONS, among=among)
    done, total = (shard.offset + len(shard.uris) - len(keys), shard.total) if shard is not None else (0, len(keys))
    for batch in iter_batches(keys, ctx.config.batch_size):
        rows = store.work_items.load_items(conn, ctx.run_id, batch, columns)
        yield [WorkItem.from_row(row, label, columns) for row in rows]
        done += len(batch)
        ctx.progress(label, done, total)

"""The sharded steps (parse, clean, chunk, embed) as an orchestrator drives them.

Each step splits into shards (sync.batches.Shard: one source, `shard_size` documents). A
sharded run lists a step's shards (`shards`), runs each shard as a step of its own, anywhere
(the step module's `*_items` function with the shard), passes each shard's result on as a dict
(`to_dict`, back with the result type's `from_dict`) and folds them with `finish`, which
combines them (the result type's `combine`) and records on the run what that step records.
Called without a shard, each `*_items` function does all of this in turn, in its own process.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from rag_pipeline.sync import chunk, clean, embed, parse
from rag_pipeline.sync.batches import Shard
from rag_pipeline.sync.context import SyncContext


class StepResult(Protocol):
    """What every sharded step's result is: a dict for the trip between processes, and back."""

    def to_dict(self) -> dict[str, Any]: ...


@dataclass(frozen=True)
class ShardedStep:
    name: str
    result: Any  # the result type: `from_dict` and `combine` classmethods
    shards: Callable[[SyncContext], list[Shard]]
    finish: Callable[[SyncContext, list[Any]], StepResult]

    def combine_dicts(self, ctx: SyncContext, results: list[dict[str, Any]]) -> StepResult:
        """The step's result over the run from its shards' results as they crossed processes."""
        return self.finish(ctx, [self.result.from_dict(r) for r in results])


SHARDED_STEPS: dict[str, ShardedStep] = {
    "parse": ShardedStep("parse", parse.ParseResult, parse.shards, parse.finish),
    "clean": ShardedStep("clean", clean.CleanResult, clean.shards, clean.finish),
    "chunk": ShardedStep("chunk", chunk.ChunkResult, chunk.shards, chunk.finish),
    "embed": ShardedStep("embed", embed.EmbedResult, embed.shards, embed.finish),
}

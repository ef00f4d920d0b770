"""The result of a step that reports only counters: one shape for chunk, stage and publish, and
the base of the step results that carry more (parse, embed)."""

from __future__ import annotations

from collections import Counter
from dataclasses import asdict, dataclass
from typing import Any, Self


@dataclass
class Counts:
    counts: dict[str, int]

    def to_dict(self) -> dict[str, Any]:
        """For the trip between processes (a Dagster output, a step_outputs row)."""
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Self:
        return cls(counts=dict(data.get("counts") or {}))

    @staticmethod
    def summed(results: list[Counts]) -> dict[str, int]:
        """Counters over shards add up (a key a shard never counted is absent, not 0)."""
        total: Counter = Counter()
        for r in results:
            total.update(r.counts)
        return dict(total)

    @classmethod
    def combine(cls, results: list[Self]) -> Self:
        return cls(counts=cls.summed(results))

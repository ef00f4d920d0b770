"""The `evaluation` section of `rag_pipeline.yaml`."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

# every metric the gate computes has a bound (a given threshold replaces its default)
DEFAULT_THRESHOLDS = {"source_recall": 0.8, "evidence_recall": 0.8, "ndcg": 0.5, "mrr": 0.5, "refusal_accuracy": 0.75,
                      # each direction on its own, so a gate cannot pass by refusing everything or nothing
                      "refusal_accuracy_must_refuse": 0.5, "refusal_accuracy_must_answer": 0.5,
                      "acl_leaks": 0, "superseded_hits": 0}


@dataclass(frozen=True)
class EvaluationConfig:
    eval_set: Path | None = None
    k: int = 10
    thresholds: dict[str, float] = field(default_factory=lambda: dict(DEFAULT_THRESHOLDS))
    refusal_score: float = 0.35  # first result's similarity under which the index "has no answer", until calibrated (refusal.py)

"""Step 2 of a model migration: the evaluation set against the live model and the new one, on the
same live index (evaluation/evaluate.py with the new model's vectors), side by side. The switch
happens only if the new model meets the thresholds and, with `no_worse`, is not worse than the
live model on any metric.

Both sides run the retrieval cases only: the answer cases' drafts search the index's model, so
they would judge the live model twice. A case with its own as-of time searches the model in force
then on both sides."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import psycopg

from rag_pipeline.config import Config
from rag_pipeline.embedding import Embedder
from rag_pipeline.evaluation.evaluate import MAX_METRICS, EvalReport, evaluate, load_eval_set
from rag_pipeline.retrieval import refusal
from rag_pipeline.retrieval.search import DEFAULT_MODE

NO_EVAL_SET = "no evaluation set configured (evaluation.eval_set): the new model is switched to unjudged"


@dataclass
class GateReport:
    """Both models' metrics and the verdict: what `migrate-model` prints and the migration keeps."""

    live: dict[str, Any]
    new: dict[str, Any]
    passed: bool
    reason: str
    no_worse: bool = False
    worse: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {"live": self.live, "new": self.new, "passed": self.passed, "reason": self.reason,
                "no_worse": self.no_worse, "worse": self.worse}

    def rows(self) -> list[tuple[str, float | None, float | None]]:
        """(metric, live, new) for every metric either side has."""
        names = list(dict.fromkeys([*self.live.get("metrics", {}), *self.new.get("metrics", {})]))
        return [(n, self.live.get("metrics", {}).get(n), self.new.get("metrics", {}).get(n)) for n in names]


def worse_metrics(live: dict[str, float], new: dict[str, float]) -> list[str]:
    """Metrics on which the new model is worse: lower, or higher for the counts that are upper
    bounds (ACL leaks, superseded hits). `cases` is a count of cases, not a quality."""
    found = []
    for name, before in live.items():
        after = new.get(name)
        if name == "cases" or after is None:
            continue
        if (after > before) if name in MAX_METRICS else (after < before):
            found.append(name)
    return found


def judge(conn: psycopg.Connection, config: Config, live: tuple[int, Embedder], new: tuple[int, Embedder], *,
          no_worse: bool = False, progress: Any = lambda step, done, total: None) -> GateReport:
    """Run the evaluation set against both models; the verdict by the thresholds (and no_worse)."""
    evaluation = config.evaluation
    if evaluation.eval_set is None:
        return GateReport(live={"model_id": live[0]}, new={"model_id": new[0]}, passed=True, reason=NO_EVAL_SET)
    cases = load_eval_set(evaluation.eval_set)
    sides = {}
    for side, (model_id, embedder) in (("live", live), ("new", new)):
        threshold = refusal.threshold_for(conn, model_id, DEFAULT_MODE, evaluation.refusal_score)
        report = evaluate(conn, embedder, cases, k=evaluation.k, thresholds=evaluation.thresholds,
                          refusal_threshold=threshold, model_id=model_id,
                          progress=lambda done, total, side=side: progress(f"gate {side}", done, total))
        sides[side] = _side(model_id, report)
    worse = worse_metrics(sides["live"]["metrics"], sides["new"]["metrics"])
    failures = list(sides["new"]["failures"])
    if no_worse and worse:
        failures.append("worse than the live model on " + ", ".join(worse))
    return GateReport(live=sides["live"], new=sides["new"], passed=not failures,
                      reason="; ".join(failures) if failures else "all thresholds met", no_worse=no_worse, worse=worse)


def _side(model_id: int, report: EvalReport) -> dict[str, Any]:
    return {"model_id": model_id, "metrics": report.metrics, "passed": report.passed, "failures": report.failures,
            "failed_cases": [c.id for c in report.cases if c.failed]}

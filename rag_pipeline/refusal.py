"""Refusal: when the best hit is too far from the question, the index has no answer.

The threshold is calibrated, not guessed: over the must-answer and must-refuse questions of an
evaluation set, the best-hit similarity that separates them best (balanced accuracy, so a set
with few must-refuse questions cannot buy accuracy by never refusing). It is stored with the
index per model and search mode (table refusal_calibrations) and recorded on every gated run;
the configured `evaluation.refusal_score` is only the fallback while nothing is calibrated.

Calibration uses one half of the set (chosen by a hash of the case id, so the split is stable
as cases are added) and reports accuracy on the other half, which it never looked at.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass

import psycopg

from rag_pipeline import store


@dataclass(frozen=True)
class Threshold:
    value: float
    source: str  # where it came from, said in words to the user


@dataclass(frozen=True)
class Decision:
    refused: bool
    best: float | None  # best-hit similarity (None: no hit at all)
    threshold: Threshold

    @property
    def reason(self) -> str:
        if self.best is None:
            return "no visible chunk matched the query"
        relation = "under" if self.refused else "at or above"
        return (f"best similarity {self.best:.3f} is {relation} the refusal threshold "
                f"{self.threshold.value:.3f} ({self.threshold.source})")

    def record(self) -> dict:
        return {"refused": self.refused, "best_similarity": None if self.best is None else round(self.best, 4),
                "threshold": round(self.threshold.value, 4), "threshold_source": self.threshold.source,
                "reason": self.reason}


def decide(similarities: Sequence[float], threshold: Threshold) -> Decision:
    best = max(similarities) if similarities else None
    return Decision(refused=best is None or best < threshold.value, best=best, threshold=threshold)


def in_calibration_split(case_id: str) -> bool:
    """Half of the cases, fixed by their id: the calibration half."""
    return hashlib.sha256(case_id.encode("utf-8")).digest()[0] % 2 == 0


def calibrate(answer_best: Sequence[float], refuse_best: Sequence[float]) -> float:
    """The threshold with the best balanced accuracy; among equals, the midpoint of the widest
    gap (a margin on both sides), then the lowest. Deterministic for the same scores."""
    if not answer_best or not refuse_best:
        raise ValueError("calibration needs at least one must-answer and one must-refuse question")
    points = sorted(set(answer_best) | set(refuse_best))
    candidates = [points[0] - 1e-6] + [(a + b) / 2 for a, b in zip(points, points[1:])] + [points[-1] + 1e-6]
    gaps = [0.0] + [b - a for a, b in zip(points, points[1:])] + [0.0]

    def key(i: int) -> tuple[float, float, float]:
        t = candidates[i]
        answered = sum(s >= t for s in answer_best) / len(answer_best)
        refused = sum(s < t for s in refuse_best) / len(refuse_best)
        return (-(answered + refused) / 2, -gaps[i], t)

    return candidates[min(range(len(candidates)), key=key)]


def accuracies(answer_best: Sequence[float], refuse_best: Sequence[float], threshold: float) -> tuple[float, float]:
    """(share of must-answer questions answered, share of must-refuse questions refused)."""
    answered = sum(s >= threshold for s in answer_best) / len(answer_best) if answer_best else 1.0
    refused = sum(s < threshold for s in refuse_best) / len(refuse_best) if refuse_best else 1.0
    return answered, refused


def threshold_for(conn: psycopg.Connection, model_id: int | None, mode: str, fallback: float) -> Threshold:
    """The newest calibrated threshold of the index's model and this mode, else the config's."""
    found = store.refusal.latest_calibration(conn, model_id, mode) if model_id is not None else None
    if found is None:
        return Threshold(fallback, "evaluation.refusal_score in the config; not calibrated yet")
    return Threshold(float(found["threshold"]), f"calibrated {found['calibrated_at']:%Y-%m-%d %H:%M} from {found['eval_set']}")

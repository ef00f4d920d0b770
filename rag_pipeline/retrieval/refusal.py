"""Refusal: when the first result neither means nor says what the question asks, the index has
no answer.

What is compared is the first result's answer score: its cosine similarity to the question plus,
with a calibrated weight, its term coverage (the share of the question's idf-weighted terms the
passage contains, from the full-text SQL). Similarity alone separates off-topic questions, but
not an on-topic question the documents do not answer from one they do: both land near the right
document (on evalsets/corpus, the similarity threshold that refused every unanswerable question
answered 22% of the answerable ones). Such near misses ask for a figure, name or date the
passage lacks, which the term coverage sees. How much coverage counts depends on the corpus and
on how questions are worded (paraphrased questions share few words with their answer), so the
weight is calibrated with the threshold rather than fixed.

Calibration is not guessed: over the must-answer and must-refuse questions of an evaluation
set, the weight in COVERAGE_WEIGHTS that ranks them apart best (`calibrate`), then the threshold
that separates them best at that weight (balanced accuracy, so a set with few must-refuse
questions cannot buy accuracy by never refusing). The pair is stored with the index per model
and search mode (table refusal_calibrations) and recorded on every gated run; until something is
calibrated, the configured `evaluation.refusal_score` applies to the similarity alone.

Calibration uses one half of the set (a case's `split` key, else a hash of its id, so the split
is stable as cases are added) and reports accuracy on the other half, which it never looked at.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

import psycopg

from rag_pipeline import store

if TYPE_CHECKING:
    from rag_pipeline.retrieval.search import Hit

COVERAGE_WEIGHTS = tuple(i / 10 for i in range(21))  # 0 (similarity alone) .. 2
AUC_TOLERANCE = 0.01  # weights ranking within this of the best count as equally good
Evidence = tuple[float, float]  # the first result's (similarity, term coverage)


@dataclass(frozen=True)
class Threshold:
    value: float
    source: str  # where it came from, said in words to the user
    coverage_weight: float = 0.0  # how much the first result's term coverage adds to its similarity


@dataclass(frozen=True)
class Calibration:
    threshold: float
    coverage_weight: float


@dataclass(frozen=True)
class Decision:
    refused: bool
    evidence: Evidence | None  # of the first result (None: no result at all)
    threshold: Threshold

    @property
    def score(self) -> float | None:
        return None if self.evidence is None else score(self.evidence, self.threshold.coverage_weight)

    @property
    def reason(self) -> str:
        if self.evidence is None:
            return "no visible chunk matched the query"
        similarity, coverage = self.evidence
        relation = "under" if self.refused else "at or above"
        parts = f"similarity {similarity:.3f}"
        if self.threshold.coverage_weight:
            parts += f" + {self.threshold.coverage_weight:g} x term coverage {coverage:.3f}"
        return (f"the first result's answer score {self.score:.3f} ({parts}) is {relation} the refusal "
                f"threshold {self.threshold.value:.3f} ({self.threshold.source})")

    def to_dict(self) -> dict:
        similarity, coverage = self.evidence or (None, None)

        def rounded(value: float | None) -> float | None:
            return None if value is None else round(value, 4)

        return {"refused": self.refused, "score": rounded(self.score), "similarity": rounded(similarity),
                "term_coverage": rounded(coverage), "coverage_weight": self.threshold.coverage_weight,
                "threshold": round(self.threshold.value, 4), "threshold_source": self.threshold.source,
                "reason": self.reason}


def evidence(hits: Sequence[Hit]) -> Evidence | None:
    """What refusal judges: the first result, the one a reader sees first (after reranking)."""
    if not hits:
        return None
    return hits[0].similarity, hits[0].features.get("term_coverage", 0.0)


def score(found: Evidence, coverage_weight: float) -> float:
    similarity, coverage = found
    return similarity + coverage_weight * coverage


def decide(hits: Sequence[Hit], threshold: Threshold) -> Decision:
    found = evidence(hits)
    refused = found is None or score(found, threshold.coverage_weight) < threshold.value
    return Decision(refused=refused, evidence=found, threshold=threshold)


def in_calibration_split(case_id: str) -> bool:
    """Half of the cases, fixed by their id: the calibration half."""
    return hashlib.sha256(case_id.encode("utf-8")).digest()[0] % 2 == 0


def calibrate(answer: Sequence[Evidence | None], refuse: Sequence[Evidence | None],
              weights: Sequence[float] = COVERAGE_WEIGHTS) -> Calibration:
    """The coverage weight (of `weights`) that ranks must-answer cases above must-refuse ones
    best, then the threshold with the best balanced accuracy at that weight, over the cases'
    first results (None: nothing came back, refused at any threshold).

    The weight is chosen by the area under the ROC curve (every answer/refuse pair counts)
    rather than by one threshold's accuracy, which a handful of must-refuse cases make jumpy: on
    evalsets/corpus the accuracy-best weight answered 61% of held-out answerable questions, the
    AUC-chosen one 79%, at the same refusals. Among weights within AUC_TOLERANCE of the best,
    the smallest wins (closest to similarity alone). Deterministic for the same evidence."""
    if not answer or not refuse:
        raise ValueError("calibration needs at least one must-answer and one must-refuse question")
    ranked = [(auc(_scores(answer, w), _scores(refuse, w)), w) for w in sorted(weights)]
    best = max(auc for auc, _ in ranked)
    weight = min(w for auc, w in ranked if auc >= best - AUC_TOLERANCE)
    return Calibration(threshold=threshold_between(_scores(answer, weight), _scores(refuse, weight)),
                       coverage_weight=weight)


def auc(answer_scores: Sequence[float], refuse_scores: Sequence[float]) -> float:
    """The share of (answer, refuse) pairs the score orders right; ties count half."""
    right = sum((a > r) + 0.5 * (a == r) for a in answer_scores for r in refuse_scores)
    return right / (len(answer_scores) * len(refuse_scores))


def _scores(found: Sequence[Evidence | None], weight: float) -> list[float]:
    return [float("-inf") if f is None else score(f, weight) for f in found]


def threshold_between(answer_scores: Sequence[float], refuse_scores: Sequence[float]) -> float:
    """The threshold with the best balanced accuracy; among equals, the midpoint of the widest
    gap (a margin on both sides), then the lowest. Deterministic for the same scores."""
    points = sorted({s for s in (*answer_scores, *refuse_scores) if s != float("-inf")}) or [0.0]
    candidates = [points[0] - 1e-6] + [(a + b) / 2 for a, b in zip(points, points[1:])] + [points[-1] + 1e-6]
    gaps = [0.0] + [b - a for a, b in zip(points, points[1:])] + [0.0]

    def key(i: int) -> tuple[float, float, float]:
        answered, refused = accuracies(answer_scores, refuse_scores, candidates[i])
        return (-(answered + refused) / 2, -gaps[i], candidates[i])

    return candidates[min(range(len(candidates)), key=key)]


def accuracies(answer_scores: Sequence[float], refuse_scores: Sequence[float], threshold: float) -> tuple[float, float]:
    """(share of must-answer questions answered, share of must-refuse questions refused)."""
    answered = sum(s >= threshold for s in answer_scores) / len(answer_scores) if answer_scores else 1.0
    refused = sum(s < threshold for s in refuse_scores) / len(refuse_scores) if refuse_scores else 1.0
    return answered, refused


def held_out_accuracies(answer: Sequence[Evidence | None], refuse: Sequence[Evidence | None],
                        calibration: Calibration) -> tuple[float, float]:
    """Both accuracies of a calibration on cases it did not see."""
    weight = calibration.coverage_weight
    return accuracies(_scores(answer, weight), _scores(refuse, weight), calibration.threshold)


def threshold_for(conn: psycopg.Connection, model_id: int | None, mode: str, fallback: float) -> Threshold:
    """The newest calibration of the index's model and this mode, else the config's similarity
    threshold."""
    found = store.refusal.latest_calibration(conn, model_id, mode) if model_id is not None else None
    return threshold_from(found, fallback)


def threshold_from(found: dict | None, fallback: float) -> Threshold:
    """The threshold of a calibration row (as read by threshold_for, or as JSON by a search's own
    statement: `Results.calibration`), else the config's similarity threshold."""
    if found is None:
        return Threshold(fallback, "evaluation.refusal_score in the config; not calibrated yet")
    at = found["calibrated_at"]
    at = datetime.fromisoformat(at) if isinstance(at, str) else at
    return Threshold(float(found["threshold"]), f"calibrated {at:%Y-%m-%d %H:%M} from {found['eval_set']}",
                     coverage_weight=float(found["coverage_weight"]))

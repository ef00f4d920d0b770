"""The cases behind a failed metric, each with what it cost: a gate that fails on nDCG must show
the questions whose answering passage ranked low (and where), not a list of refusal mistakes.

A case's loss is its share of the metric's shortfall, in the metric's own units, so the rows of
one metric add up to the distance from a perfect score (1.0, or 0 for the counted metrics)."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from rag_pipeline.evaluation.evaluate import CaseResult


@dataclass(frozen=True)
class Miss:
    case: str
    rank: int | None  # of the first relevant hit; None: not in the top k
    loss: float
    expected: str
    returned: str


def _answerable(r: CaseResult) -> bool:
    return r.expected == "answer"


def _ndcg_loss(r: CaseResult) -> float:
    return 1.0 - (1 / math.log2(r.first_relevant_rank + 1) if r.first_relevant_rank else 0.0)


def _mrr_loss(r: CaseResult) -> float:
    return 1.0 - (1 / r.first_relevant_rank if r.first_relevant_rank else 0.0)


# metric -> (which cases count towards it, the loss of one counted case before dividing by their number)
_SHARES: dict[str, tuple[Callable[[CaseResult], bool], Callable[[CaseResult], float]]] = {
    "source_recall": (lambda r: _answerable(r) and r.source_hit is not None, lambda r: float(not r.source_hit)),
    "evidence_recall": (lambda r: _answerable(r) and r.evidence_hit is not None, lambda r: float(not r.evidence_hit)),
    "ndcg": (_answerable, _ndcg_loss),
    "mrr": (_answerable, _mrr_loss),
    "refusal_accuracy": (lambda r: True, lambda r: float(not r.correct_refusal)),
    "refusal_accuracy_must_refuse": (lambda r: r.expected == "refused", lambda r: float(not r.refused)),
    "refusal_accuracy_must_answer": (_answerable, lambda r: float(r.refused)),
}
_COUNTS: dict[str, Callable[[CaseResult], int]] = {
    "acl_leaks": lambda r: r.acl_leaks,
    "superseded_hits": lambda r: r.superseded_hits,
}


def returned(r: CaseResult) -> str:
    """What the search put first (or that it refused / found nothing)."""
    if r.refused:
        return "(refused)"
    if not r.results:
        return "(no result)"
    top = r.results[0]
    return " \u203a ".join([f"{top['uri']} v{top['version']}", *top.get("section_path", [])])


def misses_by_metric(cases: list[CaseResult], metrics: Iterable[str]) -> dict[str, list[Miss]]:
    """For each named metric the gate judges per case, the cases that cost it something, the
    costliest first. Metrics not computed from retrieval cases (the answer metrics) are left out."""
    grouped: dict[str, list[Miss]] = {}
    for metric in metrics:
        if metric in _SHARES:
            counts, loss = _SHARES[metric]
            counted = [r for r in cases if counts(r)]
            rows = [(r, loss(r) / len(counted)) for r in counted]
        elif metric in _COUNTS:
            rows = [(r, float(_COUNTS[metric](r))) for r in cases]
        else:
            continue
        grouped[metric] = sorted(
            (Miss(r.id, r.first_relevant_rank, round(cost, 4), r.expected_passage, returned(r)) for r, cost in rows if cost > 0),
            key=lambda m: (-m.loss, m.case))
    return grouped

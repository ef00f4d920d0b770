"""Fitting the rerank stage's weights (rerank.WEIGHTS) on labelled questions, deterministically.

The rerank features are cheap and fixed (rerank.features); which of them deserve how much weight
depends on the corpus and on how its questions are worded, so the weights are fitted, not set by
hand. The procedure, documented so anyone can reproduce a stored row from the same split:

1. For every answerable question of the calibration half, the candidates the rerank stage would
   reorder (the top RERANK_DEPTH fused hits, exactly as `search` gets them) and, per candidate,
   its features and whether it is relevant (evaluation's rule: the chunk holding the evidence).
   Searches run once; fitting only re-sorts these lists.
2. The objective is the mean nDCG@k of the first relevant chunk (the gate's `ndcg` metric) under
   the one ordering rule search uses (rerank.order).
3. Coordinate ascent from START (fusion alone: every weight 0) over GRID: for each feature in the
   fixed order of rerank.FEATURES, every grid value is tried with the others held; a value replaces
   the current one only if it raises the objective (by more than EPSILON), the smallest such
   value winning ties. Passes repeat until one changes nothing (at most MAX_PASSES).

No randomness and no order dependence beyond these fixed orders: the same cases give the same
weights. The held-out half is scored before and after, never looked at while fitting.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from rag_pipeline.cleaning.safety import as_indexed
from rag_pipeline.retrieval import rerank

GRID = tuple(round(i * 0.05, 2) for i in range(21))  # 0 .. 1: a feature at most as strong as fusion itself
START = dict.fromkeys(rerank.FEATURES, 0.0)
MAX_PASSES = 6
EPSILON = 1e-9


@dataclass(frozen=True)
class FitCase:
    """One question's rerank candidates in fused order: each one's features (rerank.features),
    whether it is the numbered part the question names, and whether it answers the question."""

    found: tuple[dict[str, float], ...]
    named: tuple[bool, ...]
    relevant: tuple[bool, ...]


@dataclass(frozen=True)
class Fitted:
    weights: rerank.Weights
    objective: float  # on the cases it was fitted on
    passes: int


def objective(cases: Sequence[FitCase], weights: rerank.Weights, k: int) -> float:
    """Mean nDCG@k of the first relevant candidate when ordered with `weights` (0 for a case whose
    candidates hold none: no weight can help it, and it still counts, as in the gate)."""
    if not cases:
        return 0.0
    return sum(_gain(case, weights, k) for case in cases) / len(cases)


def _gain(case: FitCase, weights: rerank.Weights, k: int) -> float:
    for rank, (index, _) in enumerate(rerank.order(case.found, case.named, weights)[:k], 1):
        if case.relevant[index]:
            return 1 / math.log2(rank + 1)
    return 0.0


def fit(cases: Sequence[FitCase], k: int, start: rerank.Weights = START, grid: Sequence[float] = GRID,
        max_passes: int = MAX_PASSES) -> Fitted:
    """The weights coordinate ascent reaches from `start` (see the module's procedure)."""
    if not cases:
        raise ValueError("no labelled questions to fit the rerank weights on")
    useful = [_matrix(c) for c in cases if any(c.relevant)]  # the others score 0 under any weights
    scale = len(useful) / len(cases)
    current = rerank.check_weights(dict(start))
    best = _fast_objective(useful, current, k)
    passes, changed = 0, True
    while changed and passes < max_passes:
        passes += 1
        changed = False
        for name in rerank.FEATURES:
            for value in sorted(grid):
                if value == current[name]:
                    continue
                trial = {**current, name: value}
                found = _fast_objective(useful, trial, k)
                if found > best + EPSILON:
                    current, best, changed = trial, found, True
    return Fitted(current, round(best * scale, 6), passes)


Matrix = tuple[np.ndarray, np.ndarray, np.ndarray]  # features (fused first), named, relevant


def _matrix(case: FitCase) -> Matrix:
    columns = ("fused", *rerank.FEATURES)
    features = np.array([[f[n] for n in columns] for f in case.found], dtype=np.float64).reshape(-1, len(columns))
    return features, np.array(case.named, dtype=bool), np.array(case.relevant, dtype=bool)


def _fast_objective(cases: Sequence[Matrix], weights: rerank.Weights, k: int) -> float:
    """`objective` over prepared cases, as matrices: the fit scores thousands of weightings, and
    sorting Python dicts for each was seconds per pass. Same order rule as rerank.order (named
    first, then score descending, then fused position)."""
    if not cases:
        return 0.0
    vector = np.array([1.0] + [weights[n] for n in rerank.FEATURES])
    total = 0.0
    for features, named, relevant in cases:
        scores = features @ vector
        ranked = np.lexsort((np.arange(len(scores)), -scores, ~named))[:k]
        hits = np.flatnonzero(relevant[ranked])
        if hits.size:
            total += 1 / math.log2(int(hits[0]) + 2)
    return total / len(cases)


def fit_case(query: str, candidates: Sequence[rerank.Candidate], relevant: Sequence[bool]) -> FitCase:
    """One labelled question's candidates as the fit reads them, features computed once (from
    the question as the search matched it)."""
    parsed = rerank.query_features(as_indexed(query))
    best = max((c.fused for c in candidates), default=0.0)
    return FitCase(tuple(rerank.features(parsed, c, best) for c in candidates),
                   tuple(c.section_match >= 1.0 for c in candidates), tuple(bool(r) for r in relevant))

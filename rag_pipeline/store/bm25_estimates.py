"""How many chunks a full-text try is expected to match (store/bm25.py's Ranking plans its tries
by these): from the terms' document frequencies alone, as if the terms were independent. Real
terms co-occur, so these are estimates; what a try matched is counted and bounded by its budget."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol


class Counted(Protocol):
    """What the estimates read of a bm25.Term."""

    cfg: str
    df: int


def first_at_least(common: Sequence[Counted], n: int, rows: int) -> int:
    """How many common terms the first try requires together: the fewest (from 2) whose expected
    matches, were the terms independent, stay within `rows` (a try that overflows costs a full
    budget of rows for nothing)."""
    at_least = 2
    while n > 0 and at_least < len(common) and expected_rows(common, at_least, n) > rows:
        at_least += 1
    return at_least


def expected_rows(common: Sequence[Counted], at_least: int, n: int) -> float:
    """Chunks expected to hold `at_least` of the terms together, were they independent: n times
    the elementary symmetric polynomial of their df/n, per configuration."""
    total = 0.0
    for cfg in {t.cfg for t in common}:
        e = [1.0] + [0.0] * at_least
        for t in common:
            if t.cfg == cfg:
                for k in range(at_least, 0, -1):
                    e[k] += e[k - 1] * t.df / n
        total += n * e[at_least]
    return total


def next_taken(terms: Sequence[Counted], taken: int, limit: int, ratio: float, *, first: bool = False) -> int:
    """One more term at least (none at first, when even the rarest is common), then as many as
    the expected visible rows (df x the share the view passed last time) keep within `limit`."""
    nxt = taken if first else taken + 1
    total = sum(t.df for t in terms[:nxt]) * ratio
    while nxt < len(terms) and total + terms[nxt].df * ratio <= limit:
        total += terms[nxt].df * ratio
        nxt += 1
    return nxt


def threshold_expected(common: Sequence[Counted], weights: Sequence[float], over: dict[str, float], n: int) -> float:
    """Chunks expected to hold common terms whose `weights` sum to more than `over[cfg]`, were the
    terms independent: n times that probability, per configuration (a decision over each term,
    held with probability df/n, cut where the terms left cannot reach the threshold). Called
    only for formulas short enough to run (bm25_match.threshold_queries), so it stays small."""
    total = 0.0
    for cfg, threshold in over.items():
        items = [(min(t.df / n, 1.0) if n else 1.0, w) for t, w in zip(common, weights, strict=True) if t.cfg == cfg]
        total += n * _p_over(items, threshold)
    return total


def _p_over(items: Sequence[tuple[float, float]], threshold: float) -> float:
    tails = [0.0] * (len(items) + 1)  # the weights from each item on
    for i in range(len(items) - 1, -1, -1):
        tails[i] = tails[i + 1] + items[i][1]

    def p(i: int, left: float) -> float:
        if left < 0:
            return 1.0
        if tails[i] <= left:
            return 0.0
        held, weight = items[i]
        return held * p(i + 1, left - weight) + (1 - held) * p(i + 1, left)

    return p(0, threshold)

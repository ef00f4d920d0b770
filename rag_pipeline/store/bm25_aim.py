"""The try after a failed one (store/bm25.py's Ranking): aimed at the score its tenth candidate
already reached, so that it cannot fail again unless it overflows.

A try's candidates are the chunks holding a taken (rare) term, or holding common terms enough to
score more than its bound: "at least m of them" (the bound sums the m - 1 largest of their
weight bounds) or, once a score is known to aim at, "common terms whose weight bounds sum to
more than a threshold" set just under that score (the bound is the threshold). The threshold
asks for far fewer chunks than any m: at 100,000 chunks, the second try of "Upon viral challenge,
influenza-specific memory CD4+ T cells ..." read 7,841 rows with m = 4 and reads 890 with a
threshold. The commonest terms may be left out of its formula (their bounds are added to what the
others must exceed: more rows, but a shorter formula, and no walk of their long posting lists)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

from rag_pipeline.store.bm25_estimates import Counted, expected_rows, threshold_expected
from rag_pipeline.store.bm25_match import Lexeme, clause_leaves, threshold_queries

AIM_ROWS = 0.75  # share of the budget an aimed try may expect to match
# What one lexeme of a try's tsqueries costs, in rows read: GIN tests it for each entry of the
# term its tsquery requires. At 100,000 chunks a row read (heap, version, score) takes about
# 5 us and a lexeme of a threshold's formula about 0.15 ms ("Reduced responsiveness to
# interleukin-2 ...": 304 lexemes and 621 rows, 46 ms; 73 lexemes and 1,749 rows, 17 ms).
LEAF_ROWS = 30
THRESHOLD_TERMS = 24  # common terms beyond which a threshold is not tried (finding its formula costs more)


class Term(Counted, Lexeme, Protocol):
    """What the aim reads of a bm25.Term."""


@dataclass(frozen=True)
class Aimed:
    """The next try: `taken` terms, and either `at_least` m of the common ones together or (with
    `threshold`) the first `formula_terms` common terms by weight over the threshold; neither: the taken alone."""

    taken: int
    at_least: int | None = None
    threshold: float | None = None
    formula_terms: int = 0


def aim(scored: Sequence[Term], weights: Sequence[float], now: Aimed, reached: float, tried: set[Aimed], *,
        limit: int, live_chunks: int, max_leaves: int, slack: float,
        bound: Callable[[Sequence[Term], int | None], float], thresholds: bool = True) -> Aimed | None:
    """The cheapest try (rows expected, plus LEAF_ROWS per lexeme of its tsqueries) among those
    whose bound is under `reached` (the score the tenth best candidate of the try `now` has; the
    list's own can only be higher) and whose candidates include `now`'s (terms taken from the same
    rarest end; as many common terms asked together or fewer, or a threshold): it is proven unless
    it overflows, and a try in `tried` is not aimed at again. `weights`: each scored term's weight
    bound; `bound(common, m)`: the bound of 'at least m' (bm25._bound); `thresholds` False: 'at
    least m' only. None when no such try keeps within AIM_ROWS of the budget and `max_leaves`
    (then the next try is chosen by rows alone)."""
    best: tuple[float, Aimed] | None = None
    cap = limit * AIM_ROWS
    rows = sum(t.df for t in scored[:now.taken])
    target = (reached - slack) / (1 + slack) * (1 - 1e-9)  # a bound under it proves `reached`
    for taken in range(now.taken, len(scored) + 1):
        rows += scored[taken - 1].df if taken > now.taken else 0
        if rows > cap:
            break
        common = scored[taken:]
        options = [(Aimed(taken, m), expected_rows(common, m, live_chunks) if m else 0,
                    clause_leaves(common, m) if m else 0)
                   for m in _counts(common, now, taken, max_leaves) if bound(common, m) * (1 + slack) + slack < reached]
        if thresholds and len(common) <= THRESHOLD_TERMS:
            options += _thresholds(common, weights[taken:], taken, target, max_leaves, live_chunks)
        for option, common_rows, leaves in options:
            cost = rows + common_rows + LEAF_ROWS * leaves
            if option not in tried and rows + common_rows <= cap and (best is None or cost < best[0]):
                best = (cost, option)
    return None if best is None else best[1]


def _counts(common: Sequence[Term], now: Aimed, taken: int, max_leaves: int) -> list[int | None]:
    """The 'at least m' a try taking `taken` terms may ask and still include `now`'s candidates."""
    most = len(common) if now.at_least is None else min(now.at_least, len(common))
    # the taken terms alone: a superset where none were asked together (or all are taken)
    found: list[int | None] = [None] if (now.at_least is None and taken > now.taken) or not common else []
    for m in range(2, most + 1):
        if clause_leaves(common, m) > max_leaves:
            break  # and so would a larger m, short of asking nearly all of them together
        if taken > now.taken or m < most or now.at_least is None:
            found.append(m)
    return found


def _thresholds(common: Sequence[Term], weights: Sequence[float], taken: int, target: float,
                max_leaves: int, live_chunks: int) -> list[tuple[Aimed, float, int]]:
    """Threshold tries at `target`, with their expected rows and lexemes: the first k common terms
    in the formula, the others' bounds added to what they must exceed (fewer terms: a shorter
    formula, more rows), for each k whose formula is short enough."""
    found = []
    for kept in range(len(common), 0, -1):
        option = Aimed(taken, threshold=target, formula_terms=kept)
        over = over_by_config(common, weights, option)
        if min(over.values(), default=0.0) < 0:
            break  # the terms left out alone could reach the target: keeping fewer cannot help
        if (formula := threshold_queries(common[:kept], weights[:kept], over, max_leaves)) is not None:
            found.append((option, threshold_expected(common[:kept], weights[:kept], over, live_chunks), formula[1]))
    return found


def over_by_config(common: Sequence[Term], weights: Sequence[float], option: Aimed) -> dict[str, float]:
    """Per configuration, what the kept terms' bounds must exceed: the threshold less the bounds
    of the terms left out (a chunk scores only its own configuration's terms)."""
    over = {t.cfg: option.threshold or 0.0 for t in common}
    for t, w in zip(common[option.formula_terms:], weights[option.formula_terms:], strict=True):
        over[t.cfg] -= w
    return over

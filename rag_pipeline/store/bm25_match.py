"""The tsqueries that find a full-text try's candidates (store/bm25.py's Ranking): any of the
taken (rare) terms, or at least `at_least` of the common ones together, per text-search
configuration. Lexemes come from to_tsvector and are quoted by text_search.or_query, so no query
text is ever parsed as tsquery operators."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from rag_pipeline.store.text_search import or_query


class Lexeme(Protocol):
    """What the queries read of a bm25.Term."""

    cfg: str
    lexeme: str


def clause_leaves(common: Sequence[Lexeme], at_least: int) -> int:
    """Lexemes in the tsqueries of 'at least `at_least` of the common terms' (per configuration,
    the largest): what evaluating one candidate against them costs at most."""
    per_cfg: dict[str, int] = {}
    for t in common:
        per_cfg[t.cfg] = per_cfg.get(t.cfg, 0) + 1
    return max((_leaves(n, at_least) for n in per_cfg.values()), default=0)


def _leaves(n: int, at_least: int) -> int:
    """Lexemes of _at_least's formula over n terms (0 when it cannot hold: fewer than at_least):
    L(n, 1) = n, L(n, m) = sum over the first term i of 1 + L(n - i - 1, m - 1), by rows of a
    table with running sums (a query may have a thousand terms)."""
    row = list(range(n + 1))  # L(k, 1) for k = 0..n
    for m in range(2, at_least + 1):
        below, total = row, 0
        row = [0] * (n + 1)
        for k in range(m, n + 1):  # L(k, m) = (k - m + 1) + sum of L(j, m - 1) for j = m - 1 .. k - 1
            total += below[k - 1]
            row[k] = (k - m + 1) + total
    return row[n] if at_least >= 1 else 0


def _at_least(lexemes: Sequence[str], at_least: int) -> str:
    """A tsquery holding when `at_least` of the lexemes are present: the first one and
    `at_least` - 1 of those after it, or (recursively) `at_least` of those after it. Nested, so
    its size grows with the pairs of terms, not with every combination of `at_least` of them."""
    if at_least <= 1:
        return "(" + or_query(list(lexemes)) + ")"
    return "(" + " | ".join(f"{or_query([lexemes[i]])} & {_at_least(lexemes[i + 1:], at_least - 1)}"
                            for i in range(len(lexemes) - at_least + 1)) + ")"


def match_queries(taken: Sequence[Lexeme], common: Sequence[Lexeme], at_least: int | None) -> dict[str, list[str]]:
    """Per configuration, the tsqueries of the candidates (a candidate matches any of them): the
    taken terms, any of them; then for 'at least `at_least` of the common terms', one tsquery
    per common term (rarest first) that it and `at_least` - 1 of the commoner ones satisfy.
    Each runs as its own GIN scan (the array of a bitmap index scan, one bitmap in the end), in
    which the term is required: the scan walks that term's posting list and skips through the
    others' to its entries. One tsquery ORing every combination made GIN test each entry of the
    union of all the common words' posting lists against the whole query (100 ms at 100,000
    chunks for 8 common words, against 15 ms)."""
    parts: dict[str, list[str]] = {}
    by_cfg: dict[str, list[str]] = {}
    for t in taken:
        by_cfg.setdefault(t.cfg, []).append(t.lexeme)
    for cfg, lexemes in by_cfg.items():
        parts.setdefault(cfg, []).append(or_query(lexemes))
    if at_least is not None:
        by_cfg = {}
        for t in common:  # rarest first (bm25.Ranking.scored's order)
            by_cfg.setdefault(t.cfg, []).append(t.lexeme)
        for cfg, lexemes in by_cfg.items():  # fewer than at_least: none (the bound counts them all)
            parts.setdefault(cfg, []).extend(
                f"{or_query([lexemes[i]])} & {_at_least(lexemes[i + 1:], at_least - 1)}" if at_least > 1
                else or_query([lexemes[i]]) for i in range(len(lexemes) - at_least + 1))
    return {cfg: queries for cfg, queries in parts.items() if queries}

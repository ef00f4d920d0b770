"""The tsqueries that find a full-text try's candidates (store/bm25.py's Ranking): any of the
taken (rare) terms, or at least `at_least` of the common ones together, per text-search
configuration; and the statement's CTEs that read them. Lexemes come from to_tsvector and are
quoted by text_search.or_query, so no query text is ever parsed as tsquery operators."""

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
    chunks for 8 common words, against 15 ms).

    Inside a tsquery the commoner terms come commonest first: GIN evaluates the formula for
    each entry of the required term, and a formula that meets its likeliest terms first
    settles sooner. The same candidates, found in a third of the time ('remov' and 3 of 9
    commoner words at 100,000 chunks: 19 ms rarest first, 6 ms commonest first; one question's
    8 arms: 67 -> 33 ms)."""
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
                f"{or_query([lexemes[i]])} & {_at_least(lexemes[:i:-1], at_least - 1)}" if at_least > 1
                else or_query([lexemes[i]]) for i in range(len(lexemes) - at_least + 1))
    return {cfg: queries for cfg, queries in parts.items() if queries}


def threshold_queries(common: Sequence[Lexeme], weights: Sequence[float], over: dict[str, float],
                      max_leaves: int) -> tuple[dict[str, list[str]], int] | None:
    """Per configuration, the tsqueries of the chunks whose common terms' bounds (`weights`, in
    `common`'s order: rarest first) sum to more than `over[cfg]` (bm25.Ranking's threshold
    tries): one per term that can open such a set (the first of it held, in order), in which that
    term is required and the rest is a formula that stops where the terms left cannot reach the
    threshold; and how many lexemes they hold in all (what evaluating them costs). None when a
    configuration's formula would hold more than `max_leaves` lexemes, or when a threshold is
    negative (every chunk would pass it: no query can ask for that)."""
    if min(over.values(), default=0.0) < 0:
        return None
    per_cfg: dict[str, list[tuple[str, float]]] = {}
    for t, w in zip(common, weights, strict=True):
        per_cfg.setdefault(t.cfg, []).append((t.lexeme, w))
    found: dict[str, list[str]] = {}
    leaves = 0
    for cfg, items in per_cfg.items():
        left = [max_leaves]
        arms = _over(items, over[cfg], left, top=True)
        if left[0] < 0:
            return None
        leaves += max_leaves - left[0]
        if isinstance(arms, list) and arms:
            found[cfg] = arms
    return found, leaves


def _over(items: Sequence[tuple[str, float]], threshold: float, left: list[int], *,
          top: bool = False) -> list[str] | str | bool:
    """The formula (or, at the top, its arms) of 'the held weights sum to more than threshold':
    True when nothing more is needed, [] / False when the items cannot reach it; `left` counts
    the lexemes still allowed down (negative: too many, the result is then not used)."""
    if threshold < 0:
        return True
    arms: list[str] = []
    tail = sum(w for _, w in items)
    for j, (lexeme, weight) in enumerate(items):
        tail -= weight  # the weights after this one
        if weight + tail <= threshold or left[0] < 0:
            break  # neither this term nor a later one can open a set that reaches the threshold
        left[0] -= 1
        rest = _over(items[j + 1:], threshold - weight, left)
        arms.append(or_query([lexeme]) if rest is True else f"{or_query([lexeme])} & {rest}")
    if top:
        return arms
    return "(" + " | ".join(arms) + ")" if arms else False


# The candidate CTEs of one try: the chunks matching the taken terms (at most budget + 1 rows, to
# tell an overflow) with their approximate score (float4 inner product with their configuration's
# query vector), the best of them (`fts_top`) rescored exactly in float8 from the tsvector, so the
# score is the same BM25 the reference computes. The search inlines these CTEs in its own
# statement (the first try costs no round trip of its own). Two shapes, as the vector branch's
# (store/search.py): a caller who sees few chunks has them read by version and matched one by
# one; any other has the GIN index find the matches and each match's version checked by its own
# lookup (a LATERAL the planner may not flatten: given the versions as a set, the planner, which
# cannot see how many the caller's groups pass, read all 50,000 chunks of a 50% caller at
# 100,000 and matched each, 300 ms, instead of 4,000 index matches).
_CANDIDATES_BY_VERSION = """
        SELECT c.id, -(c.bm25 <#> oq.qv) AS approx
        FROM chunks c JOIN document_versions v ON v.id = c.version_id
        JOIN unnest(%(q_cfg)s::regconfig[], %(q_vec)s::sparsevec[]) WITH ORDINALITY AS oq(cfg, qv, i)
          ON c.ts_config = oq.cfg AND c.tsv @@ ANY ((%(q_or)s::tsquery[])[oq.i:oq.i])
        WHERE {where} LIMIT %(budget)s + 1"""
# One arm per configuration of the try: its chunks matching its tsqueries, both conditions of the
# GIN index chunks_tsv (migration 036: the configuration, then the tsvector), so the index yields
# only that configuration's matches. With the tsvector alone, a lexeme rare in one configuration's
# chunks but common in another's (a Czech team's few documents among English ones share many
# stems) made the scan fetch every chunk of the other configuration holding it, each then thrown
# away: 600 ms for a broad caller at 100,000 chunks (bench_search_scale.py, `few other`).
_INDEX_ARM = """
            SELECT c.id, c.version_id, -(c.bm25 <#> %(q_vec_{i})s::sparsevec) AS approx FROM chunks c
            WHERE c.ts_config::oid = %(q_cfg_{i})s::regconfig::oid AND c.tsv @@ ANY (%(q_or_{i})s::tsquery[])
              AND c.model_id = %(model_id)s"""
_CANDIDATES_BY_INDEX = """
        SELECT c.id, c.approx FROM ({arms}) c
        CROSS JOIN LATERAL (SELECT 1 FROM document_versions v WHERE v.id = c.version_id AND {versions} OFFSET 0) seen
        LIMIT %(budget)s + 1"""


def candidate_ctes(where: str, versions: str, by_version: bool, configs: int = 1) -> str:
    """The CTEs of one try (`by_version`: see bm25.reads_by_version); `where` is the fixed
    visibility/ACL/model fragment of store/search.py, `versions` its part on `v`; `configs`: the
    configurations the try's tsqueries are in (its `q_cfg` parameter), one index arm each."""
    if by_version:
        candidates = _CANDIDATES_BY_VERSION.format(where=where)
    else:
        arms = " UNION ALL".join(_INDEX_ARM.format(i=i) for i in range(max(configs, 1)))
        candidates = _CANDIDATES_BY_INDEX.format(arms=arms, versions=versions)
    return f"fts_cand AS MATERIALIZED ({candidates}\n    ), {_RESCORED}"


_RESCORED = """fts_idf AS (
        SELECT * FROM unnest(%(s_cfg)s::regconfig[], %(s_lex)s::text[], %(s_idf)s::float8[], %(s_q)s::tsquery[])
            AS i(cfg, lexeme, idf, q)
    ), fts_top AS (
        SELECT t.id, coalesce((
                   SELECT sum(i.idf * rag_bm25_tf(coalesce(array_length(u.positions, 1), 1), c.token_count))
                   FROM unnest(c.tsv) u JOIN fts_idf i ON i.cfg = c.ts_config AND i.lexeme = u.lexeme), 0) AS score
        FROM (SELECT id FROM fts_cand ORDER BY approx DESC, id LIMIT %(top)s) t JOIN chunks c ON c.id = t.id
    )"""

# What a try reports: the rows it matched and the rescored best, as one value each.
TRY_VALUES = {"fts_matched": "(SELECT count(*) FROM fts_cand)",
              "fts_found": "(SELECT coalesce(json_agg(json_build_array(id, score)), '[]') FROM fts_top)"}
TRY_COLUMNS = ", ".join(f"{value} AS {name}" for name, value in TRY_VALUES.items())

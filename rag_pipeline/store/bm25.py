"""BM25 whose cost per question does not grow with the corpus (migration 015).

Statistics are kept at publish, not counted per query, and kept per access set (a version's
groups): `fts_acl_terms` holds, per access set, each (configuration, lexeme)'s document frequency
over the live content chunks and an upper bound of its weight in any of them, `fts_acl_corpus`
the live chunk count. A caller's idf sums the access sets its groups overlap, which is exactly
the df over the chunks it may see (each chunk is in one set), as when it was counted per query;
the reader role's row-level security returns no other set's rows. Each chunk carries its
document-side weights w(t,d) = tf(k1+1) / (tf + k1(1 - b + b dl/pivot)), computed at staging, as
a sparsevec indexed by a hash of the lexeme; a chunk's score is its inner product with the
query's idf vector of the chunk's configuration.

The length pivot is a constant (PIVOT tokens) rather than the live average chunk length: the
weights then never change after staging (chunks are append-only; a moving average would have
to re-weight every chunk), and a chunk's weight reveals nothing about other chunks. Chunks are
filled toward the encoder's 256-token budget, so their average stays in a narrow band: 183 tokens
on the project's own corpus (evalsets/corpus, where the pivot was read off), 186 on SciFact; with
b = 0.4 a pivot off by 25% moves a weight by about 5%.

Candidates are bounded with an exactness test (MaxScore): query terms are taken rarest first;
the candidates are the visible chunks matching the taken terms (GIN on tsv, with the view and the
caller's groups inside the query), at most `budget` rows. A chunk matching none of them scores at
most the sum of idf x max weight over the terms left out, so when the `depth`-th best candidate
scores more than that, the list is exactly BM25's top `depth`. The bound is required down to rank
EXACT_DEPTH (what a caller reads; the fusion's deeper candidates are the best of the candidates,
with exact scores): otherwise more terms are taken and the query repeats, while the rows stay
within the budget; when they cannot, the list is the best of the candidates and the record says it
is not proven exact (`exact_depth`: down to which rank it is). A try whose bound failed still tells
the score its EXACT_DEPTH-th candidate reached, which the list's own can only exceed: the next try
is aimed at it (store/bm25_aim.py: the cheapest among those whose bound is lower, often one
asking for the chunks whose common terms' bounds exceed a threshold just under it), so a list
needs one more try, not one per term taken (`aimed`, `threshold` in the record). A chunk holding
`at_least` of the common (not taken) terms together is a candidate too (the bound then sums only
the `at_least` - 1 largest of theirs); GIN finds those with one tsquery per common term, in which
that term is required (store/bm25_match.py), so no scan tests the union of the common words'
posting lists.

Views other than the live index (as of a time, a run's preview) read the live statistics for idf
(an approximation: the view's own counts would cost a scan) and bound the weights loosely (k1+1),
so their lists stay exact for the idf they use."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import psycopg

from rag_pipeline.store import direct_read
from rag_pipeline.store.bm25_aim import Aimed, aim, over_by_config
from rag_pipeline.store.bm25_estimates import expected_rows, first_at_least, next_taken
from rag_pipeline.store.bm25_match import TRY_COLUMNS, candidate_ctes, clause_leaves, match_queries, threshold_queries
from rag_pipeline.store.text_search import or_query

BM25_K1 = 0.9  # as in rag_bm25_tf (migration 015), the one definition: a test checks they agree
BM25_B = 0.4
PIVOT = 184  # the length pivot of rag_bm25_tf, in tokens: what chunks average (module docstring)
DIMENSION = 1_000_000_000  # of every weight vector: pgvector's largest sparsevec (rag_term_id's range)
ROW_BUDGET = 20_000  # most candidate rows one full-text query reads
FIRST_ROWS = 1_000  # the first try takes the rarest terms whose df sum stays within this
TOGETHER_ROWS = 2_500  # and asks m common terms together, m chosen to match about this many
EXACT_DEPTH = 10  # ranks the bound must prove; deeper ones are the best of the candidates
MAX_QUERY_TERMS = 1_000  # a longer query is scored on its rarest terms (sparsevec holds 16,000)
MAX_LEAVES = 400  # lexemes in the tsqueries of "at least m of the common terms", per configuration
_RESCORE_MARGIN = 16  # candidates beyond the depth rescored exactly (float4 weights may tie-swap)
_SLACK = 1e-5  # relative: float4 weights against float8 bounds


@dataclass(frozen=True)
class Term:
    cfg: str
    lexeme: str
    term_id: int  # rag_term_id: the lexeme's index in the weight vectors
    df: int  # live chunks the caller may see that hold it
    max_weight: float  # the largest weight it has in any of them (a bound)
    idf: float


# The query's lexemes under each configuration the caller's chunks use (given; for the live index
# those of the access sets the caller sees, from fts_acl_corpus; for another view found by a skip
# scan of chunks_ts_config) with the statistics of the access sets the
# caller's groups overlap (RLS returns the reader no other), and the live chunks of those sets.
# Needs WITH RECURSIVE; store/search.py inlines it in the statement that prepares a search.
TERM_CTES = """
    fts_cfgs(cfg) AS (
        (SELECT ts_config FROM chunks ORDER BY ts_config LIMIT 1)
        UNION ALL SELECT (SELECT c.ts_config FROM chunks c WHERE c.ts_config > f.cfg ORDER BY c.ts_config LIMIT 1)
        FROM fts_cfgs f WHERE f.cfg IS NOT NULL
    ), fts_q AS (
        SELECT DISTINCT cfg, u.lexeme
        FROM unnest(coalesce(%(configs)s::regconfig[], CASE WHEN %(live)s
                 THEN (SELECT array_agg(DISTINCT ts_config) FROM fts_acl_corpus WHERE acl_groups && %(groups)s::text[] AND chunks > 0)
                 ELSE (SELECT array_agg(cfg) FROM fts_cfgs WHERE cfg IS NOT NULL) END)) cfg,
             unnest(to_tsvector(cfg, %(query)s)) u
    ), fts_terms AS (
        SELECT q.cfg::text AS cfg, q.lexeme, rag_term_id(q.lexeme) AS term_id, coalesce(sum(s.df), 0)::bigint AS df,
               coalesce(max(s.max_weight), 0) AS max_weight
        FROM fts_q q LEFT JOIN fts_acl_terms s
          ON s.ts_config = q.cfg AND s.lexeme = q.lexeme AND s.acl_groups && %(groups)s::text[]
        GROUP BY q.cfg, q.lexeme
    )"""
TERM_COLUMNS = ("(SELECT coalesce(json_agg(json_build_array(cfg, lexeme, term_id, df, max_weight)), '[]')"
                " FROM fts_terms) AS fts_terms,"
                " (SELECT coalesce(sum(chunks), 0)::bigint FROM fts_acl_corpus WHERE acl_groups && %(groups)s::text[])"
                " AS fts_live")


def term_params(query_text: str, groups: Sequence[str], configs: Sequence[str] | None = None, *,
                live: bool = True) -> dict[str, Any]:
    """TERM_CTES' parameters; `live`: the search's view is the live index."""
    return {"query": query_text, "groups": list(groups), "configs": None if configs is None else list(configs),
            "live": live}


def query_terms(
    conn: psycopg.Connection, query_text: str, configs: Sequence[str] | None, groups: Sequence[str], *,
    live: bool = True,
) -> tuple[list[Term], int]:
    """The query's distinct lexemes under each configuration (None: those of the index the view
    shows: `live` or not), with idf from the live statistics of the chunks `groups` may see
    (rarest first), and those chunks' count. One round trip."""
    found = conn.execute(f"WITH RECURSIVE {TERM_CTES} SELECT {TERM_COLUMNS}",
                         term_params(query_text, groups, configs, live=live)).fetchone()
    return terms_from(found[0], found[1])


def terms_from(rows: Sequence[Sequence[Any]], live: int) -> tuple[list[Term], int]:
    """TERM_COLUMNS' values as Terms, rarest first; none of the caller's chunks holds the last."""
    n = int(live)
    terms = [Term(r[0], r[1], int(r[2]), int(r[3]), float(r[4]), idf(n, int(r[3]))) for r in rows]
    terms.sort(key=lambda t: (t.df == 0, t.df, t.cfg, t.lexeme))
    return terms[:MAX_QUERY_TERMS], n


def idf_params(terms: Sequence[Term]) -> dict[str, list]:
    """The `fts_idf` table of candidate_ctes: every query term's idf (what scores read) and its
    tsquery (what term coverage tests a chunk's tsvector with: half the time of unnesting it)."""
    return {"s_cfg": [t.cfg for t in terms], "s_lex": [t.lexeme for t in terms], "s_idf": [t.idf for t in terms],
            "s_q": [or_query([t.lexeme]) for t in terms]}


def idf(n: int, df: int) -> float:
    """BM25's idf (Lucene's form, never negative)."""
    return math.log(1 + (n - df + 0.5) / (df + 0.5))


def sparse_queries(terms: Sequence[Term]) -> dict[str, str]:
    """Per configuration, the query's idf vector in sparsevec text form. Lexemes whose hashes
    collide add up, as they do in the chunks' vectors."""
    per_cfg: dict[str, dict[int, float]] = {}
    for t in terms:
        entries = per_cfg.setdefault(t.cfg, {})
        entries[t.term_id] = entries.get(t.term_id, 0.0) + t.idf
    return {cfg: "{" + ",".join(f"{i}:{v!r}" for i, v in sorted(e.items())) + f"}}/{DIMENSION}"
            for cfg, e in per_cfg.items()}


def _bound(common: Sequence[Term], at_least: int | None, loose: bool) -> float:
    """Most a chunk that is not a candidate can score. It matches no taken term and fewer than
    `at_least` of the common (not taken) ones (any number when None), so per configuration (a
    chunk scores only its own configuration's terms) at most the sum of the `at_least` - 1 largest
    idf x max weight among them. The max weight covers live chunks only; a preview (staged chunks)
    or an as-of view (superseded ones) is `loose`: k1+1 bounds any weight."""
    per_cfg: dict[str, list[float]] = {}
    for t in common:
        per_cfg.setdefault(t.cfg, []).append(t.idf * (BM25_K1 + 1 if loose else t.max_weight))
    keep = None if at_least is None else at_least - 1
    return max((sum(sorted(v, reverse=True)[:keep]) for v in per_cfg.values()), default=0.0)


# At most this many visible chunks at 100,000 chunks: read them by version (more in a larger
# corpus: store/direct_read.py). Measured there: by version 52 / 93 ms (p50 / p95) against the
# index's 152 / 261 at 5,000 visible chunks, 91 / 156 against 87 / 270 at 10,000.
BY_VERSION_MAX_CHUNKS = 10_000


def reads_by_version(visible_chunks: int, corpus_chunks: float) -> bool:
    """Whether a caller who sees `visible_chunks` live chunks of a corpus of `corpus_chunks`
    (an estimate) gets its candidates by version rather than from the GIN index."""
    return visible_chunks <= direct_read.limit(BY_VERSION_MAX_CHUNKS, corpus_chunks, "fulltext")


@dataclass
class Ranked:
    """The full-text branch's result: ids and exact BM25 scores, best first, and how it was found."""

    ids: list[int]
    scores: list[float]
    record: dict[str, Any]


class Ranking:
    """The MaxScore loop of the module docstring, one try at a time: `params()` are the current
    try's (for candidate_ctes), `judge()` takes what it found and returns the result, or None
    when another try is needed (the state has moved on to it).

    Each try's candidates are the chunks matching any taken (rare) term or at least `at_least`
    of the common ones. A failed bound takes one more term (the bound then sums fewer common
    terms); too many rows ask for one more common term together (fewer chunks, a looser bound).
    `budget` None reads every matching row at once (the exhaustive reference).

    A later try does not read again the chunks of the terms taken before it: it reads the newly
    taken terms' chunks and its own common terms' (none when it asks as many of them together as
    the try before it, or none: those chunks were read already), and keeps the best the tries
    before it found (`extends`; "extended" in the record counts such tries). Its candidates are a
    superset of the whole try's, and every bound holds for a superset. A try after an overflow
    reads all its rows (the overflowing try's were cut off at the budget); a threshold that
    overflows (its terms go together more than expected) is followed by a try aimed from the
    one before it by 'at least m' alone."""

    def __init__(self, terms: Sequence[Term], depth: int, *, budget: int | None, loose_bound: bool = False,
                 live_chunks: int = 0, corpus_chunks: float = 0) -> None:
        # the live view: only terms a visible chunk holds can match; other views may hold any
        self.terms = list(terms)  # all of them score (a term no visible chunk holds adds nothing)
        self.scored = sorted(terms, key=lambda t: t.df) if loose_bound else [t for t in terms if t.df > 0]
        self.depth, self.loose, self.live_chunks = depth, loose_bound, live_chunks
        self.by_version = reads_by_version(live_chunks, corpus_chunks)
        self.record: dict[str, Any] = {"terms": len(self.scored), "budget": budget, "tries": 0,
                                       "candidates": "by version" if self.by_version else "index"}
        self.limit = budget if budget is not None else 2**62
        self.vectors = sparse_queries(self.scored)
        first_rows = min(self.limit // 2, FIRST_ROWS)
        self.taken = len(self.scored) if budget is None else next_taken(self.scored, 0, first_rows, 1.0, first=True)
        self.together_rows = min(self.limit // 2, TOGETHER_ROWS)  # what 'at least m of the common' may match
        self.at_least: int | None = None  # the first try: rare terms alone (see below)
        self.best: Ranked | None = None
        self.tried: set[Aimed] = set()  # the tries run: never aimed at again
        self.weights = [t.idf * (BM25_K1 + 1 if loose_bound else t.max_weight) for t in self.scored]  # bounds
        self.threshold: float | None = None  # of a try aimed at a score (bm25_aim.py), over
        self.formula_terms = 0  # the weights of the first this many common terms
        self.extends: int | None = None  # the current try reads only the terms taken from here on
        self.skip_common = False  # and none of its common terms: their chunks were read before
        self.aimed_from: tuple[Aimed, float, list[tuple[int, float]], int] | None = None  # a threshold's fallback
        self.kept: list[tuple[int, float]] = []  # the best of the rows tried so far, exactly scored
        self.kept_rows = 0  # and how many rows those tries read
        self._settle()
        # The first try asks for the rarest terms alone, up to twice FIRST_ROWS: the score it
        # reaches aims the next at a threshold (bm25_aim.py), which asks for far fewer chunks than
        # any 'at least m' could before a score was known. At 100,000 chunks: broad callers' p95
        # 59 -> 43 ms (150 questions), as-of 64 -> 37 (100); the median unchanged.
        while (budget is not None and self.taken + 2 < len(self.scored)
               and sum(t.df for t in self.scored[:self.taken + 1]) <= first_rows * 2):
            self.taken += 1

    @property
    def empty(self) -> Ranked | None:
        """The result without any query, when no term can match."""
        return None if self.scored else Ranked([], [], {**self.record, "exact": True, "taken": 0})

    def _together(self) -> int | None:
        """How many of the common terms a candidate must hold together: the fewest expected to
        match within `together_rows`, or fewer when their tsqueries would be too long (more rows,
        a tighter bound) as long as the rows expected stay within half the budget; None when
        even that fails (then only taken terms find candidates)."""
        common = self.scored[self.taken:]
        at_least = first_at_least(common, self.live_chunks, self.together_rows)
        while at_least > 2 and clause_leaves(common, at_least) > MAX_LEAVES:
            at_least -= 1
        too_many = self.live_chunks > 0 and expected_rows(common, at_least, self.live_chunks) > self.limit // 2
        if too_many or clause_leaves(common, at_least) > MAX_LEAVES:  # (no live chunk: nothing to expect by)
            return None
        return at_least

    def _settle(self) -> None:
        common = self.scored[self.taken:]
        if self.at_least is not None and (not common or self.at_least > len(common)
                                          or clause_leaves(common, self.at_least) > MAX_LEAVES):
            self.at_least = None
        if self.taken == 0 and self.at_least is None and self.scored:
            self.taken = 1

    def params(self) -> dict[str, Any]:
        """The current try's parameters; `q_cfg` lists its configurations, one index arm each
        (candidate_ctes' `configs`)."""
        common = [] if self.skip_common else self.scored[self.taken:]
        queries = match_queries(self.scored[self.extends or 0:self.taken], common, self.at_least)
        if self.threshold is not None and common:
            try_now = self._now()
            for cfg, arms in (threshold_queries(common[:self.formula_terms], self.weights[self.taken:][:self.formula_terms],
                                                over_by_config(common, self.weights[self.taken:], try_now),
                                                MAX_LEAVES) or ({}, 0))[0].items():
                queries.setdefault(cfg, []).extend(arms)
        width = max((len(q) for q in queries.values()), default=1)  # a rectangular array: repeat the first
        arms: dict[str, Any] = {"q_cfg_0": "english", "q_or_0": [], "q_vec_0": f"{{}}/{DIMENSION}"}  # none: matches nothing
        for i, (cfg, ors) in enumerate(queries.items()):
            arms.update({f"q_cfg_{i}": cfg, f"q_or_{i}": ors, f"q_vec_{i}": self.vectors[cfg]})
        return {"q_cfg": list(queries), "q_or": [q + q[:1] * (width - len(q)) for q in queries.values()],
                "q_vec": [self.vectors[c] for c in queries], **arms,
                "budget": self.limit - self.kept_rows, "top": self.depth + _RESCORE_MARGIN,
                **idf_params(self.terms)}

    def judge(self, matched: int, found: Sequence[tuple[int, float]]) -> Ranked | None:
        self.record["tries"] += 1
        now = self._now()
        self.tried.add(now)
        common = self.scored[self.taken:]
        if self.extends is not None:  # this try read the new terms' rows only: add the earlier tries'
            self.record["extended"] = self.record.get("extended", 0) + 1
            matched, found = matched + self.kept_rows, [*dict([*self.kept, *found]).items()]
        best = sorted(((float(score), int(i)) for i, score in found), key=lambda s: (-s[0], s[1]))
        ordered = best[:self.depth]
        self.extends, self.kept_rows, self.skip_common = None, 0, False
        bound = _bound(common, self.at_least, self.loose) if self.threshold is None else self.threshold
        overflow = matched > self.limit
        needed = min(self.depth, EXACT_DEPTH)  # ranks the proof must reach
        proven = sum(1 for s, _ in ordered if s > bound * (1 + _SLACK) + _SLACK) if bound > 0 else len(ordered)
        exact = not overflow and (bound == 0 or proven >= needed)
        current = Ranked([i for _, i in ordered], [s for s, _ in ordered], {
            **self.record, "taken": self.taken, "taken_terms": [t.lexeme for t in self.scored[:self.taken]][:50],
            "at_least": self.at_least, **({"threshold": round(self.threshold, 6)} if self.threshold else {}),
            "matched": matched, "overflow": overflow, "bound": round(bound, 6),
            "exact": exact, "exact_depth": 0 if overflow else proven})
        if exact:
            return current
        if overflow:
            self.record["overflows"] = current.record["overflows"] = self.record.get("overflows", 0) + 1
            if self.threshold is not None and self.aimed_from is not None:
                # the threshold matched more than expected (its terms go together): aim from the try
                # before it again, by 'at least m' alone
                before, reached, kept, kept_rows = self.aimed_from
                self.aimed_from = None
                if (retry := self._aim(before, reached, thresholds=False)) is not None:
                    self._follow(retry, before, kept, kept_rows)
                    return None
            if (self.at_least is not None and self.at_least + 1 <= len(common)
                    and clause_leaves(common, self.at_least + 1) <= MAX_LEAVES):
                self.at_least += 1  # fewer candidates: chunks holding one more common term together
                self._settle()
                return None
            if self.best is not None and len(self.best.ids) >= len(current.ids):  # the proof failed, the rows did not
                self.best.record.update(tries=self.record["tries"], widen_overflow=True,
                                        overflows=self.record["overflows"])
                return self.best
            return current
        self.best = current
        if self.taken == len(self.scored):
            return current
        kept = [(i, s) for s, i in best[:self.depth + _RESCORE_MARGIN]]
        reached = ordered[needed - 1][0] if len(ordered) >= needed else None
        if reached is not None and (aimed := self._aim(now, reached)) is not None:
            self.aimed_from = (now, reached, kept, matched)
            self._follow(aimed, now, kept, matched)
            return None
        ratio = max(matched, 1) / max(sum(t.df for t in self.scored[:self.taken]), 1)
        self.taken = next_taken(self.scored, self.taken, self.limit // 2, ratio)
        # the fewer common terms left may be asked together again (the bound sums m - 1 of them)
        self.at_least, self.threshold, self.formula_terms = self._together(), None, 0
        self._settle()
        self._extend(now, kept, matched)
        return None

    def _aim(self, now: Aimed, reached: float, *, thresholds: bool = True) -> Aimed | None:
        return aim(self.scored, self.weights, now, reached, self.tried, limit=self.limit,
                   live_chunks=self.live_chunks, max_leaves=MAX_LEAVES, slack=_SLACK,
                   bound=lambda c, m: _bound(c, m, self.loose), thresholds=thresholds)

    def _follow(self, aimed: Aimed, now: Aimed, kept: list[tuple[int, float]], matched: int) -> None:
        """Make `aimed` the next try, after the try `now` (which found `kept`, reading `matched` rows)."""
        self.taken, self.at_least, self.threshold, self.formula_terms = (aimed.taken, aimed.at_least,
                                                                         aimed.threshold, aimed.formula_terms)
        self.record["aimed"] = self.record.get("aimed", 0) + 1
        self._extend(now, kept, matched)

    def _extend(self, now: Aimed, kept: list[tuple[int, float]], matched: int) -> None:
        """The next try reads the newly taken terms' chunks, and its common terms' unless every
        chunk holding m' >= m of fewer common terms was a candidate of `now` already."""
        self.extends, self.kept, self.kept_rows = now.taken, kept, matched
        self.skip_common = self.threshold is None and (
            self.at_least is None or (now.at_least is not None and self.at_least >= now.at_least))

    def _now(self) -> Aimed:
        return Aimed(self.taken, self.at_least, self.threshold, self.formula_terms)


def rank(
    conn: psycopg.Connection, terms: Sequence[Term], where: str, versions: str, params: dict[str, Any], depth: int,
    *, budget: int | None, loose_bound: bool = False, live_chunks: int = 0, corpus_chunks: float = 0,
    ranking: Ranking | None = None,
) -> Ranked:
    """BM25's top `depth` chunks passing `where` (`versions`: its part on the version, as
    candidate_ctes takes them): the tries of a Ranking, one statement each (`ranking`: one whose
    first try already ran, inside the search's own statement)."""
    ranking = ranking or Ranking(terms, depth, budget=budget, loose_bound=loose_bound, live_chunks=live_chunks,
                                 corpus_chunks=corpus_chunks)
    if ranking.empty is not None:
        return ranking.empty
    while True:
        tried = ranking.params()
        sql = f"WITH {candidate_ctes(where, versions, ranking.by_version, len(tried['q_cfg']))} SELECT {TRY_COLUMNS}"
        matched, found = conn.execute(sql, {**params, **tried}, prepare=True).fetchone()
        result = ranking.judge(int(matched), [(i, s) for i, s in found])
        if result is not None:
            return result

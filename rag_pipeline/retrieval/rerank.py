"""Deterministic rerank of fused candidates: exact evidence the embedding and BM25 ranks blur.

Fusion ranks by position only; it cannot see that a chunk contains the question's exact
phrase, its number or identifier ("10-K", "800-53", "2019"), its terms close together, or a
section title naming the question's subject. These features are computed from the candidate's
own text, with no model and no randomness, so the same query over the same index always gives
the same order. Every feature is kept on the hit (`Hit.features`) so the search log can show
why a result moved.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass

# Weights of each feature over the fused score normalised to [0, 1] (best candidate = 1), used
# until `rag-pipeline calibrate-rerank` stores weights fitted on the index's own evaluation set
# (table rerank_calibrations, newest per model). These defaults are fitted too, by that procedure
# (retrieval/rerank_fit.py) on the 78 answerable calibration cases of evalsets/corpus/eval.yaml:
# `rag-pipeline calibrate-rerank evalsets/corpus/eval.yaml --config evalsets/corpus/rag_pipeline.yaml
# --dry-run` reproduces them (figures before and after, held-out halves included: bench/README.md).
WEIGHTS = {
    "term_coverage": 0.35,  # share of the query's idf the chunk matches (from the SQL)
    "phrase": 0.25,  # share of the query's adjacent content-word pairs found adjacent in the chunk
    "identifiers": 0.0,  # share of the query's numbers/identifiers found verbatim (term coverage sees them too)
    "section": 0.45,  # share of the query's content words in the chunk's section path
    "proximity": 0.0,  # how tightly the matched query words cluster in the chunk
}
FEATURES = tuple(WEIGHTS)
Weights = dict[str, float]
STEM_CHARS = 6  # crude language-neutral stemming: "approvals"/"approval" share a 6-letter prefix
_WORD = re.compile(r"\w+(?:[-./]\w+)*", re.UNICODE)
_ASCII_WORD = re.compile(r"\w+(?:[-./]\w+)*", re.ASCII)
# Function words of the corpus languages: never evidence of anything on their own.
STOP_WORDS = frozenset(
    """a an and are as at be by can do does for from has have how i if in is it its may must of on
    or shall should than that the their there these this to under was were what when where which who
    why will with within would der die das und ist ein eine einer eines im in den dem des zu mit von
    für auf nicht wie was wer wo welche welcher le la les un une des du de et est en que qui dans pour
    par sur au aux el los las y es del que se je na v ve se za do od pro jak co""".split()
)


@dataclass(frozen=True)
class Candidate:
    """What the reranker reads of a fused hit."""

    text: str
    section_path: Sequence[str]
    fused: float  # the fusion score
    term_coverage: float  # from the full-text branch's SQL
    section_match: float = 0.0  # 1: the numbered part the question names, 0.5: within it (SQL, migration 022)


def fold(text: str) -> str:
    """Lower case without accents: "Übersicht" and "ubersicht" compare equal. Only the non-ASCII
    runs are decomposed character by character (ASCII has no accents to drop): folding every
    character in Python was two thirds of the rerank stage's 10 ms per search."""
    folded = text.casefold()
    if folded.isascii():
        return folded
    return _NON_ASCII.sub(_without_marks, unicodedata.normalize("NFKD", folded))


_NON_ASCII = re.compile(r"[^\x00-\x7f]+")


def _without_marks(run: re.Match) -> str:
    return "".join(ch for ch in run.group() if not unicodedata.combining(ch))


def words(text: str) -> list[str]:
    folded = fold(text)
    # after folding, ASCII text has no upper case or other letters: the ASCII pattern finds the
    # same words a fifth faster (the rerank stage reads fifty chunks per search)
    return (_ASCII_WORD if folded.isascii() else _WORD).findall(folded)


def _stem(word: str) -> str:
    return word[:STEM_CHARS]


def is_identifier(word: str) -> bool:
    """Numbers and codes ("2019", "10-k", "800-53", "s.2155", "c-1"): matched verbatim only."""
    return any(ch.isdigit() for ch in word)


def query_features(query: str) -> dict[str, list]:
    """The parts of the query the features look for, computed once per query."""
    all_words = words(query)
    content = [w for w in all_words if w not in STOP_WORDS]
    stems = sorted({_stem(w) for w in content if not is_identifier(w)})
    pairs = sorted({(_stem(a), _stem(b)) for a, b in zip(content, content[1:])})
    return {"stems": stems, "pairs": pairs, "identifiers": sorted({w for w in content if is_identifier(w)})}


def features(query: dict[str, list], candidate: Candidate, best_fused: float) -> dict[str, float]:
    """Every feature in [0, 1], plus the normalised fused score. A feature the query gives
    nothing to look for is 0 without reading the text for it: fifty candidates a search."""
    text_words = words(candidate.text)
    stems = [w[:STEM_CHARS] for w in text_words]  # _stem, inlined
    wanted = set(query["stems"])
    found = {
        "fused": candidate.fused / best_fused if best_fused > 0 else 0.0,
        "term_coverage": float(candidate.term_coverage),
        "phrase": _pairs_share(query["pairs"], text_words, stems),
        "identifiers": _share(query["identifiers"], set(text_words)) if query["identifiers"] else 0.0,
        "section": _share(query["stems"], {_stem(w) for w in words(" ".join(candidate.section_path))}) if wanted else 0.0,
        "proximity": _proximity(stems, wanted.intersection(stems)) if len(wanted) > 1 else 0.0,
    }
    return {name: round(value, 6) for name, value in found.items()}


def _pairs_share(pairs: Sequence[tuple[str, str]], text_words: list[str], stems: list[str]) -> float:
    """The share of the query's adjacent content-word pairs (by stem) adjacent in the text, function
    words skipped as in the query. Only pairs starting with a stem a query pair starts with are
    formed: the rest could match nothing."""
    if not pairs:
        return 0.0
    firsts = {a for a, _ in pairs}
    content = [s for w, s in zip(text_words, stems) if w not in STOP_WORDS]
    present = {(a, b) for a, b in zip(content, content[1:]) if a in firsts}
    return _share(pairs, present)


def score(found: dict[str, float], weights: Weights | None = None) -> float:
    return found["fused"] + sum(weight * found[name] for name, weight in (weights or WEIGHTS).items())


def check_weights(weights: object) -> Weights:
    """Stored or given weights, refused unless they weigh exactly the known features with finite
    numbers in [0, 10]: a weight read back from the database reorders every search."""
    if not isinstance(weights, dict) or set(weights) != set(FEATURES):
        raise ValueError(f"rerank weights must name exactly {', '.join(FEATURES)}; got {weights!r}")
    for name, value in weights.items():
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 10:
            raise ValueError(f"rerank weight {name}={value!r} is not a number from 0 to 10")
    return {name: float(weights[name]) for name in FEATURES}


def _share(wanted: Sequence, present: set) -> float:
    return sum(1 for w in wanted if w in present) / len(wanted) if wanted else 0.0


def _proximity(stems: list[str], wanted: set[str]) -> float:
    """(distinct matched terms - 1) / length of the shortest window holding all of them: 1.0
    when they stand side by side, towards 0 when scattered; 0 with fewer than two."""
    if len(wanted) < 2:
        return 0.0
    positions = [(i, s) for i, s in enumerate(stems) if s in wanted]
    counts: dict[str, int] = {}
    best = len(stems) + 1
    left = 0
    for pos, stem in positions:
        counts[stem] = counts.get(stem, 0) + 1
        while len(counts) == len(wanted):
            best = min(best, pos - positions[left][0] + 1)
            head = positions[left][1]
            counts[head] -= 1
            if not counts[head]:
                del counts[head]
            left += 1
    return (len(wanted) - 1) / (best - 1) if best <= len(stems) else 0.0


def rerank(query: str, candidates: Sequence[Candidate], weights: Weights | None = None) -> list[tuple[int, float, dict[str, float]]]:
    """(index into candidates, rerank score, features), best first; ties keep fused order, so
    the result is a pure function of the query and the candidates. A candidate that is the
    numbered part the question names ("§ 12", "Item 1A") comes before every other: the question
    says where the answer is, and no weighed evidence overrides that. One merely within it
    (0.5: under "7.2" for a question naming 7.2) gets no such priority: "IRM 2.3.59" names a
    whole manual, whose front matter is as much part of it as its numbered sections.
    `weights`: the index's fitted weights (None: WEIGHTS)."""
    parsed = query_features(query)
    best = max((c.fused for c in candidates), default=0.0)
    found = [features(parsed, candidate, best) for candidate in candidates]
    named = [c.section_match >= 1.0 for c in candidates]
    return [(i, value, found[i]) for i, value in order(found, named, weights)]


def order(found: Sequence[dict[str, float]], named: Sequence[bool], weights: Weights | None = None) -> list[tuple[int, float]]:
    """(index, score) best first of candidates with these features; `named`: the candidate is the
    numbered part the question names. The one ordering rule, shared by search and the fitting of
    the weights (rerank_fit.py), so what is fitted is what runs."""
    scored = [(i, score(f, weights)) for i, f in enumerate(found)]
    scored.sort(key=lambda item: (not named[item[0]], -item[1], item[0]))
    return scored

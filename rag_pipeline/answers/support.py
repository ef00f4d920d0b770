"""The support score: does a cited passage say what the claim says, once its exact fields are
all there and each figure stands in its role?

Three signals, claim vs cited chunk:

- similarity: the cosine similarity of the claim's embedding to the best of the chunk's stored
  embedding and the embeddings of the chunk's sentences (a claim restates one sentence; a long
  chunk's own vector is diluted by the rest). Both sides are read in the canonical form of
  fields.canonical (number words as digits, dates as ISO, amounts as "EUR 165", percentages as
  "15%"), so "2013-02-12" and "February 12, 2013" look alike to the model too. The sentences of
  every cited chunk and all claims are encoded in one model call per verification, each chunk's
  sentences once;
- term coverage: the share of the claim's lexemes the chunk holds, under the chunk's own
  text-search configuration, figures left out (the exact-field rule settled them, and a figure
  written differently is not a missing word);
- polarity: 1 when the claim and the chunk's sentences that match it best differ in negation
  (polarity.py: the best by similarity, and the one sharing the most of the claim's words where
  that shares more; a sentence the next one denies, "This is no longer the case", as negated),
  else 0.

score = similarity + coverage_weight x coverage - polarity_weight x polarity. The weights and the
threshold are not guessed: `calibrate` takes the labelled citations of answer cases (those that
support their claim and those that do not, among the ones that reach the score) and fits them
with refusal's measures (`refusal.auc`, the threshold by balanced accuracy): of the (polarity
weight, coverage weight) pairs that rank within AUC_TOLERANCE of the best, the one whose
threshold gets the most citations right wins, then the largest polarity weight (the flag is
evidence against support: it counts fully unless the labelled citations show it misleads), then
the smallest coverage weight. Few non-supporting citations reach the score once the rules have
decided the rest (six on evalsets/answers), so many weights rank within the tolerance: the
smallest of them alone had moved from 0.9 to 0.2 on one citation's change, passing 97% of the
calibration half's supporting citations where 0.8 passes all. The calibration split of the set
only. The triple is stored with the index per model (support_calibrations) and recorded with
every verification; until one is stored, DEFAULT applies. A calibration stored before the
polarity flag (migration 021) fitted another score and is not applied.

Cross-lingual citations (an English claim on a Czech, German or French passage: the packaged
model is English-only and no lexeme is shared) are scored by a multilingual model instead and
judged against their own threshold (crosslingual.py): score = its similarity - polarity weight x
polarity flag, the threshold fitted by `calibrate_crosslingual` from the labelled cross-lingual
citations of the calibration split, stored beside the other three numbers.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace

import numpy as np
import psycopg

from rag_pipeline import store
from rag_pipeline.answers import crosslingual, denials, fields, figures, polarity
from rag_pipeline.answers.claim_sentences import rejoined
from rag_pipeline.embedding import Embedder, multilingual
from rag_pipeline.retrieval import refusal

POLARITY_WEIGHTS = tuple(i / 10 for i in range(11))  # 0 (flag ignored) .. 1 (one unit of similarity)
MAX_SENTENCES = 64  # sentences of one chunk compared with a claim (a chunk is a few hundred words)
MAX_SENTENCE_CHARS = 1000
CANDIDATES = 3  # sentences of a chunk encoded and compared per claim (`evidence`)
CROSS_CANDIDATES = 6  # the same across languages, where shared words say less (names, codes)
CROSS_PASSAGE_CHARS = 2000  # of the chunk's text read whole by the multilingual model (512 tokens)
# Before any calibration of cross-lingual citations: what calibrate-support fits on the 34
# supporting and 26 non-supporting cross-lingual citations of evalsets/answers/corpus_answers.yaml's
# calibration split (0.862; 0.830 from the first 13 and 5). e5's cosine of a claim and the passage
# sentence it translates is 0.82-0.91 there, a sentence of the same document on another matter
# 0.72-0.80, but a reversed claim or another name of the same list 0.81-0.89: the bar sits high
# in that overlap, so a doubtful cross-lingual citation is flagged for a reviewer rather than passed.
DEFAULT_CROSSLINGUAL = 0.862
_SENTENCE_END = re.compile(r"(?<=[.!?;:])\s+(?=\S)|\s*\n\s*")

Evidence = tuple[float, float, float]  # (similarity, term coverage, polarity flag 0/1)


@dataclass(frozen=True)
class Threshold:
    value: float
    source: str  # where it came from, said in words to the user
    coverage_weight: float = 0.0
    polarity_weight: float = 0.0
    crosslingual_value: float = DEFAULT_CROSSLINGUAL  # the bar of a cross-lingual citation's score


@dataclass(frozen=True)
class Calibration:
    threshold: float
    coverage_weight: float
    polarity_weight: float
    crosslingual_threshold: float | None = None  # None: too few labelled cross-lingual citations

    @property
    def crosslingual_value(self) -> float:
        return DEFAULT_CROSSLINGUAL if self.crosslingual_threshold is None else self.crosslingual_threshold


# Before any calibration: on the demo corpus, a claim paraphrasing its passage scores 0.85-1.3 at
# this coverage weight, one citing a passage on another subject of the same document 0.2-0.6.
DEFAULT = Threshold(0.7, "built-in default; not calibrated yet (rag-pipeline calibrate-support)",
                    coverage_weight=0.5, polarity_weight=0.5)


def score(found: Evidence, threshold: Threshold | Calibration, crosslingual: bool = False) -> float:
    """The support score; a cross-lingual citation's has no term coverage (module docstring)."""
    similarity, coverage, flag = found
    if crosslingual:
        return similarity - threshold.polarity_weight * flag
    return similarity + threshold.coverage_weight * coverage - threshold.polarity_weight * flag


def bar(threshold: Threshold | Calibration, crosslingual: bool = False) -> float:
    """The value a citation's score must reach: the cross-lingual one for a cross-lingual citation."""
    if crosslingual:
        return threshold.crosslingual_value
    return threshold.value if isinstance(threshold, Threshold) else threshold.threshold


def sentences(text: str) -> list[str]:
    """A chunk's sentences (and lines: a list item, a table row, a slide line), at most
    MAX_SENTENCES of at most MAX_SENTENCE_CHARS, fragments of fewer than three words left out
    unless the chunk has nothing longer."""
    parts = [p.strip()[:MAX_SENTENCE_CHARS] for p in rejoined(_SENTENCE_END.split(text)) if p.strip()]
    longer = [p for p in parts if len(p.split()) >= 3]
    return (longer or parts or [text[:MAX_SENTENCE_CHARS]])[:MAX_SENTENCES]


@dataclass
class Scored:
    similarity: float
    coverage: float
    flag: float
    sentence: str  # the chunk's sentence that matches the claim best
    languages: tuple[str | None, str | None] | None = None  # (claim, passage) when cross-lingual

    @property
    def evidence(self) -> Evidence:
        return (self.similarity, self.coverage, self.flag)

    @property
    def crosslingual(self) -> bool:
        return self.languages is not None


def evidence(conn: psycopg.Connection, embedder: Embedder, pairs: Sequence[tuple[str, int, dict]]) -> list[Scored]:
    """The signals of each (claim text, chunk id, chunk row with `text`, `embedding` and the
    document's `language`): cross-lingual pairs by the multilingual model (crosslingual.py), the
    rest by `monolingual_evidence`, each in one batch."""
    crossed = [crosslingual.crosses(claim, chunk.get("language"), chunk["text"]) for claim, _, chunk in pairs]
    same = monolingual_evidence(conn, embedder, [p for p, x in zip(pairs, crossed) if not x])
    other = crosslingual_evidence([p for p, x in zip(pairs, crossed) if x])
    return [next(other) if x else next(same) for x in crossed] if pairs else []


def crosslingual_evidence(pairs: Sequence[tuple[str, int, dict]]) -> Iterator[Scored]:
    """Similarity by the multilingual model: the best of the claim against the chunk's text
    (its first CROSS_PASSAGE_CHARS) and its CROSS_CANDIDATES candidate sentences, each distinct
    text encoded once, both sides in canonical form (a Czech "1. ledna 2026" and an English
    "1 January 2026" read alike). Candidates: the sentences stating every figure of the claim
    when some do, else those sharing the most words with it (names, codes), then the first. No
    term coverage (module docstring); the polarity flag as for any pair (its cues cover the
    corpus' languages)."""
    if not pairs:
        return
    split = {cid: sentences(chunk["text"]) for _, cid, chunk in pairs}
    chosen = [_crosslingual_candidates(claim, split[cid]) for claim, cid, _ in pairs]
    whole = {cid: fields.canonical(chunk["text"][:CROSS_PASSAGE_CHARS]) for _, cid, chunk in pairs}
    canonical = {(cid, i): fields.canonical(split[cid][i]) for (_, cid, _), found in zip(pairs, chosen) for i in found}
    claims = sorted({fields.canonical(claim) for claim, _, _ in pairs})
    passages = sorted(set(whole.values()) | set(canonical.values()))
    queries, encoded = multilingual.encode_queries(claims), multilingual.encode_passages(passages)
    claim_vector, passage_vector = dict(zip(claims, queries)), dict(zip(passages, encoded))
    for (claim, cid, chunk), found in zip(pairs, chosen):
        vector = claim_vector[fields.canonical(claim)]
        ranked = sorted(found, key=lambda i: -float(passage_vector[canonical[(cid, i)]] @ vector))
        similarity = float(passage_vector[whole[cid]] @ vector)
        if ranked:
            similarity = max(similarity, float(passage_vector[canonical[(cid, ranked[0])]] @ vector))
        best = [split[cid][i] for i in ranked[:2]]
        yield Scored(similarity, 0.0, _flag(claim, split[cid], ranked, chunk), best[0] if best else "",
                     languages=(crosslingual.claim_language(claim), chunk.get("language")))


def _flag(claim: str, found: list[str], ranked: list[int], chunk: dict, words: Sequence[set[str]] | None = None) -> float:
    """The polarity flag, where polarity.py can read the passage's language (else 0: no evidence),
    of the claim against its best sentences by similarity (`ranked`) and against the chunk's
    sentences sharing the most words with it (`words`: each sentence's `fields.terms`), whatever
    the candidates were: the one sharing more than the best, where a sentence model ranks a
    longer sentence on the claim's subject above the short one that says it and negates it; and
    for a claim that negates, the one closest to each clause holding its negation ("...; the
    module cannot be obtained, so ..."), where that negation is said."""
    if not polarity.reads(chunk.get("language")):
        return 0.0
    words = [fields.terms(s) for s in found] if words is None else words
    labels = _header_rows(found, chunk.get("text", ""))
    if labels:  # a table's header row names its columns ("Not Identified Layoff", "Temporary Closure"): no statement
        words = [set() if i in labels else w for i, w in enumerate(words)]
        ranked = [i for i in ranked if i not in labels]
    said = fields.terms(claim)
    also = []
    closest = _closest(said, words)
    if ranked and closest is not None and len(said & words[closest]) > len(said & words[ranked[0]]):
        also.append(closest)
    for clause in polarity.negated_clauses(claim):
        nearest = _closest(fields.terms(clause), words)
        if nearest is not None and nearest not in ranked[:2] + also:
            also.append(nearest)
    return float(polarity.mismatch(claim, [_reading(found, i) for i in ranked[:2]], [_reading(found, i) for i in also]))


def _header_rows(found: list[str], text: str) -> set[int]:
    """The sentences that are a Markdown table's header row: the line of the chunk's text before
    its `| --- |` rule (`sentences` leaves a rule without spaces out, so it is looked for there)."""
    lines = [line.strip() for line in text.splitlines()]
    headers = {line[:MAX_SENTENCE_CHARS] for line, after in zip(lines, lines[1:]) if line.startswith("|") and _TABLE_RULE.match(after)}
    return {i for i, sentence in enumerate(found) if sentence in headers} if headers else set()


def _closest(said: set[str], words: Sequence[set[str]]) -> int | None:
    """The sentence sharing the most of these words (the first among equals), None if none shares one."""
    best = max(range(len(words)), key=lambda i: (len(said & words[i]), -i), default=None)
    return best if best is not None and said & words[best] else None


_TABLE_RULE = re.compile(r"\|?\s*:?-{3,}:?\s*\|")
_ENDS_SENTENCE = re.compile(r"[.!?;:)\]\"'”»|]$")  # a table row ends with its "|": rows stand alone


def _reading(found: list[str], i: int) -> polarity.Reading:
    """Sentence `i` of a chunk as the polarity check reads it: a denial ("This is no longer the
    case since ...") by the words after its denying phrase, any other sentence completed where
    it is a wrapped line and marked denied where the sentence after it is a denial (denials.py)."""
    after = denials.remainder(found[i])
    if after is not None:
        return polarity.Reading(after)
    start, end = _completed(found, i)
    denied = end + 1 < len(found) and denials.remainder(found[end + 1]) is not None
    return polarity.Reading(" ".join(found[start:end + 1]), denied)


def _completed(found: list[str], i: int) -> tuple[int, int]:
    """The first and last line of the sentence line `i` of a chunk belongs to (at most two either
    side): in a PDF's wrapped text a "sentence" here is a line, and the negation of the sentence a
    claim restates may sit on the next one ("... 지급하고, 다른 보험사는" / "불인정하여 ... 지급하지
    않는 등 ..."). A line that ends a sentence after one that does stays alone."""
    start = i
    while start > 0 and i - start < 2 and not _ENDS_SENTENCE.search(found[start - 1]):
        start -= 1
    end = i
    while end + 1 < len(found) and end - i < 2 and not _ENDS_SENTENCE.search(found[end]):
        end += 1
    return start, end


def _crosslingual_candidates(claim: str, found: list[str]) -> list[int]:
    claim_values = figures.values(figures.prepare(claim))
    values = [figures.values(figures.prepare(s)) for s in found]
    stating = [i for i, v in enumerate(values) if claim_values and claim_values <= v]
    terms = fields.terms(claim)
    pool = stating or range(len(found))
    shared = sorted(((len(terms & fields.terms(found[i])), -i) for i in pool), reverse=True)
    return [-i for _, i in shared[:CROSS_CANDIDATES]]


def monolingual_evidence(conn: psycopg.Connection, embedder: Embedder, pairs: Sequence[tuple[str, int, dict]]) -> Iterator[Scored]:
    """The three signals for each (claim text, chunk id, chunk row with `text` and `embedding`):
    one model call for every distinct claim and the candidate sentences of every distinct chunk
    (each encoded once however many claims cite it), one SQL statement for the term coverages.

    A claim is compared with the CANDIDATES sentences of its chunk that share the most content
    words with it, not with every sentence: the sentence a claim restates shares its words, and
    encoding the rest would cost a model pass per sentence for nothing (a chunk holds 5 to 60)."""
    if not pairs:
        return iter(())
    split = {cid: sentences(chunk["text"]) for _, cid, chunk in pairs}
    words = {cid: [fields.terms(s) for s in found] for cid, found in split.items()}
    numbers = {cid: [figures.values(figures.prepare(s)) for s in found] for cid, found in split.items()}
    claim_terms = {claim: fields.terms(claim) for claim, _, _ in pairs}
    chosen = [_candidates(claim_terms[claim], words[cid], figures.values(figures.prepare(claim)), numbers[cid])
              for claim, cid, _ in pairs]
    needed = sorted({(cid, i) for (_, cid, _), found in zip(pairs, chosen) for i in found})
    claims = sorted(claim_terms)
    texts = [fields.canonical(c) for c in claims] + [fields.canonical(split[cid][i]) for cid, i in needed]
    distinct = list(dict.fromkeys(texts))  # a claim that restates a sentence word for word is encoded once
    by_text = dict(zip(distinct, embedder.encode(distinct)))
    claim_vector = {claim: by_text[text] for claim, text in zip(claims, texts)}
    sentence_vector = {key: by_text[text] for key, text in zip(needed, texts[len(claims):])}
    # term coverage of the claim's words, its figures left out (module docstring)
    coverage = store.answers.term_coverage(conn, [(cid, figures.without_figures(claim)) for claim, cid, _ in pairs])
    scored = []
    for (claim, cid, chunk), found, cov in zip(pairs, chosen, coverage):
        vector = claim_vector[claim]
        # the chunk's vector of the search's model; a chunk without one (an old version a model
        # migration did not re-embed) is compared through its sentences only
        similarity = -1.0 if chunk["embedding"] is None else _cosine(vector, np.asarray(chunk["embedding"], dtype=np.float32))
        ranked = sorted(found, key=lambda i: -float(sentence_vector[(cid, i)] @ vector))
        if ranked:
            similarity = max(similarity, float(sentence_vector[(cid, ranked[0])] @ vector))
        best = [split[cid][i] for i in ranked[:2]]
        scored.append(Scored(similarity, cov, _flag(claim, split[cid], ranked, chunk, words[cid]), best[0] if best else ""))
    return iter(scored)


def _candidates(claim_terms: set[str], sentence_terms: list[set[str]], claim_values: set[str],
                sentence_values: list[set[str]]) -> list[int]:
    """The indices of the CANDIDATES sentences sharing the most content words with the claim
    (at least one), the earlier first among equals; when some sentences hold every figure of the
    claim, only those: the claim restates the sentence that states its figures ("Berlin ... EUR
    140" restates the table row "| Berlin | 140 |", not the prose sentence on unlisted cities
    that shares more words and says "not")."""
    stating = [i for i, found in enumerate(sentence_values) if claim_values and claim_values <= found]
    shared = [(len(claim_terms & sentence_terms[i]), -i) for i in (stating or range(len(sentence_terms)))]
    return [-i for count, i in sorted(shared, reverse=True)[:CANDIDATES] if count]


def _cosine(a: np.ndarray, b: np.ndarray) -> float:
    norm = float(np.linalg.norm(a) * np.linalg.norm(b))
    return float(np.dot(a, b) / norm) if norm else 0.0


def calibrate(ok: Sequence[Evidence], unsupported: Sequence[Evidence]) -> Calibration:
    """The weights and threshold (module docstring). Deterministic for the same evidence."""
    if not ok or not unsupported:
        raise ValueError("calibration needs citations that support their claim and citations that do not")
    fitted = []
    for polarity_weight in POLARITY_WEIGHTS:
        passing, failing = _lowered(ok, polarity_weight), _lowered(unsupported, polarity_weight)
        for weight in refusal.COVERAGE_WEIGHTS:
            scores = [refusal.score(e, weight) for e in passing], [refusal.score(e, weight) for e in failing]
            threshold = refusal.threshold_between(*scores)
            right = sum(refusal.accuracies(*scores, threshold)) / 2
            fitted.append((refusal.auc(*scores), right, polarity_weight, -weight, threshold))
    best = max(ranking for ranking, *_ in fitted)
    _, _, polarity_weight, weight, threshold = max((f for f in fitted if f[0] >= best - refusal.AUC_TOLERANCE),
                                                   key=lambda f: f[1:4])
    return Calibration(threshold, -weight, polarity_weight)


def calibrate_crosslingual(ok: Sequence[Evidence], unsupported: Sequence[Evidence],
                           calibration: Calibration) -> Calibration:
    """`calibration` with the cross-lingual threshold fitted: the balanced-accuracy threshold
    (refusal.threshold_between) of the cross-lingual scores under its polarity weight; unchanged
    (the built-in DEFAULT_CROSSLINGUAL applies) without labelled cross-lingual citations of both
    kinds. Deterministic for the same evidence."""
    if not ok or not unsupported:
        return calibration
    scores = [[score(e, calibration, crosslingual=True) for e in found] for found in (ok, unsupported)]
    return replace(calibration, crosslingual_threshold=refusal.threshold_between(*scores))


def _lowered(found: Sequence[Evidence], weight: float) -> list[refusal.Evidence]:
    return [(similarity - weight * flag, coverage) for similarity, coverage, flag in found]


def held_out_accuracies(ok: Sequence[Evidence], unsupported: Sequence[Evidence],
                        calibration: Calibration, crosslingual: bool = False) -> tuple[float, float]:
    """(share of supporting citations passed, share of non-supporting ones flagged)."""
    return refusal.accuracies([score(e, calibration, crosslingual) for e in ok],
                              [score(e, calibration, crosslingual) for e in unsupported], bar(calibration, crosslingual))


def threshold_for(conn: psycopg.Connection, model_id: int | None) -> tuple[Threshold, int | None]:
    """The newest support calibration of the model and its id, else DEFAULT (and None); one
    fitted before the polarity flag is not applied (module docstring)."""
    found = store.answers.latest_support_calibration(conn, model_id) if model_id is not None else None
    if found is None:
        return DEFAULT, None
    if found.get("polarity_weight") is None:
        return Threshold(DEFAULT.value, f"built-in default: the stored calibration of {found['calibrated_at']:%Y-%m-%d %H:%M} "
                         "fitted the score before its polarity flag (rerun rag-pipeline calibrate-support)",
                         DEFAULT.coverage_weight, DEFAULT.polarity_weight), None
    source = f"calibrated {found['calibrated_at']:%Y-%m-%d %H:%M} from {found['eval_set']}"
    crossed = found.get("crosslingual_threshold")
    return Threshold(float(found["threshold"]), source, coverage_weight=float(found["coverage_weight"]),
                     polarity_weight=float(found["polarity_weight"]),
                     crosslingual_value=DEFAULT_CROSSLINGUAL if crossed is None else float(crossed)), int(found["id"])

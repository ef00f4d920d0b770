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
  (polarity.py), else 0.

score = similarity + coverage_weight x coverage - polarity_weight x polarity. The weights and the
threshold are not guessed: `calibrate` takes the labelled citations of answer cases (those that
support their claim and those that do not, among the ones that reach the score) and fits them as
refusal is fitted (`refusal.calibrate`: the coverage weight by ROC area, the threshold by
balanced accuracy), for each polarity weight of POLARITY_WEIGHTS; the largest polarity weight
that ranks within AUC_TOLERANCE of the best wins (the flag is evidence against support: it
counts fully unless the labelled citations show it misleads). The calibration split of the set
only. The triple is stored with the index per model (support_calibrations) and recorded with
every verification; until one is stored, DEFAULT applies. A calibration stored before the
polarity flag (migration 021) fitted another score and is not applied.

Cross-lingual claims (an English claim on a Czech, German or French passage) stay low on both
similarity and coverage with the packaged English model: the multilingual model is another
issue's work.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import psycopg

from rag_pipeline import store
from rag_pipeline.answers import fields, figures, polarity
from rag_pipeline.embedding import Embedder
from rag_pipeline.retrieval import refusal

POLARITY_WEIGHTS = tuple(i / 10 for i in range(11))  # 0 (flag ignored) .. 1 (one unit of similarity)
MAX_SENTENCES = 64  # sentences of one chunk compared with a claim (a chunk is a few hundred words)
MAX_SENTENCE_CHARS = 1000
CANDIDATES = 3  # sentences of a chunk encoded and compared per claim (`evidence`)
_SENTENCE_END = re.compile(r"(?<=[.!?;:])\s+(?=\S)|\s*\n\s*")

Evidence = tuple[float, float, float]  # (similarity, term coverage, polarity flag 0/1)


@dataclass(frozen=True)
class Threshold:
    value: float
    source: str  # where it came from, said in words to the user
    coverage_weight: float = 0.0
    polarity_weight: float = 0.0


@dataclass(frozen=True)
class Calibration:
    threshold: float
    coverage_weight: float
    polarity_weight: float


# Before any calibration: on the demo corpus, a claim paraphrasing its passage scores 0.85-1.3 at
# this coverage weight, one citing a passage on another subject of the same document 0.2-0.6.
DEFAULT = Threshold(0.7, "built-in default; not calibrated yet (rag-pipeline calibrate-support)",
                    coverage_weight=0.5, polarity_weight=0.5)


def score(found: Evidence, threshold: Threshold | Calibration) -> float:
    similarity, coverage, flag = found
    return similarity + threshold.coverage_weight * coverage - threshold.polarity_weight * flag


def sentences(text: str) -> list[str]:
    """A chunk's sentences (and lines: a list item, a table row, a slide line), at most
    MAX_SENTENCES of at most MAX_SENTENCE_CHARS, fragments of fewer than three words left out
    unless the chunk has nothing longer."""
    parts = [p.strip()[:MAX_SENTENCE_CHARS] for p in _SENTENCE_END.split(text) if p.strip()]
    longer = [p for p in parts if len(p.split()) >= 3]
    return (longer or parts or [text[:MAX_SENTENCE_CHARS]])[:MAX_SENTENCES]


@dataclass
class Scored:
    similarity: float
    coverage: float
    flag: float
    sentence: str  # the chunk's sentence that matches the claim best

    @property
    def evidence(self) -> Evidence:
        return (self.similarity, self.coverage, self.flag)


def evidence(conn: psycopg.Connection, embedder: Embedder, pairs: Sequence[tuple[str, int, dict]]) -> list[Scored]:
    """The three signals for each (claim text, chunk id, chunk row with `text` and `embedding`):
    one model call for every distinct claim and the candidate sentences of every distinct chunk
    (each encoded once however many claims cite it), one SQL statement for the term coverages.

    A claim is compared with the CANDIDATES sentences of its chunk that share the most content
    words with it, not with every sentence: the sentence a claim restates shares its words, and
    encoding the rest would cost a model pass per sentence for nothing (a chunk holds 5 to 60)."""
    if not pairs:
        return []
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
    coverage = store.answers.term_coverage(conn, [(cid, _words(claim)) for claim, cid, _ in pairs])
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
        scored.append(Scored(similarity, cov, float(polarity.mismatch(claim, best)), best[0] if best else ""))
    return scored


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


def _words(claim: str) -> str:
    """The claim without its figures, for term coverage (module docstring)."""
    return re.sub(r"\S*\d\S*", " ", claim)


def calibrate(ok: Sequence[Evidence], unsupported: Sequence[Evidence]) -> Calibration:
    """The weights and threshold (module docstring). Deterministic for the same evidence."""
    if not ok or not unsupported:
        raise ValueError("calibration needs citations that support their claim and citations that do not")
    fitted = []
    for weight in POLARITY_WEIGHTS:
        found = refusal.calibrate(_lowered(ok, weight), _lowered(unsupported, weight))
        ranking = refusal.auc([refusal.score(e, found.coverage_weight) for e in _lowered(ok, weight)],
                              [refusal.score(e, found.coverage_weight) for e in _lowered(unsupported, weight)])
        fitted.append((ranking, weight, found))
    best = max(ranking for ranking, _, _ in fitted)
    _, weight, found = max((f for f in fitted if f[0] >= best - refusal.AUC_TOLERANCE), key=lambda f: f[1])
    return Calibration(found.threshold, found.coverage_weight, weight)


def _lowered(found: Sequence[Evidence], weight: float) -> list[refusal.Evidence]:
    return [(similarity - weight * flag, coverage) for similarity, coverage, flag in found]


def held_out_accuracies(ok: Sequence[Evidence], unsupported: Sequence[Evidence],
                        calibration: Calibration) -> tuple[float, float]:
    """(share of supporting citations passed, share of non-supporting ones flagged)."""
    return refusal.accuracies([score(e, calibration) for e in ok], [score(e, calibration) for e in unsupported],
                              calibration.threshold)


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
    return Threshold(float(found["threshold"]), source, coverage_weight=float(found["coverage_weight"]),
                     polarity_weight=float(found["polarity_weight"])), int(found["id"])

"""The support score: does a cited passage say what the claim says, once its exact fields are
all there?

It is the refusal score's two signals, turned from question-vs-passage to claim-vs-passage: the
cosine similarity of the claim's embedding to the chunk's stored embedding (the same model the
index was built with), plus a weight times the claim's term coverage (the share of its lexemes
the chunk holds, under the chunk's own text-search configuration). Similarity alone passes a
passage on the same topic that states something else; coverage sees the claim's words that the
passage lacks (a different person, a different condition).

The weight and threshold are not guessed: `calibrate` takes the labelled citations of answer
cases (those that support their claim and those that do not, among the ones whose exact fields
all pass, since only those reach the score) and fits them exactly as refusal is fitted
(`refusal.calibrate`: the weight by ROC area, the threshold by balanced accuracy), on the
calibration split of the set. The pair is stored with the index per model (support_calibrations)
and recorded with every verification; until one is stored, DEFAULT applies.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import psycopg

from rag_pipeline import store
from rag_pipeline.retrieval.refusal import Calibration, Evidence, Threshold, calibrate, held_out_accuracies, score

# Before any calibration: on the demo corpus, a claim paraphrasing its passage scores 0.85-1.3 at
# this weight, one citing a passage on another subject of the same document 0.2-0.6.
DEFAULT = Threshold(0.7, "built-in default; not calibrated yet (rag-pipeline calibrate-support)", coverage_weight=0.5)

__all__ = ["DEFAULT", "Calibration", "Evidence", "Threshold", "calibrate", "held_out_accuracies", "score",
           "similarities", "threshold_for"]


def similarities(claim_vectors: np.ndarray, chunk_vectors: Sequence[np.ndarray]) -> list[float]:
    """Cosine similarity of each claim vector to its chunk's vector (pairwise, same order)."""
    found = []
    for claim, chunk in zip(claim_vectors, chunk_vectors):
        norm = float(np.linalg.norm(claim) * np.linalg.norm(chunk))
        found.append(float(np.dot(claim, chunk) / norm) if norm else 0.0)
    return found


def threshold_for(conn: psycopg.Connection, model_id: int | None) -> tuple[Threshold, int | None]:
    """The newest support calibration of the model and its id, else DEFAULT (and None)."""
    found = store.answers.latest_support_calibration(conn, model_id) if model_id is not None else None
    if found is None:
        return DEFAULT, None
    source = f"calibrated {found['calibrated_at']:%Y-%m-%d %H:%M} from {found['eval_set']}"
    return Threshold(float(found["threshold"]), source, coverage_weight=float(found["coverage_weight"])), int(found["id"])

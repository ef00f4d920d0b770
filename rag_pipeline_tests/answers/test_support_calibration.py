"""The support score's fit (answers/support.py `calibrate`) when few non-supporting citations reach
the score: the rules decide most of them first, so many weights rank the rest alike, and the
smallest of those had left correct claims under the threshold that another weight passes."""

from __future__ import annotations

import json
from pathlib import Path

from rag_pipeline.answers.support import calibrate, score
from rag_pipeline.retrieval import refusal

# (similarity, term coverage, polarity flag): the calibration half of evalsets/answers as it
# reached the score on 2026-12-06 (66 supporting, 6 not), two supporting citations written
# with few of the passage's words (low similarity, high coverage)
DATA = Path(__file__).parent / "data" / "support_evidence_2026-12-06.json"


def _right(ok: list, unsupported: list) -> tuple[float, float]:
    fitted = calibrate(ok, unsupported)
    passing = [score(e, fitted) for e in ok]
    failing = [score(e, fitted) for e in unsupported]
    return refusal.accuracies(passing, failing, fitted.threshold)


def test_the_fit_separates_every_calibration_citation_where_a_weight_can() -> None:
    evidence = json.loads(DATA.read_text())
    ok = [tuple(e) for e in evidence["ok"]]
    unsupported = [tuple(e) for e in evidence["unsupported"]]
    fitted = calibrate(ok, unsupported)
    assert _right(ok, unsupported) == (1.0, 1.0)
    assert fitted.polarity_weight == 1.0 and 0 < fitted.coverage_weight <= 1.2
    # the same evidence in another order fits the same
    assert calibrate(ok[::-1], unsupported[::-1]) == fitted


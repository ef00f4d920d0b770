"""Refusal that works both ways: a threshold calibrated from must-answer and must-refuse
questions, stored with the index, used by search and the gate, and reported separately for
questions that must be refused and questions that must be answered."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from rag_pipeline.retrieval import refusal
from rag_pipeline.retrieval.search import Hit
from rag_pipeline_tests.conftest import write_config
from rag_pipeline_tests.helpers import index_documents, query, run_cli

GROUP = "staff"
DOCS = {
    "travel.md": ("Travel policy", "Business trips abroad must be approved by the head of department before "
                  "any booking is made. Economy class is the rule for flights under six hours."),
    "forms.md": ("Expense forms", "Expense claims use form EXP-2231. Submit it within 30 days of returning from the trip."),
    "canteen.md": ("Canteen", "The canteen on the ground floor opens at noon and serves a vegetarian dish every day."),
    "laptops.md": ("Laptops", "Every employee receives a laptop on the first day. Lost laptops must be reported "
                   "to the IT service desk within 24 hours."),
    "parking.md": ("Parking", "Staff parking is in the underground garage; visitors park on level minus one."),
}
ANSWER = [
    ("who approves trips abroad", "Who must approve a business trip abroad?"),
    ("expense form", "Which form do I use for expense claims?"),
    ("claim deadline", "How many days do I have to submit an expense claim?"),
    ("canteen hours", "When does the canteen open?"),
    ("vegetarian", "Is there a vegetarian meal in the canteen?"),
    ("lost laptop", "What do I do if I lose my laptop?"),
    ("laptop first day", "When do new employees get a laptop?"),
    ("visitor parking", "Where can visitors park?"),
    ("flight class", "Which class may I fly on short flights?"),
    ("garage", "Where is staff parking?"),
]
REFUSE = [
    ("mercury", "What is the boiling point of mercury in kelvin?"),
    ("world cup", "Which country won the 1998 football world cup?"),
    ("photosynthesis", "How does photosynthesis convert light into chemical energy?"),
    ("volcano", "When did Mount Vesuvius erupt and destroy Pompeii?"),
    ("sonnet", "Who wrote the sonnet beginning 'Shall I compare thee to a summer's day'?"),
    ("black holes", "What is the Schwarzschild radius of a black hole?"),
    ("sourdough", "How long should sourdough bread proof overnight?"),
    ("chess", "What is the best reply to the Sicilian Defence in chess?"),
    ("tides", "Why does the moon cause ocean tides?"),
    ("rome", "Who was the first emperor of Rome?"),
]


def test_calibration_picks_the_threshold_that_separates_answerable_from_unanswerable() -> None:
    threshold = refusal.threshold_between([0.62, 0.55, 0.71, 0.48], [0.20, 0.31, 0.12])
    assert 0.31 < threshold < 0.48  # both sides right: answered all, refused all
    assert threshold == pytest.approx((0.31 + 0.48) / 2)  # the widest margin's midpoint
    assert refusal.accuracies([0.62, 0.55, 0.71, 0.48], [0.20, 0.31, 0.12], threshold) == (1.0, 1.0)


def test_calibration_cannot_win_by_never_refusing() -> None:
    # 9 answerable, 1 unanswerable, overlapping: plain accuracy would put the threshold under
    # everything (90%); balanced accuracy must still refuse the unanswerable one if it can
    threshold = refusal.threshold_between([0.5, 0.6, 0.7, 0.8, 0.55, 0.65, 0.75, 0.85, 0.9], [0.45])
    assert refusal.accuracies([0.5], [0.45], threshold) == (1.0, 1.0)


def test_calibration_is_deterministic_and_needs_both_kinds() -> None:
    evidence = ([(0.4, 0.2), (0.5, 0.1), (0.3, 0.9)], [(0.35, 0.1), (0.2, 0.0)])
    assert len({refusal.calibrate(*evidence) for _ in range(5)}) == 1
    with pytest.raises(ValueError, match="must-refuse"):
        refusal.calibrate([(0.5, 0.5)], [])


def test_coverage_counts_where_similarity_cannot_tell_near_misses_from_answers() -> None:
    # on-topic near misses: as similar to the question as the answers, but missing its terms
    answer = [(0.62, 0.8), (0.55, 0.7), (0.70, 0.6), (0.58, 0.9)]
    refuse = [(0.66, 0.2), (0.60, 0.3), (0.57, 0.1)]
    fitted = refusal.calibrate(answer, refuse)
    assert fitted.coverage_weight > 0
    assert refusal.held_out_accuracies(answer, refuse, fitted) == (1.0, 1.0)
    similarity_only = refusal.calibrate(answer, refuse, weights=(0.0,))
    assert sum(refusal.held_out_accuracies(answer, refuse, similarity_only)) < 2.0


def test_similarity_alone_is_kept_when_it_separates_and_no_result_is_always_refused() -> None:
    # paraphrased questions share few words with their answers; off-topic ones match stray words
    answer = [(0.60, 0.1), (0.55, 0.2), (0.70, 0.0)]
    refuse = [(0.20, 0.6), (0.10, 0.5), None]
    fitted = refusal.calibrate(answer, refuse)
    assert fitted.coverage_weight == 0.0 and 0.2 < fitted.threshold < 0.55
    assert refusal.held_out_accuracies(answer, refuse, fitted) == (1.0, 1.0)


def _hit(similarity: float, coverage: float) -> Hit:
    return Hit(chunk_id=1, source="s", uri="a.md", version_no=1, version_id=1, section_path=[], page_start=None,
               page_end=None, char_start=0, char_end=1, score=0.1, similarity=similarity, text="t", acl_groups=["g"],
               status="live", features={"term_coverage": coverage})


def test_decision_says_why_it_refused_with_both_parts_of_the_score() -> None:
    threshold = refusal.Threshold(0.72, "calibrated", coverage_weight=1.0)
    decision = refusal.decide([_hit(0.3, 0.25), _hit(0.9, 1.0)], threshold)
    assert decision.refused and decision.score == pytest.approx(0.55)  # the first result decides, not the best
    for part in ("0.550", "similarity 0.300", "1 x term coverage 0.250", "0.720", "calibrated"):
        assert part in decision.reason
    assert decision.to_dict()["coverage_weight"] == 1.0 and decision.to_dict()["term_coverage"] == 0.25
    assert not refusal.decide([_hit(0.5, 0.3)], threshold).refused
    assert refusal.decide([_hit(0.5, 0.3)], refusal.Threshold(0.72, "config")).refused  # similarity alone
    assert refusal.decide([], refusal.Threshold(0.42, "x")).refused


def _eval_set(path: Path) -> Path:
    cases = [{"id": cid, "question": q, "as_user": {"groups": [GROUP]}, "expect_source": ""} for cid, q in ANSWER]
    source = {"who approves trips abroad": "travel.md", "expense form": "forms.md", "claim deadline": "forms.md",
              "canteen hours": "canteen.md", "vegetarian": "canteen.md", "lost laptop": "laptops.md",
              "laptop first day": "laptops.md", "visitor parking": "parking.md", "flight class": "travel.md",
              "garage": "parking.md"}
    for case in cases:
        case["expect_source"] = source[case["id"]]
    cases += [{"id": cid, "question": q, "as_user": {"groups": [GROUP]}, "expect": "refused"} for cid, q in REFUSE]
    path.write_text(yaml.safe_dump(cases), encoding="utf-8")
    return path


def test_calibrated_threshold_is_stored_with_the_index_and_used_by_search_and_eval(
        capsys, db_url: str, embedder, tmp_path: Path) -> None:
    ids = [cid for cid, _ in ANSWER + REFUSE]
    calib = {cid for cid in ids if refusal.in_calibration_split(cid)}
    assert {c for c, _ in ANSWER} & calib and {c for c, _ in REFUSE} & calib  # both kinds in each half
    assert {c for c, _ in ANSWER} - calib and {c for c, _ in REFUSE} - calib
    index_documents(db_url, embedder, DOCS, GROUP)
    (tmp_path / "docs").mkdir()
    eval_set = _eval_set(tmp_path / "eval.yaml")
    config = write_config(tmp_path, db_url, docs=tmp_path / "docs", eval_set=eval_set, thresholds={"acl_leaks": 0})

    code, calibrated = run_cli(capsys, "calibrate-refusal", str(eval_set), "--config", str(config))
    assert code == 0, calibrated
    stored = query(db_url, "SELECT threshold, coverage_weight FROM refusal_calibrations")
    assert len(stored) == 1 and stored[0][0] == pytest.approx(calibrated["threshold"], abs=1e-4)
    assert stored[0][1] == calibrated["coverage_weight"]
    held = calibrated["held_out_refusal_accuracy"]
    assert held["must_refuse"] >= 0.6 and held["must_answer"] >= 0.6

    code, after = run_cli(capsys, "eval", str(eval_set), "--config", str(config))
    assert after["metrics"]["refusal_accuracy_must_refuse"] >= 0.6
    assert after["metrics"]["refusal_accuracy_must_answer"] >= 0.6

    code, refused = run_cli(capsys, "search", "Who was the first emperor of Rome?", "--groups", GROUP, "--config", str(config))
    assert refused["refused"] is True
    assert refused["refusal"]["threshold"] == pytest.approx(calibrated["threshold"], abs=1e-4)
    assert refused["refusal"]["coverage_weight"] == calibrated["coverage_weight"]
    assert "calibrated" in refused["refusal"]["threshold_source"] and "under" in refused["refusal"]["reason"]
    code, answered = run_cli(capsys, "search", "Who must approve a business trip abroad?", "--groups", GROUP, "--config", str(config))
    assert answered["refused"] is False and answered["results"][0]["uri"] == "travel.md"


def test_calibration_without_must_refuse_cases_is_a_usage_error(capsys, db_url: str, embedder, tmp_path: Path) -> None:
    index_documents(db_url, embedder, DOCS, GROUP)
    (tmp_path / "docs").mkdir()
    cases = [{"id": cid, "question": q, "as_user": {"groups": [GROUP]}, "expect_source": "travel.md"} for cid, q in ANSWER]
    eval_set = tmp_path / "answer-only.yaml"
    eval_set.write_text(yaml.safe_dump(cases), encoding="utf-8")
    config = write_config(tmp_path, db_url, docs=tmp_path / "docs")
    code, error = run_cli(capsys, "calibrate-refusal", str(eval_set), "--config", str(config))
    assert code == 2
    assert query(db_url, "SELECT count(*) FROM refusal_calibrations")[0][0] == 0


@pytest.mark.parametrize("question", ["🙂🙂🙂", "!!! ||| &&& :* <-> ()", "???", "\u200b\u200b", "— … —"])
def test_a_query_without_a_letter_or_digit_finds_nothing_and_is_refused(
        capsys, db_url: str, embedder, tmp_path: Path, question: str) -> None:
    """Such a query has no full-text term and only unknown word pieces for the model: before, it
    returned the chunks nearest to the model's vector for "[UNK]", above the default threshold."""
    index_documents(db_url, embedder, DOCS, GROUP)
    (tmp_path / "docs").mkdir()
    config = write_config(tmp_path, db_url, docs=tmp_path / "docs")
    code, out = run_cli(capsys, "search", question, "--groups", GROUP, "--config", str(config))
    assert code == 0 and out["refused"] is True and out["results"] == [], out
    assert out["refusal"]["reason"] == "no visible chunk matched the query" and out["log_id"]
    code, out = run_cli(capsys, "search", "C++ 🙂", "--groups", GROUP, "--config", str(config))
    assert code == 0 and out["results"], out  # one letter is enough to search

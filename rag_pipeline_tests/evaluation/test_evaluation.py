"""The gate's evaluation: the set's format is validated with clear errors, and the metrics that
guard publishing (ACL leaks, superseded hits, recall, refusals) count what they claim to."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from conftest import PROJECT_ROOT

from rag_pipeline.evaluation.evaluate import (
    EvalCase,
    EvalSetError,
    _aggregate,
    _check,
    in_calibration_split,
    load_eval_set,
    score_case,
)
from rag_pipeline.retrieval.refusal import Threshold
from rag_pipeline.retrieval.search import Hit

AT = Threshold(0.35, "test")  # similarity alone, as before any calibration
WEIGHTED = Threshold(1.0, "test", coverage_weight=1.0)


def _hit(uri: str = "travel.pdf", groups: tuple[str, ...] = ("all-staff",), text: str = "approved by the head of department",
         section: tuple[str, ...] = ("Travel", "2 Approval"), similarity: float = 0.6, chunk_id: int = 1,
         coverage: float = 0.0) -> Hit:
    return Hit(chunk_id=chunk_id, source="s", uri=uri, version_no=1, version_id=1, section_path=list(section),
               page_start=1, page_end=1, char_start=0, char_end=10, score=0.01, similarity=similarity, text=text,
               acl_groups=list(groups), status="live", features={"term_coverage": coverage})


CASE = EvalCase(id="c", question="q", groups=("all-staff",), expect_source="travel.pdf",
                expect_section="2 Approval", expect_evidence=("head of department",))


def test_evidence_needs_the_text_in_a_chunk_of_the_expected_document() -> None:
    right = score_case(CASE, [_hit(uri="other.md", chunk_id=2), _hit()], AT, set())
    assert right.source_hit and right.evidence_hit and right.first_relevant_rank == 2
    wrong_doc = score_case(CASE, [_hit(uri="other.md")], AT, set())
    assert wrong_doc.evidence_hit is False and wrong_doc.first_relevant_rank is None
    wrong_section = score_case(CASE, [_hit(section=("Travel", "3 Rates"))], AT, set())
    assert wrong_section.source_hit and wrong_section.first_relevant_rank is None


def test_acl_leaks_are_counted_from_the_returned_rows() -> None:
    result = score_case(CASE, [_hit(groups=("hr",)), _hit(groups=("hr", "all-staff"), chunk_id=2)], AT, set())
    assert result.acl_leaks == 1


def test_superseded_hits_are_counted() -> None:
    result = score_case(CASE, [_hit(chunk_id=7), _hit(chunk_id=8)], AT, {8})
    assert result.superseded_hits == 1


def test_refusal_is_judged_by_the_first_results_similarity_plus_term_coverage() -> None:
    refused_case = EvalCase(id="r", question="pets?", groups=("all-staff",), expect_refused=True)
    assert score_case(refused_case, [_hit(similarity=0.2)], AT, set()).correct_refusal
    assert not score_case(refused_case, [_hit(similarity=0.5)], AT, set()).correct_refusal
    assert score_case(refused_case, [], AT, set()).correct_refusal
    assert not score_case(CASE, [_hit(similarity=0.1)], AT, set()).correct_refusal
    # a passage holding the question's terms answers although its similarity alone is low ...
    assert not score_case(CASE, [_hit(similarity=0.55, coverage=0.6)], WEIGHTED, set()).refused
    # ... one without them is refused at the same similarity, and only the first result counts
    assert score_case(refused_case, [_hit(similarity=0.55, coverage=0.1), _hit(similarity=0.3, coverage=0.9, chunk_id=2)],
                      WEIGHTED, set()).refused


def test_thresholds_bound_leaks_from_above_and_recall_from_below() -> None:
    results = [score_case(CASE, [_hit(groups=("hr",))], AT, set()), score_case(CASE, [_hit()], AT, set())]
    metrics = _aggregate(results)
    assert metrics["acl_leaks"] == 1 and metrics["evidence_recall"] == 1.0 and metrics["mrr"] == 1.0
    failures = _check(metrics, {"acl_leaks": 0, "evidence_recall": 0.8, "ndcg": 1.0})
    assert failures == ["acl_leaks = 1 exceeds 0"]
    assert "unknown metric 'recal'" in _check(metrics, {"recal": 0.5})[0]


@pytest.mark.parametrize(
    "content, words",
    [
        ("id: x\nquestion: q\n", "non-empty list"),
        ("[]", "non-empty list"),
        ("- id: a\n  question: q\n  expect_source: x.pdf\n", "as_user"),
        ("- id: a\n  as_user: {groups: [g]}\n  expect_source: x.pdf\n", "'question'"),
        ("- id: a\n  question: q\n  as_user: {groups: [g]}\n", "expect_source and/or expect_evidence"),
        ("- id: a\n  question: q\n  as_user: {groups: [g]}\n  expect: maybe\n", "'expect' may only be 'refused'"),
        ("- id: a\n  question: q\n  as_user: {groups: [g]}\n  expect: refused\n  as_of: last tuesday\n", "ISO 8601"),
        ("- {id: a, question: q, as_user: {groups: [g]}, expect: refused}\n" * 2, "duplicate case ids"),
        ("- [unclosed\n", "not valid YAML"),
        ("- {id: a, question: q, as_user: {groups: [g]}, expect: refused, split: test}\n", "'split' must be one of"),
        ("- {id: a, question: q, as_user: {groups: [g]}, expect_source: [x.pdf]}\n", "'expect_source' must be"),
        ("- {id: a, question: q, as_user: {groups: [g]}, expect_evidence: {a: b}}\n", "'expect_evidence' must be"),
        ("- {id: a, question: q, as_user: {groups: [g]}, expect_evidence: [ok, 5]}\n", "'expect_evidence' must be"),
        ("- {id: a, question: q, as_user: {groups: [g]}, expect: refused, as_of: 5}\n", "'as_of' must be"),
        ("- {id: " + "9" * 5_000 + ", question: q, as_user: {groups: [g]}, expect: refused}\n", "not valid YAML"),
        ("- {id: a, question: q, as_user: {groups: [g]}, expect: refused, as_of: 2026-02-30}\n", "not valid YAML"),
    ],
)
def test_malformed_eval_sets_name_the_file_and_case(tmp_path: Path, content: str, words: str) -> None:
    path = tmp_path / "eval.yaml"
    path.write_text(content)
    with pytest.raises(EvalSetError) as info:
        load_eval_set(path)
    assert words in str(info.value) and str(path) in str(info.value)


def test_missing_and_binary_eval_sets_are_clear_errors(tmp_path: Path) -> None:
    with pytest.raises(EvalSetError, match="not found"):
        load_eval_set(tmp_path / "none.yaml")
    binary = tmp_path / "bin.yaml"
    binary.write_bytes(b"\xff\xfe\x00garbage")
    with pytest.raises(EvalSetError, match="not valid YAML"):
        load_eval_set(binary)


def test_a_large_eval_set_loads(tmp_path: Path) -> None:
    path = tmp_path / "big.yaml"
    path.write_text("".join(f"- {{id: c{i}, question: 'question {i}?', as_user: {{groups: [g]}}, expect: refused}}\n"
                            for i in range(20_000)))
    cases = load_eval_set(path)
    assert len(cases) == 20_000 and cases[-1].id == "c19999"


def test_the_demo_eval_set_is_valid() -> None:
    from conftest import DEMO_DIR

    cases = load_eval_set(DEMO_DIR / "eval.yaml")
    assert any(c.expect_refused for c in cases) and any(c.expect_evidence for c in cases)


def test_a_split_key_puts_a_case_in_its_half_and_cases_without_one_are_split_by_id(tmp_path: Path) -> None:
    path = tmp_path / "eval.yaml"
    path.write_text("- {id: a, question: q, as_user: {groups: [g]}, expect: refused, split: calibration}\n"
                    "- {id: b, question: q, as_user: {groups: [g]}, expect: refused, split: report}\n"
                    + "".join(f"- {{id: h{i}, question: q, as_user: {{groups: [g]}}, expect: refused}}\n" for i in range(40)))
    cases = {c.id: c for c in load_eval_set(path)}
    assert in_calibration_split(cases["a"]) and not in_calibration_split(cases["b"])
    hashed = [in_calibration_split(cases[f"h{i}"]) for i in range(40)]
    assert 0 < sum(hashed) < 40  # both halves get cases, the same ones every time
    assert hashed == [in_calibration_split(c) for c in load_eval_set(path)[2:]]


def test_relevance_for_ndcg_is_the_chunk_holding_the_evidence_not_any_chunk_of_the_file() -> None:
    other_chunk = _hit(text="the travel policy applies to all staff", chunk_id=1)
    answer = _hit(text="trips are approved by the head of department", chunk_id=2)
    result = score_case(CASE, [other_chunk, answer], AT, set())
    assert result.first_relevant_rank == 2 and result.evidence_hit
    assert score_case(CASE, [other_chunk], AT, set()).first_relevant_rank is None


def test_the_corpus_eval_set_is_valid_with_both_splits_and_enough_refusals() -> None:
    cases = load_eval_set(PROJECT_ROOT / "evalsets" / "corpus" / "eval.yaml")
    assert len(cases) >= 150 and all(c.split in ("calibration", "report") for c in cases)
    for split in ("calibration", "report"):
        half = [c for c in cases if c.split == split]
        assert sum(c.expect_refused for c in half) >= 10 and sum(not c.expect_refused for c in half) >= 50
    assert sum(c.expect_refused for c in cases) >= 25


def test_a_merged_chunk_holds_each_section_whose_heading_it_keeps() -> None:
    """A chunk of merged short sections carries their common parent as its path and each merged
    heading as an element of its text: `#Eligibility` in an eval case finds it; a heading's words
    inside a sentence, or a heading of another document, do not."""
    from rag_pipeline.chunking.chunks import ELEMENT_SEPARATOR
    from rag_pipeline.evaluation.evaluate import EvalCase, holds_section, is_relevant
    from rag_pipeline.retrieval.search import Hit

    def hit(path: list[str], text: str, uri: str = "policies/remote-work.docx") -> Hit:
        return Hit(chunk_id=1, source="s", uri=uri, version_no=1, version_id=1, section_path=path, page_start=None,
                   page_end=None, char_start=0, char_end=len(text), score=0.0, similarity=0.0, text=text,
                   acl_groups=["all-staff"], status="live")

    merged = hit(["Remote Work Policy"], ELEMENT_SEPARATOR.join(
        ["Eligibility", "Employees may work remotely two days a week.", "Equipment", "A laptop is provided."]))
    case = EvalCase(id="c", question="q", groups=("all-staff",), expect_source="policies/remote-work.docx",
                    expect_section="eligibility ")
    assert holds_section(merged, "Eligibility") and holds_section(merged, "  EQUIPMENT") and is_relevant(merged, case)
    assert not holds_section(merged, "Remote work") and not holds_section(merged, "Employees may work")
    assert not is_relevant(hit(["Remote Work Policy"], "Eligibility is decided by the manager."), case)
    assert not is_relevant(hit(["Eligibility"], "x", uri="policies/other.docx"), case)
    assert is_relevant(hit(["Remote Work Policy", "Eligibility"], "Two days a week."), case)


def test_classes_are_read_as_labels_and_never_change_the_score(tmp_path: Path) -> None:
    path = tmp_path / "eval.yaml"
    path.write_text("- {id: a, question: q, as_user: {groups: [g]}, expect_evidence: [head of department],"
                    " classes: [section, cross-lingual]}\n"
                    "- {id: b, question: q, as_user: {groups: [g]}, expect: refused, classes: refuse}\n"
                    "- {id: c, question: q, as_user: {groups: [g]}, expect: refused}\n", encoding="utf-8")
    a, b, c = load_eval_set(path)
    assert a.classes == ("section", "cross-lingual") and b.classes == ("refuse",) and c.classes == ()
    hits = [_hit(text="trips are approved by the head of department", chunk_id=2)]
    labelled = replace(CASE, classes=("section",))
    assert score_case(labelled, hits, AT, set()) == score_case(CASE, hits, AT, set())
    path.write_text("- {id: a, question: q, as_user: {groups: [g]}, expect: refused, classes: [1]}\n", encoding="utf-8")
    with pytest.raises(EvalSetError, match="classes"):
        load_eval_set(path)

"""The gate's report reads right in the UI: every metric has a threshold, a passed gate lists
no "failing" cases (cases that missed are "under par"), a failed one says why."""

from __future__ import annotations

from rag_pipeline.defs.assets import gate_metadata
from rag_pipeline.evaluation.config import DEFAULT_THRESHOLDS
from rag_pipeline.evaluation.evaluate import METRICS, CaseResult, EvalReport


def _case(case_id: str, *, evidence: bool) -> CaseResult:
    return CaseResult(id=case_id, question="q", groups=["all-staff"], expected="answer", refused=False,
                      correct_refusal=True, source_hit=True, evidence_hit=evidence, first_relevant_rank=1,
                      acl_leaks=0, superseded_hits=0)


def _report(passed: bool, failures: list[str]) -> EvalReport:
    metrics = {m: (0.0 if m in ("acl_leaks", "superseded_hits") else 0.9) for m in METRICS}
    return EvalReport(metrics=metrics, cases=[_case("ok", evidence=True), _case("missed", evidence=False)],
                      passed=passed, failures=failures, k=5)


def test_every_metric_the_gate_computes_has_a_default_threshold() -> None:
    assert set(DEFAULT_THRESHOLDS) == set(METRICS)


def test_a_passed_gate_lists_cases_under_par_never_failing_cases() -> None:
    metadata = gate_metadata(_report(True, []), DEFAULT_THRESHOLDS)
    assert metadata["verdict"] == "passed"
    assert "failing_cases" not in metadata
    under_par = metadata["cases_under_par"].value
    assert "missed" in under_par and "| ok |" not in under_par
    table = metadata["thresholds"].value
    for metric in METRICS:
        assert f"| {metric} |" in table
    assert "| acl_leaks | 0.000 | <= 0 | yes |" in table and "| refusal_accuracy | 0.900 | >= 0.75 | yes |" in table


def test_a_failed_gate_lists_failing_cases_and_says_why() -> None:
    thresholds = {**DEFAULT_THRESHOLDS, "ndcg": 0.95}
    metadata = gate_metadata(_report(False, ["ndcg = 0.900 is under 0.95"]), thresholds)
    assert metadata["verdict"] == "failed: ndcg = 0.900 is under 0.95"
    assert "missed" in metadata["failing_cases"].value and "cases_under_par" not in metadata
    assert "| ndcg | 0.900 | >= 0.95 | NO |" in metadata["thresholds"].value


def _ranked(case_id: str, rank: int | None, *, refused: bool = False, expected: str = "answer") -> CaseResult:
    hit = {"uri": "policies/travel.pdf", "version": 2, "section_path": ["Travel", "2 Approval"]}
    return CaseResult(id=case_id, question="q", groups=["all-staff"], expected=expected, refused=refused,
                      correct_refusal=refused == (expected == "refused"), source_hit=None, evidence_hit=None,
                      first_relevant_rank=rank if expected == "answer" else None, acl_leaks=0, superseded_hits=0,
                      results=[] if refused else [hit], expected_passage="policies/travel.pdf \u203a \u201chead of | department\u201d")


def test_a_gate_failed_on_ndcg_lists_the_low_ranked_cases_with_rank_cost_and_passages() -> None:
    from rag_pipeline.evaluation.evaluate import _aggregate

    cases = [_ranked("top", 1), _ranked("third", 3), _ranked("absent", None),
             _ranked("wrongly-answered", None, expected="refused")]  # a refusal mistake: not an nDCG loss
    metrics = {**{m: 1.0 for m in METRICS}, **_aggregate(cases)}
    report = EvalReport(metrics=metrics, cases=cases, passed=False, failures=[f"ndcg = {metrics['ndcg']:.3f} is under 0.9"], k=5)
    metadata = gate_metadata(report, {**DEFAULT_THRESHOLDS, "ndcg": 0.9})
    table = metadata["failing_ndcg"].value.splitlines()
    assert [row.split(" | ")[0].strip("| ") for row in table[2:]] == ["absent", "third"]  # costliest first
    losses = [float(row.split(" | ")[2]) for row in table[2:]]
    assert abs(sum(losses) - (1 - metrics["ndcg"])) < 1e-3  # the rows add up to the shortfall
    assert "| third | 3 | 0.1667 |" in metadata["failing_ndcg"].value
    assert "head of \\| department" in table[3] and "policies/travel.pdf v2 \u203a Travel \u203a 2 Approval" in table[3]
    assert "failing_refusal_accuracy" not in metadata  # its threshold was met: no table for it
    assert "wrongly-answered" in metadata["failing_cases"].value  # the full list stays


def test_a_gate_failed_on_refusals_lists_the_refusal_mistakes_under_that_metric() -> None:
    from rag_pipeline.evaluation.evaluate import _aggregate

    cases = [_ranked("fine", 1), _ranked("refused-wrongly", None, refused=True), _ranked("must-refuse", None, expected="refused")]
    metrics = _aggregate(cases)
    report = EvalReport(metrics=metrics, cases=cases, passed=False, failures=["refusal_accuracy under"], k=5)
    metadata = gate_metadata(report, {**DEFAULT_THRESHOLDS, "refusal_accuracy": 0.9, "ndcg": 0.0, "mrr": 0.0})
    rows = metadata["failing_refusal_accuracy"].value
    assert "refused-wrongly" in rows and "must-refuse" in rows and "| fine |" not in rows
    assert "(refused)" in rows
    assert "failing_ndcg" not in metadata

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

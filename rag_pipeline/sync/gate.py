"""Step 7, the gate: evaluate the index as it will look once this run publishes, and record
the verdict on the run so publish can check it.

A run that staged nothing leaves the index exactly as it is: what the gate would evaluate is
the live index, which passed the gate of the run that published it. Such a run skips the
evaluation (and so never loads the model) and records why. A changed evaluation set or
thresholds are therefore judged at the next sync that changes the index, or at once with
`rag-pipeline eval`."""

from __future__ import annotations

from rag_pipeline import store
from rag_pipeline.embedding import Embedder
from rag_pipeline.evaluation.answer_cases import load_answer_cases
from rag_pipeline.evaluation.evaluate import EvalReport, evaluate, load_eval_set
from rag_pipeline.retrieval import refusal
from rag_pipeline.retrieval.search import DEFAULT_MODE
from rag_pipeline.sync.context import SyncContext

NOTHING_STAGED = "nothing staged: the index is unchanged, evaluation skipped"


def run_gate(ctx: SyncContext, embedder: Embedder) -> EvalReport:
    evaluation = ctx.config.evaluation
    with ctx.connect() as conn:
        if evaluation.eval_set is None:
            report = EvalReport(metrics={}, cases=[], passed=True, failures=[], k=evaluation.k)
            reason = "no evaluation set configured (evaluation.eval_set): only structural checks ran"
        elif store.versions.staged_count(conn, ctx.run_id) == 0:
            report = EvalReport(metrics={}, cases=[], passed=True, failures=[], k=evaluation.k)
            reason = NOTHING_STAGED
        else:
            cases = load_eval_set(evaluation.eval_set)
            model_id = store.search.index_model_id(conn, store.search.View(preview_run=ctx.run_id))
            threshold = refusal.threshold_for(conn, model_id, DEFAULT_MODE, evaluation.refusal_score)
            store.runs.update_run(conn, ctx.run_id, refusal_threshold=threshold.value,
                                 refusal_coverage_weight=threshold.coverage_weight)
            report = evaluate(
                conn, embedder, cases, k=evaluation.k, thresholds=evaluation.thresholds,
                refusal_threshold=threshold, preview_run=ctx.run_id,
                progress=lambda done, total: ctx.progress("gate", done, total),
                answer_cases=load_answer_cases(evaluation.eval_set),
            )
            reason = "; ".join(report.failures) if report.failures else "all thresholds met"
        store.runs.update_run(conn, ctx.run_id, gate_passed=report.passed, gate_metrics=report.metrics, gate_reason=reason)
    return report

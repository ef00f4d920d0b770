"""`rag-pipeline eval`: the evaluation metrics per case and overall."""

from __future__ import annotations

import argparse
from pathlib import Path

from rag_pipeline.cli.common import as_of, connection, embedder, load_config, refusal_threshold
from rag_pipeline.cli.output import console, emit_json, shown
from rag_pipeline.common import heap
from rag_pipeline.errors import EXIT_GATE, EXIT_OK


def register(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("eval", parents=[common], help="run an evaluation set against the index")
    p.add_argument("eval_set")
    p.add_argument("--as-of")
    p.set_defaults(func=cmd_eval)


def cmd_eval(args: argparse.Namespace) -> int:
    from rag_pipeline.evaluation.answer_cases import load_answer_cases
    from rag_pipeline.evaluation.evaluate import evaluate, load_eval_set

    config = load_config(args)
    at = as_of(args.as_of)
    cases = load_eval_set(Path(args.eval_set))
    answer_cases = load_answer_cases(Path(args.eval_set))
    model = embedder(config)
    with connection(config) as conn:
        threshold = refusal_threshold(conn, config, at)
        heap.work_begins()
        report = evaluate(conn, model, cases, k=config.evaluation.k, thresholds=config.evaluation.thresholds,
                          refusal_threshold=threshold, as_of=at, answer_cases=answer_cases)
    if args.json:
        emit_json(report.to_dict())
        return EXIT_OK if report.passed else EXIT_GATE
    out = console()
    for case in report.cases:
        out.print(f"{'FAIL' if case.failed else 'ok  '} {shown(case.id)}: expected {case.expected}, refused={case.refused}, "
                  f"source={case.source_hit}, evidence={case.evidence_hit}, rank={case.first_relevant_rank}")
    for answer in report.answer_cases:
        statuses = ", ".join(f"{c['status']}" + ("" if c["status"] == c["expected"] else f" (expected {c['expected']})")
                             for c in answer.claims)
        out.print(f"{'FAIL' if answer.failed else 'ok  '} {shown(answer.id)}: answer {answer.verdict}; claims {statuses}")
    out.print("metrics: " + ", ".join(f"{k} {v:g}" for k, v in report.metrics.items()))
    out.print("verdict: " + ("passed" if report.passed else shown("; ".join(report.failures))))
    return EXIT_OK if report.passed else EXIT_GATE

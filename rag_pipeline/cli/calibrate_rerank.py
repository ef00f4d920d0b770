"""`rag-pipeline calibrate-rerank`: fit the rerank stage's weights on an evaluation set's
calibration half (retrieval/rerank_fit.py), store them with the index, and report the objective
before and after on both halves; the held-out half says whether the fit generalises."""

from __future__ import annotations

import argparse
import hashlib
import sys
from pathlib import Path

from rag_pipeline.cli.common import connection, embedder, load_config
from rag_pipeline.cli.output import console, emit_json, shown
from rag_pipeline.common import heap
from rag_pipeline.errors import EXIT_OK, UsageError


def register(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("calibrate-rerank", parents=[common],
                       help="fit the rerank weights on an evaluation set's calibration cases and store them with the index")
    p.add_argument("eval_set")
    p.add_argument("--dry-run", action="store_true", help="fit and report, store nothing")
    p.set_defaults(func=cmd_calibrate_rerank)


def cmd_calibrate_rerank(args: argparse.Namespace) -> int:
    from rich.console import Console
    from rich.progress import track

    from rag_pipeline import store
    from rag_pipeline.evaluation.evaluate import in_calibration_split, is_relevant, load_eval_set
    from rag_pipeline.retrieval import rerank, rerank_fit
    from rag_pipeline.retrieval.search import RERANK_DEPTH, as_candidate, rerank_weights, search

    config = load_config(args)
    path = Path(args.eval_set)
    answerable = [c for c in load_eval_set(path) if not c.expect_refused]
    k = config.evaluation.k
    model = embedder(config)
    halves: dict[bool, list[rerank_fit.FitCase]] = {True: [], False: []}
    with connection(config) as conn:
        model_id = store.search.index_model_id(conn)
        if model_id is None:
            raise UsageError("the index is empty: sync documents before fitting the rerank weights")
        in_force = store.rerank_weights.latest_rerank_calibration(conn, model_id)
        before = rerank_weights(in_force) or rerank.WEIGHTS
        heap.work_begins()
        for case in track(answerable, description="searching", console=Console(stderr=True),
                          disable=args.json or not sys.stderr.isatty()):
            hits = search(conn, model, case.question, list(case.groups), k=RERANK_DEPTH, mode="hybrid",
                          as_of=case.as_of, log=False)  # exactly the candidates the rerank stage reorders
            halves[in_calibration_split(case)].append(
                rerank_fit.fit_case(case.question, [as_candidate(h) for h in hits], [is_relevant(h, case) for h in hits]))
        calibration, held_out = halves[True], halves[False]
        if not calibration:
            raise UsageError(f"{path}: no answerable case is in the calibration half; give some `split: calibration`")
        if not any(any(c.relevant) for c in calibration):
            raise UsageError(f"{path}: none of the {len(calibration)} calibration cases finds its answering chunk among the "
                             f"{RERANK_DEPTH} candidates the rerank stage reorders, so no weighting can help; nothing stored "
                             "(check the cases' groups and expectations against the index with `rag-pipeline eval`)")
        fitted = rerank_fit.fit(calibration, k)
        figures = {
            "objective": f"ndcg@{k}", "weights": fitted.weights, "weights_before": before,
            "calibration_cases": len(calibration), "held_out_cases": len(held_out),
            "calibration_before": round(rerank_fit.objective(calibration, before, k), 4),
            "calibration_after": round(rerank_fit.objective(calibration, fitted.weights, k), 4),
            "held_out_before": round(rerank_fit.objective(held_out, before, k), 4),
            "held_out_after": round(rerank_fit.objective(held_out, fitted.weights, k), 4),
        }
        if not args.dry_run:
            figures["calibration_id"] = store.rerank_weights.save_rerank_calibration(conn, {
                **figures, "model_id": model_id, "eval_set": str(path),
                "eval_set_sha256": hashlib.sha256(path.read_bytes()).hexdigest()})
    if args.json:
        emit_json({**figures, "stored": not args.dry_run})
        return EXIT_OK
    weights = ", ".join(f"{name} {value:g}" for name, value in fitted.weights.items())
    console().print(
        f"rerank weights {weights}: nDCG@{k} {figures['calibration_before']:.3f} -> {figures['calibration_after']:.3f} on "
        f"the {len(calibration)} calibration cases of {shown(str(path))}, {figures['held_out_before']:.3f} -> "
        f"{figures['held_out_after']:.3f} on the {len(held_out)} held-out cases"
        + (" (dry run: nothing stored)" if args.dry_run else "; stored with the index"))
    return EXIT_OK

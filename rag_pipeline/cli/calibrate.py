"""`rag-pipeline calibrate-refusal`: set the refusal threshold from an evaluation set's
must-answer and must-refuse questions, store it with the index, and report how well it
refuses and answers on the half of the set it was not calibrated on (a case's `split` key names
its half; without one, a hash of its id decides)."""

from __future__ import annotations

import argparse
import hashlib
from pathlib import Path

from rag_pipeline.cli.common import connection, embedder, load_config
from rag_pipeline.cli.output import console, emit_json, shown
from rag_pipeline.common import heap
from rag_pipeline.errors import EXIT_OK, UsageError


def register(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("calibrate-refusal", parents=[common],
                       help="calibrate the refusal threshold from an evaluation set and store it with the index")
    p.add_argument("eval_set")
    p.set_defaults(func=cmd_calibrate)
    p = sub.add_parser("calibrate-support", parents=[common],
                       help="calibrate the answer checker's support threshold from an evaluation set's answer cases")
    p.add_argument("eval_set")
    p.set_defaults(func=cmd_calibrate_support)


def cmd_calibrate(args: argparse.Namespace) -> int:
    from rag_pipeline import store
    from rag_pipeline.evaluation.evaluate import in_calibration_split, load_eval_set
    from rag_pipeline.retrieval import refusal
    from rag_pipeline.retrieval.search import DEFAULT_MODE, search

    config = load_config(args)
    path = Path(args.eval_set)
    cases = load_eval_set(path)
    model = embedder(config)
    found: dict[str, tuple[bool, refusal.Evidence | None]] = {}  # case id -> (must refuse, first result)
    with connection(config) as conn:
        model_id = store.search.index_model_id(conn)
        if model_id is None:
            raise UsageError("the index is empty: sync documents before calibrating refusal")
        heap.work_begins()
        for case in cases:
            hits = search(conn, model, case.question, list(case.groups), k=config.evaluation.k,
                          as_of=case.as_of, log=False)
            found[case.id] = (case.expect_refused, refusal.evidence(hits))
        calibration_ids = {c.id for c in cases if in_calibration_split(c)}
        halves = {name: [v for cid, v in found.items() if (cid in calibration_ids) == (name == "calibration")]
                  for name in ("calibration", "held_out")}
        answer = [e for refuse, e in halves["calibration"] if not refuse]
        refuse = [e for refuse, e in halves["calibration"] if refuse]
        if not answer or not refuse:
            raise UsageError(f"{path}: the calibration half has {len(answer)} must-answer and {len(refuse)} "
                             "must-refuse cases; it needs both (add cases with 'expect: refused')")
        fitted = refusal.calibrate(answer, refuse)
        held_answer = [e for r, e in halves["held_out"] if not r]
        held_refuse = [e for r, e in halves["held_out"] if r]
        answered, refused = refusal.held_out_accuracies(held_answer, held_refuse, fitted)
        store.refusal.save_calibration(conn, {
            "model_id": model_id, "mode": DEFAULT_MODE, "threshold": fitted.threshold,
            "coverage_weight": fitted.coverage_weight, "eval_set": str(path),
            "eval_set_sha256": hashlib.sha256(path.read_bytes()).hexdigest(),
            "must_answer": len(answer), "must_refuse": len(refuse),
            "answer_accuracy": answered, "refuse_accuracy": refused,
        })
    result = {"threshold": round(fitted.threshold, 4), "coverage_weight": fitted.coverage_weight, "mode": DEFAULT_MODE,
              "calibration_cases": {"must_answer": len(answer), "must_refuse": len(refuse)},
              "held_out_cases": {"must_answer": len(held_answer), "must_refuse": len(held_refuse)},
              "held_out_refusal_accuracy": {"must_answer": round(answered, 4), "must_refuse": round(refused, 4)}}
    if args.json:
        emit_json(result)
        return EXIT_OK
    console().print(
        f"refusal threshold {fitted.threshold:.3f} on the first result's similarity + {fitted.coverage_weight:g} x its "
        f"term coverage, calibrated on {len(answer)} must-answer and "
        f"{len(refuse)} must-refuse cases of {shown(str(path))}; on the {len(held_answer) + len(held_refuse)} held-out "
        f"cases it answers {answered:.0%} of must-answer and refuses {refused:.0%} of must-refuse questions")
    return EXIT_OK


def cmd_calibrate_support(args: argparse.Namespace) -> int:
    """The support score's weight and threshold (answers/support.py) fitted on the calibration
    half of the set's answer cases (their citations expected `ok` against those expected
    `unsupported` that reach the score), stored with the index, and reported on the other half."""
    from rag_pipeline import store
    from rag_pipeline.answers import crosslingual, support
    from rag_pipeline.evaluation.answer_cases import load_answer_cases, run_answer_cases, support_evidence

    config = load_config(args)
    path = Path(args.eval_set)
    cases = load_answer_cases(path)
    model = embedder(config)
    with connection(config) as conn:
        model_id = store.search.index_model_id(conn)
        if model_id is None:
            raise UsageError("the index is empty: sync documents before calibrating the support threshold")
        heap.work_begins()
        halves = {half: run_answer_cases(conn, model, [c for c in cases if c.in_calibration_split == (half == "calibration")],
                                         k=config.evaluation.k, threshold=support.DEFAULT)
                  for half in ("calibration", "report")}
        ok, unsupported = support_evidence(halves["calibration"])
        if not ok or not unsupported:
            raise UsageError(f"{path}: the calibration half has {len(ok)} citations expected ok and {len(unsupported)} "
                             "expected unsupported that reach the support score; it needs both")
        x_ok, x_unsupported = support_evidence(halves["calibration"], crosslingual=True)
        fitted = support.calibrate_crosslingual(x_ok, x_unsupported, support.calibrate(ok, unsupported))
        held_ok, held_unsupported = support_evidence(halves["report"])
        passed, refused = support.held_out_accuracies(held_ok, held_unsupported, fitted)
        x_held = support_evidence(halves["report"], crosslingual=True)
        x_passed, x_refused = support.held_out_accuracies(*x_held, fitted, crosslingual=True)
        store.answers.save_support_calibration(conn, {
            "model_id": model_id, "threshold": fitted.threshold, "coverage_weight": fitted.coverage_weight,
            "polarity_weight": fitted.polarity_weight, "eval_set": str(path), "eval_set_sha256": hashlib.sha256(path.read_bytes()).hexdigest(),
            "supported": len(ok), "unsupported": len(unsupported),
            "supported_accuracy": passed, "unsupported_accuracy": refused,
            "crosslingual_threshold": fitted.crosslingual_threshold,
            "crosslingual_supported": len(x_ok), "crosslingual_unsupported": len(x_unsupported),
        })
    result = {"threshold": round(fitted.threshold, 4), "coverage_weight": fitted.coverage_weight,
              "polarity_weight": fitted.polarity_weight, "calibration_citations": {"ok": len(ok), "unsupported": len(unsupported)},
              "held_out_citations": {"ok": len(held_ok), "unsupported": len(held_unsupported)},
              "held_out_accuracy": {"ok": round(passed, 4), "unsupported": round(refused, 4)},
              "crosslingual": {"threshold": round(fitted.crosslingual_value, 4),
                               "fitted": fitted.crosslingual_threshold is not None,
                               "calibration_citations": {"ok": len(x_ok), "unsupported": len(x_unsupported)},
                               "held_out_citations": {"ok": len(x_held[0]), "unsupported": len(x_held[1])},
                               "held_out_accuracy": {"ok": round(x_passed, 4), "unsupported": round(x_refused, 4)}}}
    if args.json:
        emit_json(result)
        return EXIT_OK
    console().print(
        f"support threshold {fitted.threshold:.3f} on similarity + {fitted.coverage_weight:g} x term coverage - "
        f"{fitted.polarity_weight:g} x polarity flag, calibrated on "
        f"{len(ok)} supporting and {len(unsupported)} non-supporting citations of {shown(str(path))}; on the "
        f"{len(held_ok) + len(held_unsupported)} held-out citations it passes {passed:.0%} of supporting and flags "
        f"{refused:.0%} of non-supporting ones")
    crossed = ("fitted on" if fitted.crosslingual_threshold is not None else
               "the built-in default: the calibration half needs labelled cross-lingual citations of both kinds, it has")
    console().print(
        f"cross-lingual citations (claim and passage in different languages, {crosslingual.MODEL}): threshold "
        f"{fitted.crosslingual_value:.3f}, {crossed} {len(x_ok)} supporting and {len(x_unsupported)} non-supporting; on the "
        f"{len(x_held[0]) + len(x_held[1])} held-out ones it passes {x_passed:.0%} of supporting and flags {x_refused:.0%} "
        "of non-supporting ones")
    return EXIT_OK

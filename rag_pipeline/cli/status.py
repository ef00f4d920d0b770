"""`rag-pipeline status`: sources, live documents and chunks, quarantine, model, last runs."""

from __future__ import annotations

import argparse

from rag_pipeline.cli.common import connection, load_config
from rag_pipeline.cli.output import console, emit_json, shown, when
from rag_pipeline.errors import EXIT_OK


def register(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("status", parents=[common], help="sources, counts, quarantine, model, last runs")
    p.set_defaults(func=cmd_status)


def cmd_status(args: argparse.Namespace) -> int:
    from rag_pipeline import store

    config = load_config(args)
    with connection(config) as conn:
        status = store.status.index_status(conn)
        models = [store.models.model_by_id(conn, m) for m in status.pop("model_ids")]
        runs = store.runs.with_abandoned(conn, store.runs.recent_runs(conn))
        quarantine = store.quarantine.latest_quarantine(conn)
        version = store.migrations.schema_version(conn)
    configured = {s.name: s.kind for s in config.sources}
    data = {"schema_version": version, "configured_sources": configured, **status,
            "models": models, "last_runs": runs, "quarantine": quarantine}
    if args.json:
        emit_json(data)
        return EXIT_OK
    out = console()
    for name, kind in configured.items():
        s = status["sources"].get(name, {"live_documents": 0, "live_chunks": 0})
        out.print(f"source {shown(name)} ({kind}): {s['live_documents']} live documents, {s['live_chunks']} chunks")
    for m in models:
        if m:
            out.print(f"model: {shown(m['name'])} ({shown(m['revision'])}), {m['dimension']}-d, "
                      f"max {m['max_tokens']} tokens, weights {m['weights_sha256'][:12]}")
    for name, count in status["multilingual_vectors"].items():
        out.print(f"multilingual vectors: {count} live chunks of non-English documents ({shown(name)})")
    out.print(f"quarantined files: {status['quarantined_files']}")
    for q in quarantine:
        out.print(f"  {shown(q['source'])}/{shown(q['uri'])} ({q['stage']}): {shown(q['error'])}")
    for r in runs:
        out.print(f"run {shown(r['run_id'])} {r['status']} started {when(r['started_at'])} {_gate_line(r)}")
        if r["status"] == store.runs.ABANDONED:
            out.print(f"  [yellow]{shown(r['error'])}[/yellow]")
    return EXIT_OK


def _gate_line(run: dict) -> str:
    """What the gate did. A run that staged nothing skipped the evaluation (the live index is what
    the last publishing run's gate judged), so "gate passed" would claim a check that never ran."""
    if run["status"] == "nothing_to_do":
        return "nothing to do (gate skipped)"
    gate = {True: "passed", False: "failed", None: "-"}[run["gate_passed"]]
    reason = f" ({shown(run['gate_reason'])})" if run["gate_reason"] and not run["gate_passed"] else ""
    return f"gate {gate}{reason}"

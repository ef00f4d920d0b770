"""`rag-pipeline migrate-model --to MODEL [--backend B] [--no-worse] | --rollback | --status`:
change the index's embedding model without downtime (rag_pipeline/migration)."""

from __future__ import annotations

import argparse
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from rag_pipeline.cli.common import connection, load_config
from rag_pipeline.cli.output import console, emit_json, shown
from rag_pipeline.embedding.config import EMBEDDING_BACKENDS
from rag_pipeline.errors import EXIT_GATE, EXIT_OK, UsageError


def register(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("migrate-model", parents=[common],
                       help="re-embed the index with another model beside the live one, gate both, switch atomically")
    p.add_argument("--to", metavar="MODEL", help="the new model: a folder, or a name in the Hugging Face cache")
    p.add_argument("--backend", help=f"the new model's encoding backend ({', '.join(EMBEDDING_BACKENDS)}); "
                                     "another numeric format of the same model is another model")
    p.add_argument("--no-worse", action="store_true",
                   help="switch only if the new model is not worse than the live one on any metric")
    p.add_argument("--rollback", action="store_true", help="switch back to the model the last switch replaced")
    p.add_argument("--status", action="store_true", help="the index's model, its switches and stored vectors")
    p.add_argument("--wait", type=float, default=600.0, metavar="SECONDS",
                   help="how long the switch waits for running syncs to finish (default 600)")
    p.add_argument("--batch-size", type=int, default=256, metavar="N",
                   help="chunks embedded and committed together (default 256; memory is bounded by it)")
    p.add_argument("--nice", type=int, default=10, metavar="N",
                   help="lower this process's CPU priority by N (default 10; 0 keeps it) so that searches served "
                        "on the same machine keep their latency while it embeds")
    p.add_argument("--progress", action="store_true", help="a progress bar on stderr")
    p.set_defaults(func=cmd_migrate)


def cmd_migrate(args: argparse.Namespace) -> int:
    from rag_pipeline import store
    from rag_pipeline.migration import steps

    if sum(bool(x) for x in (args.to, args.rollback, args.status)) != 1:
        raise UsageError("migrate-model takes one of --to MODEL, --rollback or --status")
    if args.backend is not None and args.backend not in EMBEDDING_BACKENDS:
        raise UsageError(f"--backend {args.backend!r} is not a backend; use one of {', '.join(EMBEDDING_BACKENDS)}")
    if args.rollback and (args.backend or args.no_worse):
        raise UsageError("--rollback returns to the previous model as it was: --backend and --no-worse do not apply")
    if not 1 <= args.batch_size <= 100_000:
        raise UsageError("--batch-size is a whole number from 1 to 100000")
    if not 0 <= args.wait <= 86_400:
        raise UsageError("--wait is seconds from 0 to 86400")
    if not 0 <= args.nice <= 19:
        raise UsageError("--nice is a whole number from 0 to 19")
    if args.nice and not args.status:
        import os

        os.nice(args.nice)  # before the encoder starts its threads: they inherit it
    config = load_config(args)
    with connection(config, store.roles.WRITER) as conn:
        if args.status:
            return _status(args, conn)
        with _bar(args.progress and not args.json) as progress:
            outcome = steps.migrate(conn, config, args.to, args.backend, no_worse=args.no_worse,
                                    rollback=args.rollback, progress=progress, wait_seconds=args.wait,
                                    batch=args.batch_size)
        models = {m: store.models.model_by_id(conn, m) for m in (outcome.from_model, outcome.to_model)}
    if args.json:
        emit_json(outcome.to_dict())
    else:
        _print(outcome.to_dict(), models)
    return EXIT_OK if outcome.status == "switched" else EXIT_GATE


@contextmanager
def _bar(enabled: bool) -> Iterator[Any]:
    """A Rich bar per step with the time left, on stderr."""
    if not enabled:
        yield lambda step, done, total: None
        return
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    with Progress(TextColumn("{task.description:<14}"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(),
                  console=Console(stderr=True)) as bar:
        tasks: dict[str, Any] = {}

        def update(step: str, done: int, total: int) -> None:
            if step not in tasks:
                tasks[step] = bar.add_task(step, total=total or None)
            bar.update(tasks[step], completed=done, total=total or None)

        yield update


def _name(model: dict[str, Any] | None) -> str:
    if not model:
        return "-"
    return f"{model['name']} ({model['numerics']}, id {model['id']})"


def _print(outcome: dict[str, Any], models: dict[int | None, Any]) -> None:
    out = console()
    fill = outcome["fill"]
    out.print(f"{outcome['action']} {shown(_name(models.get(outcome['from_model'])))} -> "
              f"{shown(_name(models.get(outcome['to_model'])))}: {fill.get('done')}/{fill.get('total')} chunks have "
              f"vectors ({fill.get('embedded')} embedded now, {fill.get('reused')} reused) in {fill.get('seconds')} s")
    if fill.get("rechunked_documents"):
        out.print(f"re-chunked {fill['rechunked_documents']} documents for the new model's shorter input "
                  f"({fill['rechunked_chunks_before']} -> {fill['rechunked_chunks_after']} chunks, nothing re-parsed)")
    verdict = outcome.get("gate") or {}
    rows = _gate_rows(verdict)
    if rows:
        out.print(f"{'metric':<30} {'live':>8} {'new':>8}")
        for name, live, new in rows:
            worse = "  worse" if name in verdict.get("worse", []) else ""
            out.print(f"{name:<30} {_fmt(live):>8} {_fmt(new):>8}{worse}")
    out.print("gate: " + ("passed" if verdict.get("passed") else "FAILED") + f" ({shown(verdict.get('reason', ''))})")
    if outcome["status"] == "switched":
        out.print(f"switched at {outcome['switch']['switched_at']}: searches now embed with the new model; "
                  "set embedding.model / embedding.backend to it before the next sync")
    else:
        out.print("not switched: the live model is unchanged (its vectors are kept; `db prune-models` removes them)")


def _gate_rows(verdict: dict[str, Any]) -> list[tuple[str, Any, Any]]:
    live, new = (verdict.get(side, {}).get("metrics", {}) for side in ("live", "new"))
    return [(n, live.get(n), new.get(n)) for n in dict.fromkeys([*live, *new])]


def _fmt(value: Any) -> str:
    return "-" if value is None else f"{value:g}"


def _status(args: argparse.Namespace, conn: Any) -> int:
    from rag_pipeline import store

    current = store.model_switches.index_model_id(conn)
    data = {"index_model": store.models.model_by_id(conn, current) if current is not None else None,
            "switches": store.model_switches.switches(conn),
            "running": store.model_switches.running_migration(conn),
            "vectors": store.model_vectors.models_with_vectors(conn)}
    if args.json:
        emit_json(data)
        return EXIT_OK
    out = console()
    out.print(f"index model: {shown(_name(data['index_model']))}")
    for s in data["switches"]:
        out.print(f"switch {s['id']}: {s['from_model']} -> {s['to_model']} at {s['switched_at'].isoformat()}")
    if data["running"]:
        r = data["running"]
        out.print(f"migration {r['id']} to model {r['to_model']} running since {r['started_at'].isoformat()}: "
                  f"{shown(r['counts'].get('fill', {}))}")
    for model, count in data["vectors"].items():
        out.print(f"model {model}: {count} vectors beside the chunks")
    return EXIT_OK

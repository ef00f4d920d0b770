"""`rag-pipeline sync`: run the Dagster sync job in process, with a progress display."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from rag_pipeline.cli.common import load_config
from rag_pipeline.cli.output import console, emit_json, shown
from rag_pipeline.errors import EXIT_FAILURE, EXIT_GATE, EXIT_OK, UsageError

if TYPE_CHECKING:  # importing it loads psycopg and numpy: every command would pay for it
    from rag_pipeline.sync.outcome import SyncOutcome

EXIT_BY_STATUS = {"published": EXIT_OK, "nothing_to_do": EXIT_OK, "gate_failed": EXIT_GATE}


def register(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("sync", parents=[common], help="run the sync job (plan .. gate .. publish)")
    p.add_argument("--source", help="sync only this source")
    p.add_argument("--allow-mass-tombstone", action="store_true",
                   help="allow removing more than max_tombstone_share of a source's documents")
    p.set_defaults(func=cmd_sync)


def cmd_sync(args: argparse.Namespace) -> int:
    config = load_config(args)
    from rag_pipeline.sources import open_source

    selected = [config.source(args.source)] if args.source else list(config.sources)
    for source in selected:
        open_source(source)  # a source this version cannot sync is a configuration error
    if not config.sources:
        raise UsageError(f"{config.path}: no sources configured; add one under 'sources:'")
    from rag_pipeline.cli.runner import run_sync

    outcome = run_sync(config, [args.source] if args.source else [], args.allow_mass_tombstone,
                       show_progress=not args.json and sys.stderr.isatty())
    if args.json:
        emit_json(outcome.to_dict())
    else:
        _print(outcome)
    return EXIT_BY_STATUS.get(outcome.status, EXIT_FAILURE)


def _print(outcome: SyncOutcome) -> None:
    out = console()
    counts = outcome.counts
    plan = counts.get("plan", {})
    out.print(f"run {outcome.run_id}: [bold]{outcome.status}[/bold] in {outcome.seconds:.1f} s")
    if plan:
        out.print("plan: " + ", ".join(f"{k} {v}" for k, v in sorted(plan.items())))
    if counts.get("embed"):
        embed = counts["embed"]
        out.print(f"embedded: {embed.get('embedded', 0)} chunks, reused {embed.get('reused', 0)} stored vectors")
    if counts.get("staged"):
        out.print("staged: " + ", ".join(f"{k} {v}" for k, v in sorted(counts["staged"].items())))
    if any((counts.get("published") or {}).values()):
        out.print("published: " + ", ".join(f"{k} {v}" for k, v in sorted(counts["published"].items())))
    for q in outcome.quarantined:
        out.print(f"[yellow]quarantined[/yellow] {shown(q['source'])}/{shown(q['uri'])} ({q['stage']}): {shown(q['error'])}")
    if outcome.gate_metrics:
        out.print("gate: " + ", ".join(f"{k} {v:g}" for k, v in sorted(outcome.gate_metrics.items())))
    if outcome.gate_reason:
        out.print(f"gate verdict: {shown(outcome.gate_reason)}")
    if outcome.error:
        out.print(f"[red]error:[/red] {shown(outcome.error)}")

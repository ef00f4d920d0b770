"""Where the time of a CLI invocation goes: a no-op `rag-pipeline sync` of the demo and one
`rag-pipeline search` (and with `--edit`, a sync after one section of one document changed),
each in a fresh process, broken down by phase.

Each invocation runs in a new Python process, as a user's would: the plain command
(what the `rag-pipeline` console script runs), whose best wall is the figure, and beside it a probe
(`--probe`) for the breakdown. The probe times its
own phases with bench-only wrappers around the functions that do the work (nothing in the
package is changed): imports, the embedded database, Dagster's instance and definitions, each
sync step, the model identity, the model load, encoding and the SQL search. "process start" is
the parent's wall time minus the probe's own, i.e. the interpreter and `site` start-up.

Baseline in the same run: `--baseline-ref REF` runs the same two commands from the files of REF
(`git archive`; nothing is written into the repository) on a second demo copy with its own
database (schemas may differ between trees), in alternation with the current tree, and prints
both walls and their ratio. The bench prints figures only.

    python bench/bench_startup.py                          # temp copy of the demo, synced first
    python bench/bench_startup.py --config demo/rag_pipeline.yaml --repeat 3
    python bench/bench_startup.py --baseline-ref main --json /tmp/startup.json   # before/after
    python bench/bench_startup.py --broken-files --baseline-ref main   # a corpus with files the parser refuses
    python bench/bench_startup.py --edit --baseline-ref main   # also: one edited section (parse, model, 1 chunk)

Targets (issue 12): no-op sync of the demo <= 3 s; one search <= 1.5 s beyond the model load.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
QUERY = "Who approves a business trip abroad?"
HEAVY = ("torch", "sentence_transformers", "transformers", "pymupdf", "unstructured", "dagster")


# ---------------------------------------------------------------- probe (child process)

class Phases:
    """Seconds per named phase; nested wrappers subtract nothing, so phases must not nest."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}

    @contextmanager
    def timed(self, name: str):
        started = time.perf_counter()
        try:
            yield
        finally:
            self.seconds[name] = self.seconds.get(name, 0.0) + time.perf_counter() - started

    def wrap(self, owner: Any, attr: str, name: str) -> None:
        original = getattr(owner, attr)

        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with self.timed(name):
                return original(*args, **kwargs)

        setattr(owner, attr, wrapper)


def _wrap_model_load(phases: Phases) -> None:
    """Time the first access of Embedder.model (the sentence-transformers import and load)."""
    from functools import cached_property

    from rag_pipeline.embedding.encoder import Embedder

    load = Embedder.__dict__["model"].func

    def timed_load(self: Embedder) -> Any:
        with phases.timed("model load (import torch + sentence-transformers, read weights)"):
            return load(self)

    prop = cached_property(timed_load)
    prop.__set_name__(Embedder, "model")
    Embedder.model = prop


def probe(command: str, config: str) -> dict[str, Any]:
    """Run one CLI command in this (fresh) process; return its phases and what it imported."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("UNSTRUCTURED_DISABLE_NOTICE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    started = time.perf_counter()
    phases = Phases()
    with phases.timed("import rag_pipeline.cli"):
        from rag_pipeline.cli.main import main as run_cli
    from rag_pipeline.common import heap

    with heap.startup():  # the probe's own imports under the CLI's conditions (rag_pipeline.heap)
        return _probe_phases(command, config, run_cli, phases, started)


def _probe_phases(command: str, config: str, run_cli: Any, phases: Phases, started: float) -> dict[str, Any]:
    _wrap_model_load(phases)
    from rag_pipeline.embedding import encoder

    phases.wrap(encoder, "weights_digest", "model identity: weight digest (cached)")
    phases.wrap(encoder, "shape_from_files", "model identity: config files")
    from rag_pipeline.sync import context

    phases.wrap(context, "prepare_database", "embedded database start + migrate check")
    if command == "sync":
        with phases.timed("import dagster + job definitions module"):
            from rag_pipeline.cli import runner
        phases.wrap(runner, "load_definitions", "dagster: load definitions")
        for make in ("from_config", "get"):  # the instance (its storages' imports, connections)
            phases.wrap(runner.dg.DagsterInstance, make, "dagster: instance")
        phases.wrap(runner, "prepare_database", "embedded database start + migrate check")
        from rag_pipeline.sync import chunk, clean, embed, gate, parse, plan, publish, stage

        for module, attr in ((plan, "plan_run"), (parse, "parse_items"), (clean, "clean_items"),
                             (chunk, "chunk_items"), (embed, "embed_items"), (stage, "stage_items"),
                             (gate, "run_gate"), (publish, "publish_run")):
            phases.wrap(module, attr, f"step {attr}")
        with phases.timed("run_sync (total)"):
            code = run_cli(["sync", "--config", config, "--json"])
    else:
        from rag_pipeline import store
        from rag_pipeline.embedding.encoder import Embedder

        phases.wrap(Embedder, "encode", "encode the query (incl. model load)")
        phases.wrap(store.search, "search_chunks", "SQL search")
        phases.wrap(store.search_log, "log_search", "search log write")
        with phases.timed("search (total)"):
            code = run_cli(["search", QUERY, "--groups", "all-staff", "-k", "3", "--config", config, "--json"])
    return {"command": command, "code": code, "seconds": phases.seconds, "probe_total": time.perf_counter() - started,
            "imported": [m for m in HEAVY if m in sys.modules]}


# ---------------------------------------------------------------- parent

def run_probe(tree: Path, command: str, config: Path, plain: bool = False) -> dict[str, Any]:
    """One command in a fresh process: the phase probe (this tree), or with `plain` (or for a
    baseline tree, which has no probe) the console command alone, whose wall is the figure."""
    env = {**os.environ, "PYTHONPATH": str(tree), "HF_HUB_OFFLINE": "1", "UNSTRUCTURED_DISABLE_NOTICE": "1",
           "TOKENIZERS_PARALLELISM": "false"}
    env.pop("DAGSTER_HOME", None)
    script = Path(__file__).resolve()
    started = time.perf_counter()
    probing = tree == ROOT and not plain
    command = "sync" if command == "edit" else command  # an edit scenario's command is a sync
    if probing:
        args = [sys.executable, str(script), "--probe", command, "--config", str(config)]
    else:
        cli = ["sync", "--config", str(config), "--json"] if command == "sync" else \
            ["search", QUERY, "--groups", "all-staff", "-k", "3", "--config", str(config), "--json"]
        args = [sys.executable, "-c", "from rag_pipeline.cli import run; run()", *cli]  # the console script
    done = subprocess.run(args, capture_output=True, text=True, env=env, cwd=tree, timeout=600, check=False)
    wall = time.perf_counter() - started
    result: dict[str, Any] = {"wall": wall, "code": done.returncode}
    if probing:
        lines = [line for line in done.stdout.splitlines() if line.startswith('{"command"')]
        if not lines:
            raise SystemExit(f"probe failed:\n{done.stdout[-2000:]}\n{done.stderr[-3000:]}")
        result.update(json.loads(lines[-1]))
        result["seconds"]["process start (interpreter, site)"] = wall - result["probe_total"]
    return result


BROKEN_FILES = {"broken.pdf": b"%PDF-1.4 truncated", "data.xyz": b"a type no parser reads"}


def prepare_demo(work: Path, tree: Path = ROOT, broken: bool = False) -> Path:
    """A private copy of the demo corpus and config (its own embedded database), synced once
    by `tree` (the initial sync is printed, not part of the figures). With `broken`, two files
    the parser refuses are added, as real corpora have (a truncated PDF, an unknown type); the
    initial sync is then run twice (the first stops at max_failed_share, two new failures)."""
    work.mkdir(parents=True)
    for name in ("docs", "eval.yaml", "rag_pipeline.yaml"):
        source = ROOT / "demo" / name
        (shutil.copytree if source.is_dir() else shutil.copy)(source, work / name)
    for name, data in BROKEN_FILES.items() if broken else ():
        (work / "docs" / name).write_bytes(data)
    config = work / "rag_pipeline.yaml"
    for _ in range(2 if broken else 1):
        first = run_probe(tree, "sync", config)
        print(f"initial sync of a demo copy by {'the current tree' if tree == ROOT else 'the baseline'}: "
              f"{first['wall']:.1f} s (exit {first['code']})", flush=True)
    return config


EDITED = Path("docs") / "it" / "security-handbook.md"


def edit_one_section(config: Path, revision: int) -> None:
    """Append a new sentence to the last section of one demo document: the next sync parses that
    document again and encodes the one chunk whose text changed (a different sentence each time)."""
    with open(config.parent / EDITED, "a", encoding="utf-8") as handle:
        handle.write(f"\nRevision {revision}: the benchmark added this sentence to the last section.\n")


@contextmanager
def baseline_tree(ref: str | None):
    """The files of REF in a temporary folder (`git archive`: reads the repository, writes
    nothing into it)."""
    if ref is None:
        yield None
        return
    path = Path(tempfile.mkdtemp(prefix="rag-bench-baseline-"))
    try:
        archive = subprocess.run(["git", "-C", str(ROOT), "archive", "--format=tar", ref], check=True, capture_output=True)
        subprocess.run(["tar", "-x", "-C", str(path)], input=archive.stdout, check=True)
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


def sync_split(seconds: dict[str, float]) -> tuple[float, float]:
    """(the core steps together, Dagster's job execution overhead) of a sync probe's phases: the
    overhead is run_sync's total less the steps, the database, the definitions and the instance."""
    steps = sum(v for k, v in seconds.items() if k.startswith("step "))
    inside = ("dagster: load definitions", "dagster: instance", "embedded database start + migrate check")
    return steps, seconds.get("run_sync (total)", 0) - steps - sum(seconds.get(k, 0) for k in inside)


def report(runs: dict[str, list[dict[str, Any]]], plain: dict[str, list[dict[str, Any]]],
           baseline: dict[str, list[float]]) -> dict[str, Any]:
    """The figure is the plain command's best wall; the phases are the best probe's (the probe's
    wrappers add a little, so its wall is printed beside)."""
    summary: dict[str, Any] = {}
    for command, results in runs.items():
        best = min(results, key=lambda r: r["wall"])
        walls = [r["wall"] for r in plain[command]]
        wall = min(walls)
        summary[command] = {"wall_best": wall, "walls": walls, "probe_wall_best": best["wall"], "phases": best["seconds"],
                            "imported": best["imported"], "exit": plain[command][walls.index(wall)]["code"]}
        print(f"\n== {command}: best of {len(walls)} = {wall:.2f} s wall (exit {summary[command]['exit']}); "
              f"with the phase probe {best['wall']:.2f} s; heavy modules imported: {', '.join(best['imported']) or 'none'}")
        print(f"{'phase (best probe)':<66} {'seconds':>8} {'share':>6}")
        for name, seconds in sorted(best["seconds"].items(), key=lambda kv: -kv[1]):
            print(f"{name:<66} {seconds:8.2f} {seconds / best['wall']:6.1%}")
        if command in ("sync", "edit"):
            steps, overhead = sync_split(best["seconds"])
            print(f"{'(core steps together)':<66} {steps:8.2f}")
            print(f"{'(Dagster job execution overhead: run_sync minus steps, db, defs, instance)':<66} {overhead:8.2f}")
            summary[command]["core_steps"] = steps
            summary[command]["dagster_overhead"] = overhead
            if command == "sync":
                print(f"target no-op sync <= 3 s: {'met' if wall <= 3 else 'not met'} ({wall:.2f} s)")
            else:
                print("(a model load inside a step is counted in that step as well: phases nest here)")
        else:
            load = next((v for k, v in best["seconds"].items() if k.startswith("model load")), 0.0)
            beyond = best["wall"] - load  # both from the same probe run
            summary[command]["beyond_model_load"] = beyond
            print(f"search beyond the model load: {beyond:.2f} s; target <= 1.5 s: {'met' if beyond <= 1.5 else 'not met'}")
        if baseline.get(command):
            base = min(baseline[command])
            summary[command]["baseline_wall_best"] = base
            print(f"baseline (same config and database, other tree): best {base:.2f} s; "
                  f"current / baseline = {wall / base:.2f}")
    return summary


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--probe", choices=("sync", "search"), help=argparse.SUPPRESS)
    parser.add_argument("--config", type=Path, help="an already synced config (default: a temp copy of the demo)")
    parser.add_argument("--repeat", type=int, default=2, help="runs of each command (best is reported)")
    parser.add_argument("--baseline-ref", help="git ref to compare with, run in alternation (e.g. main)")
    parser.add_argument("--json", type=Path, help="also write the figures as JSON here")
    parser.add_argument("--edit", action="store_true",
                        help=f"also time a sync after one section of {EDITED} changed (a new sentence each run)")
    parser.add_argument("--broken-files", action="store_true",
                        help="add a truncated PDF and an unknown file type to the demo copy (refused by the parser)")
    args = parser.parse_args()
    if args.probe:
        print(json.dumps(probe(args.probe, str(args.config))))
        from rag_pipeline.cli.main import exit_now

        exit_now(0)  # leave as the console script does
    if args.config and args.baseline_ref:
        parser.error("--baseline-ref needs its own demo copy: leave out --config (schemas may differ between trees)")
    work = Path(tempfile.mkdtemp(prefix="rag-bench-startup-"))
    try:
        with baseline_tree(args.baseline_ref) as base:
            config = args.config.resolve() if args.config else prepare_demo(work / "current", broken=args.broken_files)
            base_config = prepare_demo(work / "baseline", base, args.broken_files) if base is not None else None
            commands = ("sync", "search", "edit") if args.edit else ("sync", "search")
            runs: dict[str, list[dict[str, Any]]] = {c: [] for c in commands}
            plain: dict[str, list[dict[str, Any]]] = {c: [] for c in commands}
            baseline: dict[str, list[float]] = {c: [] for c in commands}
            revision = 0
            for _ in range(args.repeat):
                for command in commands:
                    for tree, into, which in ((ROOT, runs, config), (ROOT, plain, config), (base, baseline, base_config)):
                        if tree is None:
                            continue
                        if command == "edit":
                            revision += 1
                            edit_one_section(which, revision)
                        result = run_probe(tree, command, which, plain=into is plain)
                        into[command].append(result["wall"] if into is baseline else result)
        load = os.getloadavg()
        summary = report(runs, plain, baseline)
        print(f"\nload average at the end: {load[0]:.1f} (2 cores: above 2 every figure is inflated)")
        if args.json:
            args.json.write_text(json.dumps({**summary, "loadavg": load}, indent=2))
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()

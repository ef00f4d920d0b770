"""The parse step with a pool of parsers sized to the machine against one parser process.

Runs the real parse step (`parse.parse_items`: blob reads, parsing in worker processes,
redaction, paragraph digests, one transaction per document) on a folder, from cold parsers as a
sync starts them, once with `parse_workers: 1` (the baseline, the former single parser) and
once with `parse_workers: auto`, in alternating rounds; best of the rounds counts. Prints
seconds, files/s, the parsers that worked side by side, their peak memory together, and the
ratio. A small folder (the demo's 7 documents) shows what the pool costs a small sync: it
should start one parser and take as long as the baseline.

    python bench/bench_parse_pool.py                  # demo + shared corpus <= 1 MB, and the demo alone
    python bench/bench_parse_pool.py --rounds 3 --json /tmp/parse_pool.json
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("UNSTRUCTURED_DISABLE_NOTICE", "1")

from bench_sync import ROOT, bench_config, build_default_folder

from rag_pipeline import store
from rag_pipeline.config import Config
from rag_pipeline.embedding import load_embedder
from rag_pipeline.parsing.pool import ParsePool, machine_workers
from rag_pipeline.sync import parse, plan
from rag_pipeline.sync.context import SyncContext, prepare_database


def parser_peak_mib() -> float:
    """Peak resident memory of the live parser processes together (VmHWM), MiB."""
    total = 0
    for child in multiprocessing.active_children():
        if child.name != "rag-parse-worker":
            continue
        try:
            with open(f"/proc/{child.pid}/status", encoding="ascii") as handle:
                total += next(int(line.split()[1]) for line in handle if line.startswith("VmHWM:"))
        except (OSError, StopIteration):
            pass
    return total / 1024


def timed_parse(config: Config, url: str, run_id: str, model_id: int) -> dict[str, float]:
    """Plan a fresh run, then time its parse step from cold parsers; the run is dropped after."""
    ctx = SyncContext(config, url, run_id)
    plan.plan_run(ctx, model_id, allow_mass_tombstone=True)
    peak = [0.0]

    class MeasuredPool(ParsePool):  # reads the parsers' memory before the step closes them
        def close(self) -> None:
            peak[0] = parser_peak_mib()
            super().close()

    with MeasuredPool(config.limits, config.parse_workers) as pool:
        started = time.perf_counter()
        result = parse.parse_items(ctx, pool=pool)
        seconds = time.perf_counter() - started
    with ctx.connect() as conn:
        store.runs.fail_run(conn, run_id, status="failed", reason="benchmark: parse step only")
    return {"seconds": seconds, "files": result.counts.get("parsed", 0) + result.counts.get("quarantined", 0),
            "parsers": result.parsers, "parser_peak_mib": peak[0]}


def compare(name: str, docs: Path, work: Path, rounds: int, model_id_for) -> dict:
    base = bench_config(work, docs)
    url = prepare_database(base)
    model_id = model_id_for(base, url)
    settings = {"one parser": 1, "pool (auto)": None}
    best: dict[str, dict] = {}
    for round_no in range(rounds):
        for label, workers in (settings.items() if round_no % 2 == 0 else reversed(settings.items())):
            config = base.model_copy(update={"parse_workers": workers})
            figures = timed_parse(config, url, f"{name}-{label.split()[0]}-{round_no}", model_id)
            print(f"  {name}, round {round_no + 1}, {label}: {figures['seconds']:.2f} s, "
                  f"{figures['parsers']} parser(s)", flush=True)
            if label not in best or figures["seconds"] < best[label]["seconds"]:
                best[label] = figures
    ratio = best["pool (auto)"]["seconds"] / best["one parser"]["seconds"]
    return {"folder": name, "best": best, "pool_over_one": ratio}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=2, help="rounds per setting, alternating (best counts)")
    parser.add_argument("--max-mb", type=float, default=1.0, help="corpus files larger than this are left out")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="rag-bench-parse-pool-"))
    work.chmod(0o755)
    embedder = load_embedder()  # only its identity is registered: parsing needs no model

    def model_id_for(config: Config, url: str) -> int:
        with SyncContext(config, url, "bench-model").connect() as conn:
            return store.models.register_model(conn, embedder.identity.to_dict())

    print(f"machine: {len(os.sched_getaffinity(0))} usable cores; parse_workers auto = {machine_workers()}")
    try:
        results = [
            compare("corpus", build_default_folder(work / "corpus", int(args.max_mb * 1e6)), work / "a", args.rounds, model_id_for),
            compare("demo", shutil.copytree(ROOT / "demo" / "docs", work / "demo"), work / "b", args.rounds, model_id_for),
        ]
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print()
    print("| folder | files | one parser s | pool s | parsers | pool / one | parser memory one / pool MiB |")
    print("|---|---:|---:|---:|---:|---:|---|")
    for r in results:
        one, pool = r["best"]["one parser"], r["best"]["pool (auto)"]
        print(f"| {r['folder']} | {one['files']} | {one['seconds']:.2f} | {pool['seconds']:.2f} | {pool['parsers']} | "
              f"{r['pool_over_one']:.2f}x | {one['parser_peak_mib']:.0f} / {pool['parser_peak_mib']:.0f} |")
    if args.json:
        args.json.write_text(json.dumps({"machine_workers": machine_workers(), "results": results}, indent=2))


if __name__ == "__main__":
    main()

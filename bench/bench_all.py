"""Every figure of issue 12 in one command: runs the figure-producing benchmarks one after the
other (never two at once: they would time each other), collects their JSON and prints one
table (figure, value, target, met) plus a combined JSON.

    python bench/bench_all.py --quick                 # small sizes, ~15 min here: shows the suite works
    python bench/bench_all.py --json /tmp/all.json    # the issue's sizes (hours on 2 cores)
    python bench/bench_all.py --only memory,stage     # some benchmarks only

Each benchmark's own output goes to OUT/<name>.log and its figures to OUT/<name>.json (OUT:
--out, default a new temporary folder, printed). A benchmark that fails or is not available
(the LangChain peer needs bench/peer's environment) is reported as such; the others still run.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent


@dataclass(frozen=True)
class Bench:
    name: str
    script: str
    full: tuple[str, ...]
    quick: tuple[str, ...]
    figures: Callable[[dict[str, Any]], list[dict[str, Any]]]


def figure(name: str, value: Any, target: str = "", met: bool | None = None, note: str = "") -> dict[str, Any]:
    return {"figure": name, "value": value, "target": target, "met": met, "note": note}


def _encode(data: dict) -> list[dict]:
    methods = data["methods"]
    rows = [figure("encoding: backend chosen by auto", data["auto_choice"], "fastest within the fp32 identity")]
    for name, m in methods.items():
        rows.append(figure(f"encoding: {name} (texts/s)", m["texts_per_s"], "",
                           None, f"min cos {m['min_cosine']:.6f}, fp32 identity {'yes' if m['fp32_identity'] else 'no'}"))
    rows.append(figure("encoding: ONNX / torch fp32 speed", data["ratios"]["onnx_vs_torch_fp32"]))
    rows.append(figure("encoding: bf16 / fp32 speed", data["ratios"]["bf16_vs_fp32"], "",
                       None, f"native bf16: {data['native_bf16']}"))
    rows.append(figure("encoding: token-length batches / sentence-transformers", data["ratios"]["token_batches_vs_sentence_transformers"]))
    return rows


def _startup(data: dict) -> list[dict]:
    sync, search = data["sync"], data["search"]
    return [
        figure("start-up: no-op sync of the demo (s)", round(sync["wall_best"], 2), "<= 3 s", sync["wall_best"] <= 3,
               f"core steps {sync.get('core_steps', 0):.2f} s, Dagster overhead {sync.get('dagster_overhead', 0):.2f} s"),
        figure("start-up: one search beyond the model load (s)", round(search["beyond_model_load"], 2), "<= 1.5 s",
               search["beyond_model_load"] <= 1.5, f"wall {search['wall_best']:.2f} s"),
    ] + ([figure("start-up: sync after a one-section edit of the demo (s)", round(data["edit"]["wall_best"], 2), "",
                 None, f"core steps {data['edit'].get('core_steps', 0):.2f} s (the model load inside them)")]
         if "edit" in data else [])


def _search(data: list[dict]) -> list[dict]:
    rows = []
    for r in data:
        size = f"{r['chunks']:,} chunks"
        p95 = r["latency_ms"]["all"]["hybrid+rerank"]["p95"]
        target = 50 if r["chunks"] <= 100_000 else 150
        rows.append(figure(f"search: hybrid+rerank p95 as reader ({size})", p95, f"<= {target} ms", p95 <= target))
        for label, found in (r.get("recall_at_10") or {}).items():
            rows.append(figure(f"search: full-text recall@10 vs exact BM25, {label} ({size})", round(found["fulltext"], 3),
                               ">= 0.99", found["fulltext"] >= 0.99))
            rows.append(figure(f"search: vector recall@10 vs exact, {label} ({size})", round(found["vector"], 3),
                               ">= 0.95", found["vector"] >= 0.95))
    return rows


def _memory(data: dict) -> list[dict]:
    s, results = data["summary"], data["results"]
    small, large = results[0], results[-1]
    rows = [figure(f"memory: peak RSS {large['documents']:,} / {small['documents']:,} documents", s["peak_rss_ratio"], "<= 1.3",
                   s["peak_rss_ratio_met"], f"{large['peak_rss_mib']:.0f} MiB vs {small['peak_rss_mib']:.0f} MiB")]
    for r in results:
        rows.append(figure(f"incremental: no-op re-sync / initial, {r['documents']:,} documents (core steps)", r["noop_share"],
                           "<= 0.02", r["noop_share"] <= 0.02, f"{r['noop_s']:.2f} s vs {r['initial_s']:.1f} s"))
        rows.append(figure(f"incremental: texts encoded by the no-op, {r['documents']:,} documents", r["encoded_noop"], "0",
                           r["encoded_noop"] == 0))
    return rows


def _stage(data: dict) -> list[dict]:
    return [figure(f"writes: COPY / row INSERT speed, {r['chunks_per_document']} chunks per document", r["copy_speedup"], "> 1",
                   r["copy_speedup"] > 1, f"{r['copy_rows_per_s']:.0f} vs {r['insert_rows_per_s']:.0f} rows/s")
            for r in data["results"]]


def _parse_pool(data: dict) -> list[dict]:
    rows = []
    for r in data["results"]:
        one, pool = r["best"]["one parser"], r["best"]["pool (auto)"]
        small = r["folder"] == "demo"  # a small sync must not pay for the pool: one parser, the same time
        rows.append(figure(f"parsing: pool of parsers / one parser, {r['folder']} ({one['files']} files)",
                           round(r["pool_over_one"], 2), "~1 (one parser started)" if small else "< 1",
                           pool["parsers"] == 1 if small else r["pool_over_one"] < 1,
                           f"{pool['seconds']:.1f} s vs {one['seconds']:.1f} s, {pool['parsers']} of "
                           f"{data['machine_workers']} parsers, {pool['parser_peak_mib']:.0f} vs {one['parser_peak_mib']:.0f} MiB"))
    return rows


def _peer(data: dict) -> list[dict]:
    rows, derived, scenarios = [], data.get("derived", {}), data["scenarios"]
    if "initial_share_of_raw" in derived:
        rows.append(figure("ingestion: initial sync / raw encoding rate", round(derived["initial_share_of_raw"], 3), ">= 0.75",
                           derived["initial_share_of_raw"] >= 0.75, "whole CLI process, model load included"))
    for name, row in scenarios.items():
        p, q = row["project"], row["peer"]
        rows.append(figure(f"peer, {data['docs']} documents, {name}: project / LangChain wall", round(p["wall_s"] / q["wall_s"], 2),
                           "", None, f"{p['wall_s']:.1f} s vs {q['wall_s']:.1f} s; encoded {p['texts_encoded']} vs {q['texts_encoded']}"))
    if "no-op" in scenarios:
        noop, initial = scenarios["no-op"]["project"], scenarios["initial"]["project"]
        rows.append(figure(f"incremental: CLI no-op / initial, {data['docs']} documents", round(noop["wall_s"] / initial["wall_s"], 4),
                           "<= 0.02", noop["wall_s"] / initial["wall_s"] <= 0.02, "whole CLI process"))
        rows.append(figure("incremental: texts encoded by a CLI no-op", noop["texts_encoded"], "0", noop["texts_encoded"] == 0))
    if "edit one section" in scenarios:
        edit = scenarios["edit one section"]["project"]
        changed = edit.get("changed_chunks") or 0
        rows.append(figure("incremental: texts encoded by a one-section edit", edit["texts_encoded"], f"<= {changed} (changed chunks)",
                           edit["texts_encoded"] <= changed))
    return rows


BENCHES = [
    Bench("encode", "bench_encode.py", (), ("--texts", "120", "--bf16-texts", "16"), _encode),
    Bench("startup", "bench_startup.py", ("--edit",), ("--repeat", "1", "--edit"), _startup),
    Bench("stage", "bench_stage.py", (), ("--docs", "50", "--rounds", "1"), _stage),
    Bench("parse_pool", "bench_parse_pool.py", ("--rounds", "3"), ("--rounds", "1"), _parse_pool),
    Bench("memory", "bench_memory.py", ("--docs", "1000", "10000", "--sections", "1"),
          ("--docs", "100", "1000", "--sections", "0"), _memory),
    Bench("search", "bench_search_scale.py", ("--chunks", "10000,100000,1000000"), ("--chunks", "10000", "--queries", "20"), _search),
    Bench("peer", "bench_peer.py", ("--docs", "1000"), ("--docs", "30", "--sections", "1"), _peer),
]


def run_bench(bench: Bench, quick: bool, out: Path) -> dict[str, Any]:
    """Run one benchmark as a child process with --json; its figures, or why there are none."""
    script = BENCH / bench.script
    result: dict[str, Any] = {"bench": bench.name, "args": list(bench.quick if quick else bench.full)}
    if not script.exists():
        return {**result, "status": "not available", "reason": f"{script.name} is not in this tree"}
    json_path, log_path = out / f"{bench.name}.json", out / f"{bench.name}.log"
    args = list(result["args"])
    if bench.name == "search" and quick:  # its own scratch database: never rebuild the 200,000-chunk one
        args += ["--pgdata", str(out / "search-pgdata")]
    started = time.perf_counter()
    print(f"== {bench.name}: {script.name} {' '.join(args)} (log {log_path})", flush=True)
    with log_path.open("w") as log:
        code = subprocess.run([sys.executable, str(script), *args, "--json", str(json_path)],
                              stdout=log, stderr=subprocess.STDOUT, cwd=ROOT, check=False).returncode
    result["wall_s"] = round(time.perf_counter() - started, 1)
    if code != 0 or not json_path.exists():
        tail = log_path.read_text(errors="replace").strip().splitlines()[-3:]
        return {**result, "status": "failed", "reason": f"exit {code}: " + " | ".join(tail)}
    data = json.loads(json_path.read_text())
    try:
        figures = bench.figures(data)
    except (KeyError, TypeError, ValueError, StopIteration) as exc:  # a bench changed its JSON
        return {**result, "status": "failed", "reason": f"unexpected JSON ({exc!r})", "data": data}
    return {**result, "status": "ok", "figures": figures, "data": data}


def print_table(results: list[dict[str, Any]]) -> None:
    rows = [(f["figure"], f["value"], f["target"], {True: "met", False: "NOT met", None: "-"}[f["met"]], f["note"])
            for r in results if r["status"] == "ok" for f in r["figures"]]
    rows += [(f"{r['bench']}: {r['status']}", "", "", "-", r["reason"]) for r in results if r["status"] != "ok"]
    print("\n| figure | value | target | met | note |\n|---|---:|---|---|---|")
    for name, value, target, met, note in rows:
        print(f"| {name} | {value} | {target} | {met} | {note} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes: shows every bench runs, not the issue's figures")
    parser.add_argument("--only", help="comma-separated: " + ",".join(b.name for b in BENCHES))
    parser.add_argument("--out", type=Path, help="folder for each bench's log and JSON (default: a new temporary one)")
    parser.add_argument("--json", type=Path, help="also write the combined figures here (default: OUT/all.json)")
    args = parser.parse_args()
    chosen = [b for b in BENCHES if not args.only or b.name in args.only.split(",")]
    if args.only and (unknown := set(args.only.split(",")) - {b.name for b in BENCHES}):
        parser.error(f"unknown bench {', '.join(sorted(unknown))}")
    out = (args.out or Path(tempfile.mkdtemp(prefix="rag-bench-all-"))).resolve()
    out.mkdir(parents=True, exist_ok=True)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("UNSTRUCTURED_DISABLE_NOTICE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    load_start = os.getloadavg()
    results = []
    for bench in chosen:
        results.append(run_bench(bench, args.quick, out))
        print(f"   {results[-1]['status']} in {results[-1].get('wall_s', 0)} s", flush=True)
    print_table(results)
    combined = {"quick": args.quick, "load_average_start": load_start, "load_average_end": os.getloadavg(),
                "cores": os.cpu_count(), "benches": results}
    target = args.json or out / "all.json"
    target.write_text(json.dumps(combined, indent=2, default=str))
    print(f"\nload average {load_start[0]:.1f} -> {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores; "
          f"combined JSON: {target}; logs: {out}")


if __name__ == "__main__":
    main()

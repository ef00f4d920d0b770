"""Memory of a sync against corpus size: peak RSS at 1,000 and 10,000 documents (issue 12, item 5).

For each size, writes a generated Markdown corpus (bench/generated_corpus.py, real SciFact text)
and syncs it in a fresh child process through the core steps the Dagster job runs (plan, parse,
clean, chunk, embed, stage, gate, publish; bench_sync.timed_run), into a fresh embedded
database. The child reports its peak resident memory (ru_maxrss) after setup (database start,
model load) and after the sync, the parse worker's peak, and seconds per step; then it syncs the
unchanged folder again (no-op: wall time as a share of the initial sync, texts encoded).

Targets: peak RSS at the largest size <= 1.3x that at the smallest; a no-op re-sync <= 2% of the
initial sync with 0 texts encoded.

    python bench/bench_memory.py                          # 1,000 and 10,000 documents (~30 min here)
    python bench/bench_memory.py --docs 200 2000 --json /tmp/memory.json
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

RSS_TARGET = 1.3
NOOP_TARGET = 0.02


def _mib(kib: int) -> float:
    return round(kib / 1024, 1)


def child(corpus: Path, work: Path) -> dict:
    """One initial sync and one no-op re-sync of `corpus`, in this (fresh) process."""
    from bench_sync import bench_config, timed_run

    from rag_pipeline import store
    from rag_pipeline.embedding import load_embedder
    from rag_pipeline.sync.context import SyncContext, prepare_database

    config = bench_config(work, corpus)
    started = time.perf_counter()
    url = prepare_database(config)
    embedder = load_embedder()
    setup_s = time.perf_counter() - started
    rss_setup = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    with SyncContext(config, url, "mem-1").connect() as conn:
        model_id = store.models.register_model(conn, embedder.identity.to_dict())
    initial = timed_run(SyncContext(config, url, "mem-1"), embedder, model_id)
    rss_sync = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    noop = timed_run(SyncContext(config, url, "mem-2"), embedder, model_id)
    with SyncContext(config, url, "mem-1").connect() as conn:
        first, second = store.runs.get_run(conn, "mem-1"), store.runs.get_run(conn, "mem-2")
        chunks = conn.execute("SELECT count(*) FROM chunks").fetchone()[0]
    return {
        "documents": first["counts"]["plan"].get("new", 0),
        "chunks": chunks,
        "setup_s": round(setup_s, 2),
        "initial_s": round(sum(initial.values()), 2),
        "initial_steps_s": {k: round(v, 2) for k, v in initial.items()},
        "encoded_initial": (first["counts"].get("embed") or {}).get("embedded", 0),
        "noop_s": round(sum(noop.values()), 2),
        "noop_steps_s": {k: round(v, 2) for k, v in noop.items()},
        "encoded_noop": (second["counts"].get("embed") or {}).get("embedded", 0),
        "rss_after_setup_mib": _mib(rss_setup),
        "peak_rss_initial_mib": _mib(rss_sync),
        "peak_rss_mib": _mib(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss),
        "parse_worker_peak_rss_mib": _mib(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss),
    }


def measure(docs: int, sections: int, keep: Path | None) -> dict:
    """Write the corpus, sync it in a child process, return the child's figures."""
    from generated_corpus import write_corpus

    work = Path(tempfile.mkdtemp(prefix=f"rag-bench-memory-{docs}-", dir=keep))
    work.chmod(0o755)
    try:
        corpus = work / "docs"
        write_corpus(corpus, docs, sections)
        (corpus / "_access.yaml").write_text("groups: [all-staff]\n")
        out = work / "figures.json"
        started = time.perf_counter()
        subprocess.run([sys.executable, __file__, "--child", str(corpus), str(work / "run"), str(out)], check=True)
        figures = json.loads(out.read_text())
        figures["child_wall_s"] = round(time.perf_counter() - started, 1)
        figures["noop_share"] = round(figures["noop_s"] / figures["initial_s"], 4) if figures["initial_s"] else None
        figures["load_average"] = [round(x, 2) for x in os.getloadavg()]
        return figures
    finally:
        if keep is None:
            shutil.rmtree(work, ignore_errors=True)


def summary(results: list[dict]) -> dict:
    """The ratios against the smallest size, with the targets."""
    small, large = results[0], results[-1]
    ratio = large["peak_rss_mib"] / small["peak_rss_mib"]
    growth = (large["peak_rss_mib"] - large["rss_after_setup_mib"]) / max(small["peak_rss_mib"] - small["rss_after_setup_mib"], 1)
    return {
        "sizes": [r["documents"] for r in results],
        "peak_rss_ratio": round(ratio, 3),
        "peak_rss_ratio_target": RSS_TARGET,
        "peak_rss_ratio_met": ratio <= RSS_TARGET,
        "sync_rss_above_setup_ratio": round(growth, 3),
        "noop_share": {str(r["documents"]): r["noop_share"] for r in results},
        "noop_share_target": NOOP_TARGET,
        "noop_share_met": all(r["noop_share"] is not None and r["noop_share"] <= NOOP_TARGET for r in results),
        "noop_encoded": {str(r["documents"]): r["encoded_noop"] for r in results},
        "noop_encoded_met": all(r["encoded_noop"] == 0 for r in results),
    }


def report(results: list[dict], ratios: dict) -> None:
    print(f"{'documents':>9} {'chunks':>7} {'initial s':>9} {'chunks/s':>8} {'no-op s':>7} {'no-op %':>7} "
          f"{'encoded':>7} {'RSS setup':>9} {'RSS peak':>8} {'worker':>7}")
    for r in results:
        print(f"{r['documents']:>9} {r['chunks']:>7} {r['initial_s']:>9.1f} {r['chunks'] / r['initial_s']:>8.1f} "
              f"{r['noop_s']:>7.2f} {r['noop_share']:>7.2%} {r['encoded_noop']:>7} {r['rss_after_setup_mib']:>8.0f}M "
              f"{r['peak_rss_mib']:>7.0f}M {r['parse_worker_peak_rss_mib']:>6.0f}M")
    for r in results:
        print(f"  {r['documents']} documents, seconds per step: "
              + ", ".join(f"{k} {v:.1f}" for k, v in r["initial_steps_s"].items())
              + f"; load average after {r['load_average']}")
    met = "met" if ratios["peak_rss_ratio_met"] else "NOT met"
    print(f"peak RSS {ratios['sizes'][-1]} / {ratios['sizes'][0]} documents = {ratios['peak_rss_ratio']:.2f}x "
          f"(target <= {RSS_TARGET}: {met}); growth above setup {ratios['sync_rss_above_setup_ratio']:.2f}x")
    print(f"no-op re-sync share of the initial: {ratios['noop_share']} (target <= {NOOP_TARGET:.0%}: "
          f"{'met' if ratios['noop_share_met'] else 'NOT met'}); texts encoded {ratios['noop_encoded']}")


def main() -> None:
    if len(sys.argv) == 5 and sys.argv[1] == "--child":
        figures = child(Path(sys.argv[2]), Path(sys.argv[3]))
        Path(sys.argv[4]).write_text(json.dumps(figures))
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, nargs="+", default=[1000, 10000], help="corpus sizes, smallest first")
    parser.add_argument("--sections", type=int, default=1, help="sections per generated document")
    parser.add_argument("--json", type=Path, help="write the figures here")
    parser.add_argument("--keep", type=Path, help="keep corpora and state under this folder")
    args = parser.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("UNSTRUCTURED_DISABLE_NOTICE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    results = []
    for docs in sorted(args.docs):
        results.append(measure(docs, args.sections, args.keep))
        print(f"{docs} documents: {json.dumps(results[-1])}", flush=True)
    ratios = summary(results)
    report(results, ratios)
    if args.json:
        args.json.write_text(json.dumps({"bench": "memory", "results": results, "summary": ratios}, indent=2))


if __name__ == "__main__":
    main()

"""Side by side with the peer: the same generated corpus and scenarios through `rag-pipeline sync`
and through LangChain's `index()` + `SQLRecordManager` + langchain-postgres `PGVector`.

Scenarios, in order, each side starting from an empty index: initial sync, no-op re-sync, one
edited section (bench/generated_corpus.py edit_one_section), ten deleted files
(delete_documents). Both sides run the scenario on the same folder, one after the other, so
they see the same bytes and the same machine load. Each side is a fresh process per scenario,
as a user runs it: the project's CLI (`python -m rag_pipeline.cli.main sync --config ... --json`
from the project's environment) and the peer's script (bench/peer/langchain_peer.py in the peer's
own environment, bench/.peer-venv from bench/peer/setup_peer_env.sh). Same model (the packaged
all-MiniLM-L6-v2, CPU), same PostgreSQL server (the project's embedded server, started before
either side is timed), separate databases.

Per scenario: wall seconds of each side's process, project / peer, and texts encoded (the
project's run counts `embed.embedded`; the peer's every text given to embed_documents). Also,
measured in the same run: the model's raw encoding rate on the project's own chunk inputs
(the project's Embedder over every chunk's encoded text after the initial sync), the initial
sync's chunks/s as a share of it (target >= 0.75), the no-op's share of the initial wall
(target <= 2%) and texts encoded (target 0), the edit's texts encoded against the chunks whose
text changed, and where a no-op CLI invocation's time goes (bench/bench_startup.py's probe, one
more no-op run). Figures only; nothing is asserted.

    bash bench/peer/setup_peer_env.sh           # once: the peer's environment
    python bench/bench_peer.py                  # 200 documents x 3 sections; `make bench-peer`
    python bench/bench_peer.py --docs 1000 --json /tmp/peer.json
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
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("UNSTRUCTURED_DISABLE_NOTICE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import generated_corpus
from bench_startup import run_probe, sync_split

ROOT = Path(__file__).resolve().parent.parent
PEER_PYTHON = ROOT / "bench" / ".peer-venv" / "bin" / "python"
PEER_SCRIPT = ROOT / "bench" / "peer" / "langchain_peer.py"
PEER_DB = "peer_bench"
SOURCE = "generated"
TIMEOUT = 4 * 3600

SCENARIOS: list[tuple[str, Callable[[Path], object] | None]] = [
    ("initial", None),
    ("no-op", None),
    ("edit one section", generated_corpus.edit_one_section),
    ("delete ten files", generated_corpus.delete_documents),
]


def child_env() -> dict[str, str]:
    """The project tree first on the path; the config's state folder holds Dagster's instance."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1", "UNSTRUCTURED_DISABLE_NOTICE": "1",
           "TOKENIZERS_PARALLELISM": "false"}
    env.pop("DAGSTER_HOME", None)
    return env


def cli(*args: str, timeout: float = TIMEOUT) -> tuple[float, subprocess.CompletedProcess]:
    """One `rag-pipeline` invocation in a fresh process; (wall seconds, result)."""
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "rag_pipeline.cli.main", *args], capture_output=True, text=True,
                          env=child_env(), cwd=ROOT, timeout=timeout, check=False)
    return time.perf_counter() - started, done


def write_config(work: Path, corpus: Path) -> Path:
    """A folder source over the corpus, visible to one group; no evaluation set (the gate runs
    its structural checks only), its own state folder and embedded server. The tombstone guard
    is lifted so a small --docs can still delete ten files (its check costs the same)."""
    config = work / "rag_pipeline.yaml"
    config.write_text(json.dumps({
        "state_dir": str(work / "state"),
        "sources": [{"name": SOURCE, "kind": "filesystem", "path": str(corpus), "default_groups": ["all-staff"],
                     "max_tombstone_share": 1.0}],
    }, indent=2), encoding="utf-8")
    return config


def start_server(config: Path) -> tuple[str, str]:
    """Start the project's embedded server (untimed, so neither side pays for it); return the
    project's URL and a fresh database of the peer's own on the same server."""
    from psycopg.conninfo import conninfo_to_dict

    from rag_pipeline.store import database

    for args in (("db", "start"), ("db", "url")):
        _, done = cli(*args, "--config", str(config), timeout=600)
        if done.returncode:
            raise SystemExit(f"rag-pipeline {' '.join(args)} failed:\n{done.stderr[-3000:]}")
    url = done.stdout.strip().splitlines()[-1]
    params = conninfo_to_dict(url)
    params["dbname"] = PEER_DB
    peer_url = database._as_url(params)
    with database.connect(url) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {PEER_DB}")
        conn.execute(f"CREATE DATABASE {PEER_DB}")
    return url, peer_url


def project_sync(config: Path) -> dict[str, Any]:
    wall, done = cli("sync", "--config", str(config), "--json")
    try:
        outcome = json.loads(done.stdout)
    except ValueError:
        raise SystemExit(f"rag-pipeline sync failed (exit {done.returncode}):\n{done.stdout[-2000:]}\n"
                         f"{done.stderr[-3000:]}") from None
    if done.returncode:
        raise SystemExit(f"rag-pipeline sync exited {done.returncode}: {outcome.get('status')} {outcome.get('error')}")
    embed = outcome["counts"].get("embed") or {}
    return {"wall_s": wall, "texts_encoded": embed.get("embedded", 0), "reused": embed.get("reused", 0),
            "status": outcome["status"], "job_s": outcome["seconds"], "counts": outcome["counts"]}


def peer_run(corpus: Path, peer_url: str, fresh: bool) -> dict[str, Any]:
    args = [str(PEER_PYTHON), str(PEER_SCRIPT), str(corpus), peer_url] + (["--fresh"] if fresh else [])
    started = time.perf_counter()
    done = subprocess.run(args, capture_output=True, text=True, env={**os.environ, "HF_HUB_OFFLINE": "1",
                          "TOKENIZERS_PARALLELISM": "false"}, timeout=TIMEOUT, check=False)
    wall = time.perf_counter() - started
    if done.returncode:
        raise SystemExit(f"peer failed (exit {done.returncode}):\n{done.stderr[-3000:]}")
    return {"wall_s": wall, **json.loads(done.stdout.strip().splitlines()[-1])}


def live_chunks(url: str) -> int:
    from rag_pipeline import store
    from rag_pipeline.store import database

    with database.connect(url) as conn:
        return store.status.index_status(conn)["sources"].get(SOURCE, {}).get("live_chunks", 0)


def encoded_inputs(url: str) -> list[str]:
    """What the embed step encodes for every live chunk: the stored prefix (identity line,
    section path) and the text."""
    from rag_pipeline.chunking.chunks import section_prefix
    from rag_pipeline.store import database

    with database.connect(url) as conn:
        rows = conn.execute("SELECT c.section_path, c.text, c.search_prefix FROM chunks c"
                            " JOIN document_versions v ON v.id = c.version_id WHERE v.status = 'live'"
                            " ORDER BY c.id").fetchall()
    return [(prefix if prefix is not None else section_prefix(path)) + text for path, text, prefix in rows]


def changed_chunks(url: str, uri: str) -> int:
    """Chunks of the live version of `uri` whose text its previous version did not have: what an
    edit should re-encode at most."""
    from rag_pipeline.store import database

    with database.connect(url) as conn:
        return conn.execute(
            "WITH v AS (SELECT v.id, v.status, v.version_no FROM document_versions v"
            "  JOIN documents d ON d.id = v.document_id WHERE d.source = %s AND d.uri = %s AND v.kind = 'content'),"
            " cur AS (SELECT id, version_no FROM v WHERE status = 'live'),"
            " prev AS (SELECT id FROM v WHERE version_no < (SELECT version_no FROM cur)"
            "  ORDER BY version_no DESC LIMIT 1)"
            " SELECT count(*) FROM chunks c WHERE c.version_id = (SELECT id FROM cur)"
            "  AND c.content_hash NOT IN (SELECT content_hash FROM chunks WHERE version_id = (SELECT id FROM prev))",
            (SOURCE, uri)).fetchone()[0]


def raw_rate(texts: list[str], sample: int = 0) -> dict[str, Any]:
    """The project's Embedder alone over `texts` (model load and backend choice warmed up first);
    `sample` > 0: over that many of them drawn at random (seeded), to save time on a slow machine."""
    import random

    from rag_pipeline.embedding import load_embedder

    if 0 < sample < len(texts):
        texts = random.Random(0).sample(texts, sample)

    embedder = load_embedder()
    embedder.encode(texts[:8])
    started = time.perf_counter()
    embedder.encode(texts)
    seconds = time.perf_counter() - started
    chosen = embedder.encoded_with
    return {"texts": len(texts), "seconds": seconds, "texts_per_s": len(texts) / seconds,
            "backend": getattr(chosen, "backend", None) or str(chosen)}


def noop_breakdown(config: Path) -> dict[str, Any]:
    """Where one more sync CLI invocation's time goes (bench_startup's probe)."""
    probe = run_probe(ROOT, "sync", config)
    return {"wall_s": probe["wall"], "phases": probe["seconds"], "imported": probe["imported"]}


def run(args: argparse.Namespace, work: Path) -> dict[str, Any]:
    corpus = work / "corpus"
    paths = generated_corpus.write_corpus(corpus, args.docs, args.sections, args.seed)
    config = write_config(work, corpus)
    url, peer_url = start_server(config)
    load = [os.getloadavg()]
    print(f"{len(paths)} documents x {args.sections} sections under {corpus}; load average {load[0][0]:.1f}",
          flush=True)
    results: dict[str, Any] = {"docs": args.docs, "sections": args.sections, "seed": args.seed, "scenarios": {}}
    try:
        for name, change in SCENARIOS:
            if change is not None:
                change(corpus)
            project = project_sync(config)
            project["live_chunks"] = live_chunks(url)
            if name == "edit one section":
                project["changed_chunks"] = changed_chunks(url, generated_corpus.document_name(0))
            peer = peer_run(corpus, peer_url, fresh=name == "initial")
            load.append(os.getloadavg())
            results["scenarios"][name] = {"project": project, "peer": peer, "loadavg": load[-1]}
            print(f"{name}: project {project['wall_s']:.1f} s, {project['texts_encoded']} encoded; "
                  f"peer {peer['wall_s']:.1f} s, {peer['texts_encoded']} encoded; load {load[-1][0]:.1f}", flush=True)
            if name == "initial" and not args.no_raw:
                results["raw"] = raw_rate(encoded_inputs(url), args.raw_sample)
                print(f"raw encoding: {results['raw']['texts']} texts in {results['raw']['seconds']:.1f} s", flush=True)
            if name == "no-op":
                results["noop_breakdown"] = noop_breakdown(config)
            if name == "edit one section":
                # one more edit, of a document the next scenario deletes (so the peer, which does
                # not see this edit, ends up with the same index), through the probe
                generated_corpus.edit_one_section(corpus, index=1)
                results["edit_breakdown"] = noop_breakdown(config)
            if args.json:  # figures so far, in case a later scenario fails
                args.json.write_text(json.dumps(results, indent=2, default=str), encoding="utf-8")
    finally:
        cli("db", "stop", "--config", str(config), timeout=600)
    results["loadavg"] = load
    return results


def ratio(a: float, b: float) -> str:
    return f"{a / b:.2f}x" if b else "-"


def report(results: dict[str, Any]) -> dict[str, Any]:
    """Print the table and the targets; return the derived figures."""
    rows = results["scenarios"]
    print(f"\n{results['docs']} documents x {results['sections']} sections; wall = the whole process as a user "
          "runs it (interpreter, imports, model load included)")
    print("| scenario | project s | peer s | project / peer | project encoded | peer encoded | "
          "project live chunks | peer added/updated/skipped/deleted | peer index() s | load |")
    print("|---|---:|---:|---:|---:|---:|---:|---|---:|---:|")
    for name, row in rows.items():
        p, q = row["project"], row["peer"]
        print(f"| {name} | {p['wall_s']:.1f} | {q['wall_s']:.1f} | {ratio(p['wall_s'], q['wall_s'])} | "
              f"{p['texts_encoded']} | {q['texts_encoded']} | {p['live_chunks']} | "
              f"{q['num_added']}/{q['num_updated']}/{q['num_skipped']}/{q['num_deleted']} | {q['index_s']:.1f} | "
              f"{row['loadavg'][0]:.1f} |")
    derived: dict[str, Any] = {}
    initial = rows.get("initial", {}).get("project")
    if initial:
        rate = initial["texts_encoded"] / initial["wall_s"]
        derived["initial_chunks_per_s"] = rate
        print(f"\nproject initial sync: {initial['texts_encoded']} chunks encoded in {initial['wall_s']:.1f} s = "
              f"{rate:.1f} chunks/s; peer {rows['initial']['peer']['texts_encoded']} chunks in "
              f"{rows['initial']['peer']['wall_s']:.1f} s")
        if "raw" in results:
            raw = results["raw"]
            share = rate / raw["texts_per_s"]
            derived["initial_share_of_raw"] = share
            print(f"raw encoding (project Embedder, backend {raw['backend']}, {raw['texts']} of the same inputs): "
                  f"{raw['texts_per_s']:.1f} texts/s; initial sync / raw = {share:.2f} "
                  f"(target >= 0.75: {'met' if share >= 0.75 else 'not met'})")
    noop = rows.get("no-op", {}).get("project")
    if initial and noop:
        share = noop["wall_s"] / initial["wall_s"]
        derived["noop_share_of_initial"] = share
        print(f"no-op / initial wall = {share:.1%} (target <= 2%: {'met' if share <= 0.02 else 'not met'}); "
              f"no-op texts encoded {noop['texts_encoded']} "
              f"(target 0: {'met' if noop['texts_encoded'] == 0 else 'not met'})")
    edit = rows.get("edit one section", {}).get("project")
    if edit:
        changed = edit.get("changed_chunks") or 0
        print(f"edit of one section: {edit['texts_encoded']} encoded, {changed} chunks with changed text "
              f"({'only those' if edit['texts_encoded'] <= changed else 'more than those'})")
    for key, what in (("noop_breakdown", "no-op"), ("edit_breakdown", "one-section edit (of doc 1)")):
        if key not in results:
            continue
        b = results[key]
        print(f"\nwhere one more {what} CLI invocation's time goes ({b['wall_s']:.1f} s wall; heavy modules "
              f"imported: {', '.join(b['imported']) or 'none'}):")
        for phase, seconds in sorted(b["phases"].items(), key=lambda kv: -kv[1]):
            print(f"  {phase:<66} {seconds:7.2f}")
        steps, overhead = sync_split(b["phases"])
        derived[f"{key}_core_steps_s"], derived[f"{key}_dagster_overhead_s"] = steps, overhead
        print(f"  {'(core steps together)':<66} {steps:7.2f}")
        print(f"  {'(Dagster job execution overhead: run_sync minus steps, db, defs, instance)':<66} {overhead:7.2f}")
    loads = [x[0] for x in results["loadavg"]]
    print(f"\nload average (1 min) from {min(loads):.1f} to {max(loads):.1f} on {os.cpu_count()} cores")
    return derived


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, default=200)
    parser.add_argument("--sections", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", type=Path, help="also write every figure as JSON here")
    parser.add_argument("--work", type=Path, help="working folder (default: a temporary one, removed after)")
    parser.add_argument("--no-raw", action="store_true", help="skip the raw encoding baseline")
    parser.add_argument("--raw-sample", type=int, default=0,
                        help="raw encoding over this many of the chunk inputs drawn at random (default: all)")
    parser.add_argument("--report", type=Path, metavar="JSON", help="only print the figures of an earlier --json")
    args = parser.parse_args()
    if args.report:
        report(json.loads(args.report.read_text(encoding="utf-8")))
        return
    if not PEER_PYTHON.exists():
        raise SystemExit(f"{PEER_PYTHON}: the peer's environment is missing; run bash bench/peer/setup_peer_env.sh")
    work = (args.work or Path(tempfile.mkdtemp(prefix="rag-bench-peer-"))).resolve()
    if args.work and work.exists() and any(work.iterdir()):
        raise SystemExit(f"{work}: not empty; give an empty or new folder")
    work.mkdir(parents=True, exist_ok=True)
    try:
        results = run(args, work)
        results["derived"] = report(results)
        if args.json:
            args.json.write_text(json.dumps(results, indent=2, default=str), encoding="utf-8")
    finally:
        if not args.work:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()

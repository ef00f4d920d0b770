"""The UI path against the CLI path: the same first sync of the same folders, once by
`rag-pipeline sync` (the baseline, measured in the same run) and launched through the real
webserver and daemon (GraphQL, what the Launchpad sends): each per-source job `sync_<source>`
one after the other (their sum), and the all-sources `sync` job that `nightly_sync` runs, on
its default executor (steps in one process) and, with --multiprocess, with
RAG_PIPELINE_EXECUTOR=multiprocess (a process per step). The documents are dealt round-robin
into `--sources` folders, one source each. Each path syncs into its own fresh database on one
embedded server, so each does the full work. Target (issue 27): the all-sources run <= 1.2x
the sum of the per-source runs.

    python bench/bench_ui_path.py                     # demo corpus, 2 sources
    python bench/bench_ui_path.py --docs some/folder --sources 3 --multiprocess
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
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "rag_pipeline_tests"))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from dagster_stack import dagster_stack  # noqa: E402

from rag_pipeline.store import database  # noqa: E402


def _fresh_db(server: str, name: str) -> str:
    import psycopg
    from psycopg.conninfo import conninfo_to_dict, make_conninfo

    with psycopg.connect(server, autocommit=True) as admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        admin.execute(f'CREATE DATABASE "{name}"')
    params = conninfo_to_dict(server)
    params["dbname"] = name
    return make_conninfo(**params)


def _config(root: Path, url: str, folders: list[Path], name: str) -> Path:
    path = root / f"{name}.yaml"
    sources = "".join(f"  - {{name: {f.name}, path: {f}}}\n" for f in folders)
    path.write_text(f"database_url: '{url}'\nstate_dir: {root / 'state'}\nsources:\n{sources}")
    return path


def _deal(docs: Path, root: Path, count: int) -> list[Path]:
    """The documents of `docs` dealt round-robin into `count` folders (their relative paths kept)."""
    folders = [root / f"part{i}" for i in range(count)]
    files = sorted(p for p in docs.rglob("*") if p.is_file())
    for n, path in enumerate(files):
        target = folders[n % count] / path.relative_to(docs)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(path, target)
    return folders


def _ui_runs(root: Path, server: str, folders: list[Path], label: str, jobs: list[str], executor: str = "") -> float:
    """Seconds from launch to end of `jobs`, one after the other, on a fresh index."""
    url = _fresh_db(server, f"bench_{label}")
    cfg = _config(root, url, folders, label)
    saved = os.environ.get("RAG_PIPELINE_EXECUTOR")
    os.environ["RAG_PIPELINE_EXECUTOR"] = executor  # what the webserver, daemon and run workers see
    try:
        with dagster_stack(root / f"home_{label}", cfg, database.dagster_url(url)) as stack:
            total = 0.0
            for job in jobs:
                launched = time.monotonic()
                run = stack.wait_finished(stack.launch(job), timeout=3600)
                total += time.monotonic() - launched
                assert run["status"] == "SUCCESS", (label, job, run)
    finally:
        if saved is None:
            os.environ.pop("RAG_PIPELINE_EXECUTOR", None)
        else:
            os.environ["RAG_PIPELINE_EXECUTOR"] = saved
    return total


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--docs", type=Path, default=ROOT / "demo" / "docs")
    parser.add_argument("--sources", type=int, default=2, help="folders (sources) the documents are dealt into")
    parser.add_argument("--multiprocess", action="store_true", help="also time `sync` with a process per step")
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="bench-ui-path-"))
    root.chmod(0o755)
    folders = _deal(args.docs, root, args.sources)
    server = database.embedded_url(root / "pgdata")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("DAGSTER_HOME", None)
    env.pop("DATABASE_URL", None)
    loads = [os.getloadavg()[0]]
    try:
        figures: dict[str, float] = {}
        cli_cfg = _config(root, _fresh_db(server, "bench_cli"), folders, "cli")
        started = time.monotonic()
        done = subprocess.run([sys.executable, "-m", "rag_pipeline.cli.main", "sync", "--config", str(cli_cfg), "--json"],
                              env=env, capture_output=True, text=True, timeout=1800)
        figures["cli"] = time.monotonic() - started
        assert done.returncode == 0, done.stderr[-2000:]
        print(f"cli sync (all sources): {figures['cli']:.1f} s ({json.loads(done.stdout)['status']})", flush=True)
        per_source = [f"sync_{f.name}" for f in folders]
        figures["ui_per_source_sum"] = _ui_runs(root, server, folders, "per_source", per_source)
        figures["ui_sync_all"] = _ui_runs(root, server, folders, "sync_all", ["sync"])
        if args.multiprocess:
            figures["ui_sync_all_multiprocess"] = _ui_runs(root, server, folders, "sync_mp", ["sync"], "multiprocess")
        loads.append(os.getloadavg()[0])
        base = figures["ui_per_source_sum"]
        print(f"\n{len(folders)} sources; load average {loads[0]:.1f} at the start, {loads[-1]:.1f} at the end, "
              f"{os.cpu_count()} CPUs")
        print("| path | seconds | / CLI | / per-source sum |\n| --- | --- | --- | --- |")
        for label, seconds in figures.items():
            print(f"| {label} | {seconds:.1f} | {seconds / figures['cli']:.2f}x | {seconds / base:.2f}x |")
        print(json.dumps({"figures_s": figures, "load": loads}))
    finally:
        database.stop_server(root / "pgdata")
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()

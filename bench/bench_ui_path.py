"""The UI path against the CLI path: the same first sync of the same folder, once by
`rag-pipeline sync` (the baseline, measured in the same run) and once launched through the
real webserver and daemon (GraphQL, what the Launchpad sends), for the per-source job (steps in
one process) and, with --multiprocess, the generic `sync` job (a process per step). Each path
syncs into its own fresh database on one embedded server, so each does the full work.

    python bench/bench_ui_path.py                     # demo corpus
    python bench/bench_ui_path.py --docs some/folder --multiprocess
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


def _config(root: Path, url: str, docs: Path, name: str) -> Path:
    path = root / f"{name}.yaml"
    path.write_text(f"database_url: '{url}'\nstate_dir: {root / 'state'}\nsources:\n  - {{name: docs, path: {docs}}}\n")
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--docs", type=Path, default=ROOT / "demo" / "docs")
    parser.add_argument("--multiprocess", action="store_true", help="also time the generic multiprocess `sync` job")
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="bench-ui-path-"))
    root.chmod(0o755)
    server = database.embedded_url(root / "pgdata")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("DAGSTER_HOME", None)
    env.pop("DATABASE_URL", None)
    try:
        figures: dict[str, float] = {}
        cli_cfg = _config(root, _fresh_db(server, "bench_cli"), args.docs, "cli")
        started = time.monotonic()
        done = subprocess.run([sys.executable, "-m", "rag_pipeline.cli.main", "sync", "--config", str(cli_cfg), "--json"],
                              env=env, capture_output=True, text=True, timeout=1800)
        figures["cli"] = time.monotonic() - started
        assert done.returncode == 0, done.stderr[-2000:]
        print(f"cli sync: {figures['cli']:.1f} s ({json.loads(done.stdout)['status']})", flush=True)
        jobs = [("ui_per_source_job", "sync_docs")] + ([("ui_multiprocess_sync", "sync")] if args.multiprocess else [])
        for label, job in jobs:
            url = _fresh_db(server, f"bench_{label}")
            cfg = _config(root, url, args.docs, label)
            with dagster_stack(root / f"home_{label}", cfg, database.dagster_url(url)) as stack:
                launched = time.monotonic()
                run_id = stack.launch(job)
                run = stack.wait_finished(run_id, timeout=3600)
                figures[label] = time.monotonic() - launched
            print(f"{label}: {figures[label]:.1f} s ({run['status']}), {figures[label] / figures['cli']:.2f}x the CLI", flush=True)
        print(f"load average at the end: {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    finally:
        database.stop_server(root / "pgdata")
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()

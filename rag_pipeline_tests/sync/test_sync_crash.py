"""A sync killed with -9 (or by the out-of-memory killer) must not hold its source: the next
sync proceeds at once, fails the dead run, discards what it staged and deletes its work items
(whose parsed payloads still hold text from before redaction), and the killed sync's parser
process does not outlive it."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

from conftest import DEMO_DIR, PROJECT_ROOT, write_config
from helpers import pathological_markdown, query, sync, wait_until

DEADLINE_SECONDS = 420  # start-up of a sync on a busy 2-core machine, with room to spare


def _children(pid: int) -> set[int]:
    found: set[int] = set()
    for task in Path(f"/proc/{pid}/task").iterdir():
        text = (task / "children").read_text().split()
        found.update(int(c) for c in text)
    return found


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def _wait_for_parsing(proc: subprocess.Popen, db_url: str) -> str:
    """The run id once the sync has parsed some files and is stuck parsing the slow one."""
    def parsing_run() -> str | None:
        assert proc.poll() is None, proc.communicate()
        rows = query(db_url, "SELECT run_id, count(*) FILTER (WHERE stage = 'parsed') FROM run_items GROUP BY run_id")
        return rows[0][0] if rows and rows[0][1] >= 2 else None

    try:
        return wait_until(parsing_run, timeout=DEADLINE_SECONDS, interval=0.5, what="the sync to parse two files")
    except AssertionError:
        proc.kill()
        raise


def test_kill_9_of_a_sync_frees_its_source_at_once_and_the_next_sync_cleans_up(capsys, tmp_path: Path, db_url: str,
                                                                                demo_copy: Path, monkeypatch) -> None:
    monkeypatch.delenv("DAGSTER_HOME", raising=False)
    slow = demo_copy / "it" / "zz-nested.md"  # parsed last, and needs minutes of CPU
    slow.write_bytes(pathological_markdown())
    config = write_config(tmp_path, db_url, docs=demo_copy, eval_set=DEMO_DIR / "eval.yaml",
                          extra="limits: {max_seconds: 900}\n")
    env = {**os.environ, "PYTHONPATH": str(PROJECT_ROOT), "HF_HUB_OFFLINE": "1"}
    env.pop("DAGSTER_HOME", None)
    proc = subprocess.Popen(
        [sys.executable, "-c", "import sys; from rag_pipeline.cli import main; sys.exit(main())",
         "sync", "--config", str(config)],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )
    run_id = _wait_for_parsing(proc, db_url)
    assert query(db_url, "SELECT count(*) FROM run_items WHERE run_id = %s AND parsed IS NOT NULL", run_id)[0][0] >= 2
    workers = _children(proc.pid)
    assert workers, "the sync runs its parser in a child process"
    proc.send_signal(signal.SIGKILL)
    proc.wait()

    slow.unlink()
    code, out = sync(capsys, config)  # at once: no waiting for a timeout or a lease
    assert code == 0, out
    assert out["status"] == "published"
    status, error = query(db_url, "SELECT status, error FROM runs WHERE run_id = %s", run_id)[0]
    assert status == "failed" and "abandoned" in error
    assert query(db_url, "SELECT count(*) FROM run_items") == [(0,)]
    assert query(db_url, "SELECT count(*) FROM document_versions WHERE run_id = %s AND status = 'staged'", run_id) == [(0,)]
    wait_until(lambda: not any(_alive(pid) for pid in workers), timeout=30, interval=0.2,
               what="the killed sync's parser process to end",
               explain=lambda: f"still running: {[pid for pid in workers if _alive(pid)]}")

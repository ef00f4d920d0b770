"""Two syncs of one source at once (a whole-index `rag-pipeline sync` while a one-source run is
under way, which Dagster's per-source queue does not hold back: their rag/source tags differ):
the later one waits for the source, saying for whom, and runs when the first has published;
nothing fails with "source busy". Real processes, real PostgreSQL, the real model."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

from conftest import DEMO_DIR, PROJECT_ROOT, write_config
from helpers import query, wait_until

from rag_pipeline import store
from rag_pipeline.config import load_config
from rag_pipeline.sync import chunk, clean, embed, gate, parse, plan, publish, stage
from rag_pipeline.sync.context import SyncContext

DEADLINE_SECONDS = 420  # start-up of a sync process on a busy 2-core machine, with room to spare


class _Lines(threading.Thread):
    """Collects a pipe's lines as they come, so the test can wait for one."""

    def __init__(self, pipe: Any) -> None:
        super().__init__(daemon=True)
        self.pipe, self.lines = pipe, []

    def run(self) -> None:
        for line in self.pipe:
            self.lines.append(line)

    def wait_for(self, text: str, proc: subprocess.Popen) -> str:
        def first_line() -> str | None:
            found = [line for line in self.lines if text in line]
            if found:
                return found[0]
            assert proc.poll() is None, "".join(self.lines)
            return None

        return wait_until(first_line, timeout=DEADLINE_SECONDS, interval=0.2, what=f"a line with {text!r}",
                          explain=lambda: "".join(self.lines))


def test_a_whole_index_sync_started_during_a_one_source_sync_waits_then_publishes_after_it(
    tmp_path: Path, db_url: str, demo_copy: Path, embedder, monkeypatch
) -> None:
    monkeypatch.delenv("DAGSTER_HOME", raising=False)
    config_path = write_config(tmp_path, db_url, docs=demo_copy, eval_set=DEMO_DIR / "eval.yaml")
    first = SyncContext(config=load_config(config_path), db_url=db_url, run_id="one-source-run")
    with first.connect() as conn:
        model_id = store.models.register_model(conn, embedder.identity.to_dict())
    plan.plan_run(first, model_id, ["larkspur"])  # holds the source until it publishes
    (demo_copy / "policies" / "added-later.md").write_text("# Added later\n\nSeen by the second sync only.\n")

    env = {**os.environ, "PYTHONPATH": str(PROJECT_ROOT), "HF_HUB_OFFLINE": "1"}
    env.pop("DAGSTER_HOME", None)
    second = subprocess.Popen(
        [sys.executable, "-c", "import sys; from rag_pipeline.cli import main; sys.exit(main())",
         "sync", "--config", str(config_path), "--json"],  # the whole index, in process: no queue holds it back
        env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    errors = _Lines(second.stderr)
    errors.start()
    try:
        line = errors.wait_for("waiting for source larkspur held by run one-source-run since", second)
        assert "source_wait_seconds" in line

        parse.parse_items(first)  # the first sync goes on and publishes while the second waits
        clean.clean_items(first)
        chunk.chunk_items(first, embedder)
        embed.embed_items(first, embedder, model_id)
        stage.stage_items(first, model_id)
        assert gate.run_gate(first, embedder).passed
        publish.publish_run(first)

        out, _ = second.communicate(timeout=DEADLINE_SECONDS)
    finally:
        if second.poll() is None:
            second.kill()
    errors.join(10)
    assert second.returncode == 0, "".join(errors.lines)
    outcome = json.loads(out.strip().splitlines()[-1])
    assert outcome["status"] == "published", outcome
    assert outcome["counts"]["plan"]["new"] == 1  # only what changed after the first run listed
    assert "busy" not in "".join(errors.lines)
    (first_status, first_finished), = query(db_url, "SELECT status, finished_at FROM runs WHERE run_id = %s", first.run_id)
    (second_started,), = query(db_url, "SELECT started_at FROM runs WHERE run_id = %s", outcome["run_id"])
    assert first_status == "published" and second_started >= first_finished  # one after the other

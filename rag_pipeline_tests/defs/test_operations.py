"""Operating it for real: the Dagster webserver and daemon started here on loopback, on the
project's dagster.yaml (storage in PostgreSQL beside the index), asked through GraphQL what the
UI shows. One stack for the module; each test waits for its own runs with a bound."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest
from conftest import PROJECT_ROOT, fresh_database
from dagster_stack import DagsterStack, dagster_stack
from helpers import query

from rag_pipeline.store import database

SOURCE, JOB = "docs", "sync_docs"


@pytest.fixture(scope="module")
def ops(pg_server_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[DagsterStack, Path, str]]:
    root = tmp_path_factory.mktemp("ops")
    docs = root / "docs"
    docs.mkdir()
    (docs / "_access.yaml").write_text("groups: [all-staff]\n")
    (docs / "travel.md").write_text("# Travel\n\nTrips abroad are approved by the head of department.\n")
    (docs / "leave.md").write_text("# Leave\n\nEvery employee has 28 days of paid leave a year.\n")
    with fresh_database(pg_server_url) as url:
        config = root / "rag_pipeline.yaml"
        config.write_text(f"database_url: '{url}'\nstate_dir: {root / 'state'}\n"
                          f"sources:\n  - {{name: {SOURCE}, path: {docs}}}\n")
        with dagster_stack(root / "dagster_home", config, database.dagster_url(url)) as stack:
            yield stack, config, url


def _index_status(url: str, run_id: str) -> str | None:
    rows = query(url, "SELECT status FROM runs WHERE run_id = %s", run_id)
    return rows[0][0] if rows else None


def test_cli_and_ui_runs_are_one_history_whatever_the_working_folder(ops, tmp_path: Path) -> None:
    stack, config, url = ops
    env = {k: v for k, v in stack.env.items() if k not in ("DAGSTER_HOME", "DAGSTER_PG_URL")}
    cli = subprocess.run([sys.executable, "-m", "rag_pipeline.cli.main", "sync", "--config", str(config), "--json"],
                         cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert cli.returncode == 0, cli.stderr[-3000:]
    cli_run = __import__("json").loads(cli.stdout)["run_id"]
    ui_run = stack.launch(JOB)
    assert stack.wait_finished(ui_run)["status"] == "SUCCESS"
    runs = {r["runId"]: r for r in stack.runs()}
    # a sync of the only source runs its per-source job: the source's runs list holds CLI syncs too
    assert runs[cli_run]["tags"]["rag/trigger"] == "cli" and runs[cli_run]["tags"]["rag/source"] == SOURCE
    assert runs[cli_run]["jobName"] == runs[ui_run]["jobName"] == JOB
    assert runs[ui_run]["tags"]["rag/trigger"] == "manual" and runs[ui_run]["tags"]["rag/source"] == SOURCE
    assert {_index_status(url, cli_run), _index_status(url, ui_run)} <= {"published", "nothing_to_do"}


def test_two_runs_of_one_source_queue_instead_of_failing(ops) -> None:
    stack, _, url = ops
    (ops[1].parent / "docs" / "new.md").write_text("# New\n\nA new page.\n")
    first, second = stack.launch(JOB), stack.launch(JOB)
    seen_queued_behind = False

    def both_done() -> bool:
        nonlocal seen_queued_behind
        statuses = {r["runId"]: r["status"] for r in stack.runs(runIds=[first, second])}
        active = [s for s in statuses.values() if s in ("STARTING", "STARTED")]
        assert len(active) <= 1, f"two runs of one source ran at once: {statuses}"
        seen_queued_behind |= statuses[second] == "QUEUED" and statuses[first] in ("STARTING", "STARTED")
        return all(s in ("SUCCESS", "FAILURE", "CANCELED") for s in statuses.values())

    stack.wait("both runs of the source", both_done, timeout=900, every=1)
    assert seen_queued_behind
    assert [stack.run(first)["status"], stack.run(second)["status"]] == ["SUCCESS", "SUCCESS"]
    assert _index_status(url, first) == "published" and _index_status(url, second) in ("published", "nothing_to_do")


def test_a_failed_ui_run_is_marked_in_the_index_and_tagged_a_crash(ops) -> None:
    stack, config, url = ops
    access = config.parent / "docs" / "_access.yaml"
    access.write_text("groups: not-a-list\n")  # stops the plan after it registered the run
    try:
        run_id = stack.launch(JOB)
        assert stack.wait_finished(run_id)["status"] == "FAILURE"
    finally:
        access.write_text("groups: [all-staff]\n")
    stack.wait("the failure sensor to mark the run in the index", lambda: _index_status(url, run_id) == "failed", timeout=300)
    assert stack.wait("the outcome tag", lambda: stack.run(run_id)["tags"].get("rag/outcome"), timeout=60) == "crashed"


def test_a_dead_run_worker_is_detected_and_its_source_freed(ops) -> None:
    stack, config, url = ops
    # work for the run (parse, model load, encode): a run with nothing to do ends at its plan step
    (config.parent / "docs" / "expenses.md").write_text("# Expenses\n\nReceipts are handed in within 30 days.\n")
    run_id = stack.launch(JOB)
    stack.wait("the run to claim its source", lambda: _index_status(url, run_id) == "running", timeout=600, every=0.5)
    worker = psutil.Process(stack.wait("the run worker's pid in the run's log", lambda: stack.worker_pid(run_id), timeout=60))
    for proc in [*worker.children(recursive=True), worker]:
        try:
            os.kill(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    assert stack.wait_finished(run_id, timeout=300)["status"] == "FAILURE"  # run monitoring saw the dead worker
    stack.wait("the index to free the source", lambda: _index_status(url, run_id) == "failed", timeout=300)
    # the retry policy relaunches a run whose worker crashed, and it gets the source at once
    retry = stack.wait("the automatic retry", lambda: [r for r in stack.runs() if r["tags"].get("dagster/parent_run_id") == run_id],
                       timeout=300)[0]
    assert stack.wait_finished(retry["runId"])["status"] == "SUCCESS"
    assert _index_status(url, retry["runId"]) in ("published", "nothing_to_do")


def test_the_ui_lists_per_source_jobs_schedules_and_sensors(ops) -> None:
    stack, _, _ = ops
    data = stack.gql("""{ repositoryOrError(repositorySelector: {repositoryLocationName: "rag_pipeline",
        repositoryName: "__repository__"}) { ... on Repository { jobs { name } sensors { name sensorState { status } } } } }""")
    repo = data["repositoryOrError"]
    assert {"sync", JOB} <= {j["name"] for j in repo["jobs"]}
    sensors = {s["name"]: s["sensorState"]["status"] for s in repo["sensors"]}
    assert all(sensors[name] == "RUNNING" for name in ("record_failed_sync_runs", "record_cancelled_sync_runs",
                                                      "reconcile_sync_runs", "alert_on_failed_sync_runs", "source_freshness"))
    assert sensors[f"{JOB}_on_change"] == "STOPPED"  # watch: false in this config
    assert PROJECT_ROOT.joinpath("workspace.yaml").exists()

"""Running the sync job in this process (what `rag-pipeline sync` does): the same Dagster job
the UI runs, on the instance of DAGSTER_HOME when set (so runs show in the UI), else an
ephemeral one."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import dagster as dg

from rag_pipeline import database, store
from rag_pipeline.config import Config
from rag_pipeline.sync.context import prepare_database


@contextmanager
def _progress_bar(enabled: bool) -> Iterator[None]:
    from rag_pipeline.defs.resources import set_progress

    if not enabled:
        yield
        return
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    with Progress(TextColumn("{task.description:<14}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  transient=False) as bar:
        tasks: dict[str, Any] = {}

        def update(step: str, done: int, total: int) -> None:
            if step not in tasks:
                tasks[step] = bar.add_task(step, total=total or None)
            bar.update(tasks[step], completed=done, total=total or None)

        set_progress(update)
        try:
            yield
        finally:
            set_progress(lambda *a: None)


def _instance() -> dg.DagsterInstance:
    return dg.DagsterInstance.get() if os.environ.get("DAGSTER_HOME") else dg.DagsterInstance.ephemeral()


def run_sync(config: Config, sources: list[str], allow_mass_tombstone: bool, show_progress: bool = False) -> dict[str, Any]:
    """Run the job; return the run's outcome as recorded in the index database."""
    from rag_pipeline.definitions import load_definitions

    url = prepare_database(config)  # starts the embedded server once for all steps of this process
    job = load_definitions().resolve_job_def("sync")
    run_config = {
        "ops": {"plan": {"config": {"sources": sources, "allow_mass_tombstone": allow_mass_tombstone}}},
        # the CLI prints its own summary; Dagster's per-event console log stays in the UI/instance
        "loggers": {"console": {"config": {"log_level": "CRITICAL"}}},
    }
    started = time.monotonic()
    with _progress_bar(show_progress):
        result = job.execute_in_process(run_config=run_config, instance=_instance(), raise_on_error=False)
    outcome = _outcome(url, result)
    outcome["seconds"] = round(time.monotonic() - started, 2)
    return outcome


def _outcome(url: str, result: dg.ExecuteInProcessResult) -> dict[str, Any]:
    with database.connect(url) as conn:
        run = store.get_run(conn, result.run_id) or {}
        quarantined = store.run_quarantine(conn, result.run_id)
        status = run.get("status", "failed")
        error = run.get("error")
        if not result.success and status != "gate_failed":  # a step failed (the gate records its own)
            status = "failed"
            error = error or _step_error(result)
            if run.get("status") == "running":
                store.fail_run(conn, result.run_id, status="failed", reason=error)
    return {
        "run_id": result.run_id,
        "status": status,
        "counts": run.get("counts", {}),
        "gate_passed": run.get("gate_passed"),
        "gate_metrics": run.get("gate_metrics") or {},
        "gate_reason": run.get("gate_reason"),
        "quarantined": quarantined,
        "error": error,
    }


def _step_error(result: dg.ExecuteInProcessResult) -> str:
    for event in result.all_events:
        if event.is_step_failure and event.step_failure_data and event.step_failure_data.error:
            error = event.step_failure_data.error
            while error.cause is not None and "dagster" in (error.cls_name or "").lower():
                error = error.cause
            return f"step {event.step_key} failed: {error.cls_name}: {error.message.strip()}"
    return "the run failed; see the Dagster logs"

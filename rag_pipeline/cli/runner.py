"""Running the sync job in this process (what `rag-pipeline sync` does): the same Dagster job
the UI runs, recorded in the same run history as the UI's runs: on the instance of DAGSTER_HOME
when set, else on an instance kept in the state folder whose storage is Dagster's database on
the index's server (`rag-pipeline db url --dagster`), which is where the UI keeps its runs too
when started with `make dev`. The configuration goes in as resource config; progress goes to a
resource."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import dagster as dg

from rag_pipeline.cli.output import err
from rag_pipeline.common import heap
from rag_pipeline.config import Config
from rag_pipeline.definitions import load_definitions
from rag_pipeline.defs.failures import step_failure_text
from rag_pipeline.defs.jobs import source_job
from rag_pipeline.defs.resources import build_resources
from rag_pipeline.defs.tags import ALL_SOURCES, TAG_SOURCE, TAG_TRIGGER
from rag_pipeline.sync.context import Progress, no_progress, prepare_database
from rag_pipeline.sync.outcome import SyncOutcome, read_outcome


@contextmanager
def progress_bar(enabled: bool) -> Iterator[Progress]:
    """A Rich progress bar per step on stderr, or nothing."""
    if not enabled:
        yield no_progress
        return
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    with Progress(TextColumn("{task.description:<14}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  transient=False) as bar:
        tasks: dict[str, Any] = {}

        def update(step: str, done: int, total: int) -> None:
            if step not in tasks:
                tasks[step] = bar.add_task(step, total=total or None)
            bar.update(tasks[step], completed=done, total=total or None)

        yield update


DAGSTER_URL_ENV = "DAGSTER_PG_URL"  # what dagster.yaml reads its postgres_url from
STATE_INSTANCE_YAML = """\
# Written by rag-pipeline: the CLI's Dagster instance when DAGSTER_HOME is not set. Runs and
# events live in PostgreSQL (DAGSTER_PG_URL, set by the CLI to Dagster's database beside the
# index), so they show in the UI of any Dagster instance pointed at the same database.
# Step stdout/stderr is not captured: it is on the terminal that ran the CLI, and files under
# this folder would not be found by a UI whose DAGSTER_HOME is elsewhere (capturing costs two
# `tail` processes per run).
storage:
  postgres:
    postgres_url: {env: DAGSTER_PG_URL}
compute_logs:
  module: dagster._core.storage.noop_compute_log_manager
  class: NoOpComputeLogManager
telemetry:
  enabled: false
"""


@contextmanager
def _instance(config: Config, index_url: str) -> Iterator[dg.DagsterInstance]:
    """DAGSTER_HOME's instance, else the state folder's. DAGSTER_PG_URL (what dagster.yaml reads)
    is the caller's if set, else Dagster's database beside this config's index, for this run
    only: a later run in the same process may use another index."""
    from rag_pipeline.store.database import dagster_url

    own_url = not os.environ.get(DAGSTER_URL_ENV)
    if own_url:
        os.environ[DAGSTER_URL_ENV] = dagster_url(index_url)
    try:
        if os.environ.get("DAGSTER_HOME"):
            instance = dg.DagsterInstance.get()
        else:
            home = config.state_dir / "dagster"
            home.mkdir(parents=True, exist_ok=True)
            if not (home / "dagster.yaml").exists() or (home / "dagster.yaml").read_text() != STATE_INSTANCE_YAML:
                (home / "dagster.yaml").write_text(STATE_INSTANCE_YAML, encoding="utf-8")
            instance = dg.DagsterInstance.from_config(str(home))
        with instance:
            # Dagster's PostgreSQL storages open a new connection per event by default (a no-op
            # sync writes ~65 events: ~1 s of its wall time here). One pooled connection per
            # storage for the life of this process, as the webserver holds; no statement timeout.
            # A server that goes away mid-run fails the run either way: the run lock is a session
            # lock on the index's server.
            instance.optimize_for_webserver(statement_timeout=0, pool_recycle=3600, max_overflow=4)
            yield instance
    finally:
        if own_url:
            os.environ.pop(DAGSTER_URL_ENV, None)


def run_sync(config: Config, sources: list[str], allow_mass_tombstone: bool, show_progress: bool = False) -> SyncOutcome:
    """Run the job; return the run's outcome as recorded in the index database."""
    url = prepare_database(config)  # starts the embedded server once for all steps of this process
    names = sources or [s.name for s in config.sources]  # what the run syncs
    job = _job(names)
    tags = {TAG_SOURCE: names[0] if len(names) == 1 else ",".join(sources) or ALL_SOURCES, TAG_TRIGGER: "cli"}
    run_config = {
        "ops": {"plan": {"config": {"sources": sources, "allow_mass_tombstone": allow_mass_tombstone}}},
        # the CLI prints its own summary; Dagster's per-event console log stays in the UI/instance
        "loggers": {"console": {"config": {"log_level": "CRITICAL"}}},
    }
    started = time.monotonic()
    with progress_bar(show_progress) as progress, _instance(config, url) as instance:
        heap.work_begins()
        result = job.execute_in_process(run_config=run_config, instance=instance, raise_on_error=False, tags=tags,
                                        resources=build_resources(str(config.path), progress, err))
    outcome = read_outcome(url, result.run_id, crashed_with=None if result.success else _step_error(result))
    outcome.seconds = round(time.monotonic() - started, 2)
    return outcome


def _job(names: list[str]) -> dg.JobDefinition:
    """The job the UI runs for the same work: `sync_<source>` when the sync covers one source
    (named, or the only one configured), so its runs list and queue limit include CLI syncs;
    else the all-sources `sync`. The per-source job is built for this configuration, which
    need not be the one the UI loads."""
    definitions = load_definitions(component_catalogue=False)
    if len(names) != 1:
        return definitions.resolve_job_def("sync")
    return source_job(names[0]).resolve(asset_graph=definitions.resolve_asset_graph())


def _step_error(result: dg.ExecuteInProcessResult) -> str:
    """The first failed step's own error (the user code's exception, not Dagster's wrapper)."""
    for event in result.all_events:
        text = step_failure_text(event)
        if text:
            return text
    return "the run failed; see the Dagster logs"

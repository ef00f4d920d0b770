"""Housekeeping for runs launched from the UI or a schedule: when a sync run fails in Dagster
(a crashed step, a refused plan), record it in the index database at once, so the run's staged
versions are discarded and its source lock is released without waiting for the next sync."""

import dagster as dg

from rag_pipeline import store
from rag_pipeline.database import connect
from rag_pipeline.defs.jobs import sync_job
from rag_pipeline.defs.resources import IndexDatabase


@dg.run_failure_sensor(
    name="record_failed_sync_runs",
    monitored_jobs=[sync_job],
    default_status=dg.DefaultSensorStatus.RUNNING,  # bookkeeping, not a trigger: always on
    description="Marks failed sync runs as failed in the index database and discards what they staged.",
)
def record_failed_sync_runs(context: dg.RunFailureSensorContext, database: IndexDatabase) -> None:
    run_id = context.dagster_run.run_id
    reason = context.failure_event.message or "the Dagster run failed"
    with connect(database.url()) as conn:
        run = store.runs.get_run(conn, run_id)
        if run is not None and run["status"] == "running":
            store.runs.fail_run(conn, run_id, status="failed", reason=reason)
            context.log.info(f"run {run_id} recorded as failed: {reason}")

"""Housekeeping for runs launched from the UI, a schedule or a sensor: when a sync run fails in
Dagster (a crashed step, a refused plan, a run worker that died and was caught by run
monitoring), record it in the index database, so the run's staged versions are discarded and
its source is free for the next sync; and tag it, so the runs list tells a gate failure
(nothing published, by design) from a crash.

A run an operator cancelled is recorded the same way (nothing of it is published) but tagged
`cancelled`, not `crashed`: the runs list must not send anyone looking for a bug that is a
decision.

Three sensors, because a run-status sensor sees each event once (its cursor moves on even when
a tick fails): `record_failed_sync_runs` and `record_cancelled_sync_runs` react at once,
`reconcile_sync_runs` sweeps every minute for index runs still marked running whose Dagster run
has ended, so a missed event is repaired on the next sweep."""

from __future__ import annotations

import dagster as dg

from rag_pipeline import store
from rag_pipeline.defs.failures import first_step_failure
from rag_pipeline.defs.resources import IndexDatabase
from rag_pipeline.defs.source_assets import source_observation
from rag_pipeline.defs.tags import TAG_OUTCOME
from rag_pipeline.store.database import connect

RECONCILE_INTERVAL_SECONDS = 60
CANCELLED_REASON = "cancelled in Dagster (by an operator or a run-termination request): nothing was published"


def _record(instance: dg.DagsterInstance, database: IndexDatabase, run_id: str, reason: str,
            *, cancelled: bool = False) -> str | None:
    """Mark one ended Dagster run in the index and tag its outcome; returns what was recorded.
    A cancelled run is `failed` in the index (it published nothing; the index's statuses are
    about the data) and `cancelled` in Dagster's tag (about who ended it)."""
    with connect(database.url()) as conn:
        run = store.runs.get_run(conn, run_id)
        if run is None:
            return None  # ended before plan registered it: nothing staged, nothing locked
        if run["status"] == "running":
            store.runs.fail_run(conn, run_id, status="failed", reason=reason)
            run = store.runs.get_run(conn, run_id) or run
    if run["status"] == "gate_failed":
        outcome = "gate_failed"
    elif run["status"] == "failed":
        outcome = "cancelled" if cancelled else "crashed"
    else:
        outcome = None
    if outcome:
        instance.add_run_tags(run_id, {TAG_OUTCOME: outcome})
        _observe_outcome(instance, database, run, outcome)
    return outcome


def _observe_outcome(instance: dg.DagsterInstance, database: IndexDatabase, run: dict, outcome: str) -> None:
    """The source's asset page is its history: a run that ended badly is observed there too (a
    publishing or no-op run is observed by its own `published`/`plan` step), with the reason."""
    reason = run.get("gate_reason") if outcome == "gate_failed" else run.get("error")
    extra = {"run_id": run["run_id"], "reason": str(reason or "")[:2000]}
    with connect(database.url()) as conn:
        live = store.status.index_status(conn)["sources"]
        observations = [source_observation(conn, name, run["run_id"], outcome, live.get(name, {}), {}, extra)
                        for name in run.get("sources") or []]
    for observation in observations:
        instance.report_runless_asset_event(observation)


@dg.run_failure_sensor(
    name="record_failed_sync_runs",
    default_status=dg.DefaultSensorStatus.RUNNING,  # bookkeeping, not a trigger: always on
    description="Marks failed sync runs as failed in the index database, discards what they staged, "
                "and tags them rag/outcome=gate_failed or crashed.",
)
def record_failed_sync_runs(context: dg.RunFailureSensorContext, database: IndexDatabase) -> None:
    run_id = context.dagster_run.run_id
    reason = first_step_failure(context.instance, run_id) or context.failure_event.message or "the Dagster run failed"
    outcome = _record(context.instance, database, run_id, reason)
    if outcome:
        context.log.info(f"run {run_id} recorded as {outcome}: {reason}")


@dg.run_status_sensor(
    name="record_cancelled_sync_runs",
    run_status=dg.DagsterRunStatus.CANCELED,
    default_status=dg.DefaultSensorStatus.RUNNING,
    description="Marks sync runs an operator cancelled as failed in the index database, discards what "
                "they staged, frees their source and tags them rag/outcome=cancelled.",
)
def record_cancelled_sync_runs(context: dg.RunStatusSensorContext, database: IndexDatabase) -> None:
    run_id = context.dagster_run.run_id
    outcome = _record(context.instance, database, run_id, CANCELLED_REASON, cancelled=True)
    if outcome:
        context.log.info(f"run {run_id} recorded as {outcome}")


@dg.sensor(
    name="reconcile_sync_runs",
    minimum_interval_seconds=RECONCILE_INTERVAL_SECONDS,
    default_status=dg.DefaultSensorStatus.RUNNING,
    description="Every minute: index runs still marked running whose Dagster run has ended are "
                "recorded as failed (repairs a failure event the other sensor missed).",
)
def reconcile_sync_runs(context: dg.SensorEvaluationContext, database: IndexDatabase) -> dg.SkipReason:
    with connect(database.url()) as conn:
        running = store.runs.running_run_ids(conn)
    repaired = []
    for run_id in running:
        run = context.instance.get_run_by_id(run_id)
        if run is None or not run.is_finished or run.status == dg.DagsterRunStatus.SUCCESS:
            continue  # unknown here (another instance), still going, or publishing its outcome
        cancelled = run.status == dg.DagsterRunStatus.CANCELED
        reason = CANCELLED_REASON if cancelled else f"the Dagster run ended as {run.status.value}"
        if _record(context.instance, database, run_id, reason, cancelled=cancelled):
            repaired.append(run_id)
    return dg.SkipReason(f"recorded {len(repaired)} ended run(s) as failed: {', '.join(repaired)}" if repaired
                         else f"{len(running)} running sync(s), none ended")

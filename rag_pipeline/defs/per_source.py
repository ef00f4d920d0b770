"""Per-source jobs, schedules and change sensors, built from the configuration the UI loads
(RAG_PIPELINE_CONFIG): operators think in sources, so each configured source gets its own job
(its runs, last sync and failures listed apart), an asset `source/<name>` observed by each sync
that publishes it (last sync, outcome and live size in the asset catalog; its `fresh` check
lives in defs/alerts.py), its schedule when it has a `schedule:` (cron), and a sensor that requests a sync only when the source's listing changed (`watch: true`)."""

from __future__ import annotations

import dagster as dg

from rag_pipeline.config import default_config_path, load_config
from rag_pipeline.defs.jobs import job_name, source_job
from rag_pipeline.defs.source_assets import source_spec
from rag_pipeline.defs.tags import TAG_OUTCOME, TAG_TRIGGER
from rag_pipeline.errors import PipelineError
from rag_pipeline.sources.config import SourceConfig
from rag_pipeline.sources.fingerprint import listing_fingerprint

WATCH_INTERVAL_SECONDS = 30
MAX_RETRIES = 3  # requests again of one listing's run that was cancelled or failed
RETRIED_STATUSES = (dg.DagsterRunStatus.CANCELED, dg.DagsterRunStatus.FAILURE)


def _schedule(source: SourceConfig, job: dg.UnresolvedAssetJobDefinition) -> dg.ScheduleDefinition:
    return dg.ScheduleDefinition(
        name=f"{job_name(source.name)}_schedule", job=job, cron_schedule=str(source.schedule),
        tags={TAG_TRIGGER: "schedule"}, default_status=dg.DefaultScheduleStatus.RUNNING,
        description=f"Sync {source.name!r} on its configured schedule ({source.schedule}).",
    )


def changed_listing_sensor(source: SourceConfig, job: dg.UnresolvedAssetJobDefinition) -> dg.SensorDefinition:
    """Requests one run when the source's listing fingerprint differs from the cursor.

    The cursor is the fingerprint itself (64 hex characters, whatever the source's size), then
    `/<attempt>` once a run was requested for it. The first tick only records it: a source is
    first synced by hand or by its schedule. The run key is the fingerprint (and the attempt),
    so a tick that repeats never requests the same change twice. A run for the current listing
    that was cancelled or failed (not one the gate refused: that needs a person) is requested
    again on the next tick, up to MAX_RETRIES times, each logged: the change never stays
    unsynced because one run did not finish."""

    @dg.sensor(name=f"{job_name(source.name)}_on_change", job=job, minimum_interval_seconds=WATCH_INTERVAL_SECONDS,
               default_status=dg.DefaultSensorStatus.RUNNING if source.watch else dg.DefaultSensorStatus.STOPPED,
               description=f"Sync {source.name!r} when its listing (names, sizes, modification times) changes; "
                           f"a cancelled or failed run of a change is requested again (at most {MAX_RETRIES} times).")
    def _sensor(context: dg.SensorEvaluationContext) -> dg.SensorResult | dg.SkipReason:
        try:
            fingerprint = listing_fingerprint(source)
        except PipelineError as exc:
            return dg.SkipReason(f"cannot list {source.name!r}: {exc}")
        if fingerprint is None:
            return dg.SkipReason(f"source kind {source.kind!r} has no cheap listing fingerprint; use a schedule")
        if context.cursor is None:
            return dg.SensorResult(skip_reason="first tick: listing recorded", cursor=fingerprint)
        seen, _, attempt = context.cursor.partition("/")
        if fingerprint != seen:
            return _request(source, fingerprint, 0)
        if not (attempt.isascii() and attempt.isdigit() and len(attempt) < 6):  # none, or not a cursor we wrote
            return dg.SkipReason("listing unchanged")
        return _retry_if_ended_badly(context, source, fingerprint, int(attempt))

    return _sensor


def _run_key(source: SourceConfig, fingerprint: str, attempt: int) -> str:
    return f"{source.name}:{fingerprint}" + (f":retry{attempt}" if attempt else "")


def _request(source: SourceConfig, fingerprint: str, attempt: int) -> dg.SensorResult:
    request = dg.RunRequest(run_key=_run_key(source, fingerprint, attempt), tags={TAG_TRIGGER: "sensor"})
    return dg.SensorResult(run_requests=[request], cursor=f"{fingerprint}/{attempt}")


def _retry_if_ended_badly(context: dg.SensorEvaluationContext, source: SourceConfig, fingerprint: str,
                          attempt: int) -> dg.SensorResult | dg.SkipReason:
    runs = context.instance.get_runs(dg.RunsFilter(tags={"dagster/run_key": _run_key(source, fingerprint, attempt)}), limit=1)
    if not runs or runs[0].status not in RETRIED_STATUSES:
        return dg.SkipReason("listing unchanged" + (f"; its run {runs[0].run_id} is {runs[0].status.value}" if runs else ""))
    run = runs[0]
    if run.tags.get(TAG_OUTCOME) == "gate_failed":
        return dg.SkipReason(f"listing unchanged; its run {run.run_id} was refused by the gate (not retried: fix the "
                             "documents or the evaluation set)")
    if attempt >= MAX_RETRIES:
        return dg.SkipReason(f"listing unchanged; its run {run.run_id} ended {run.status.value} after "
                             f"{attempt} retries: not requested again until the listing changes")
    context.log.info(f"the run {run.run_id} for this listing ended {run.status.value}: requesting it again "
                     f"(retry {attempt + 1} of {MAX_RETRIES})")
    return _request(source, fingerprint, attempt + 1)


def source_definitions(sources: tuple[SourceConfig, ...]) -> dg.Definitions:
    jobs, schedules, sensors = [], [], []
    for source in sources:
        job = source_job(source.name)
        jobs.append(job)
        sensors.append(changed_listing_sensor(source, job))
        if source.schedule:
            schedules.append(_schedule(source, job))
    return dg.Definitions(assets=[source_spec(s) for s in sources], jobs=jobs, schedules=schedules, sensors=sensors)


def configured_sources() -> tuple[SourceConfig, ...]:
    """The sources of the configuration the UI loads; none when it cannot be read (the UI then
    shows only the generic `sync` job, whose runs say why when launched)."""
    try:
        return load_config(default_config_path()).sources
    except PipelineError:
        return ()


@dg.definitions
def per_source() -> dg.Definitions:
    return source_definitions(configured_sources())

"""Per-source jobs, schedules and change sensors, built from the configuration the UI loads
(RAG_PIPELINE_CONFIG): operators think in sources, so each configured source gets its own job
(its runs, last sync and failures listed apart), an asset `source/<name>` observed by each sync
that publishes it (last sync, outcome and live size in the asset catalog) with its `fresh`
check (defs/alerts.py), its schedule when it has a `schedule:` (cron), and a sensor that requests a sync only when the source's listing changed (`watch: true`)."""

from __future__ import annotations

import dagster as dg

from rag_pipeline.config import default_config_path, load_config
from rag_pipeline.defs.alerts import freshness_check
from rag_pipeline.defs.jobs import job_name, source_job
from rag_pipeline.defs.source_assets import source_spec
from rag_pipeline.defs.tags import TAG_TRIGGER
from rag_pipeline.errors import PipelineError
from rag_pipeline.sources.config import SourceConfig
from rag_pipeline.sources.fingerprint import listing_fingerprint

WATCH_INTERVAL_SECONDS = 30


def _schedule(source: SourceConfig, job: dg.UnresolvedAssetJobDefinition) -> dg.ScheduleDefinition:
    return dg.ScheduleDefinition(
        name=f"{job_name(source.name)}_schedule", job=job, cron_schedule=str(source.schedule),
        tags={TAG_TRIGGER: "schedule"}, default_status=dg.DefaultScheduleStatus.RUNNING,
        description=f"Sync {source.name!r} on its configured schedule ({source.schedule}).",
    )


def changed_listing_sensor(source: SourceConfig, job: dg.UnresolvedAssetJobDefinition) -> dg.SensorDefinition:
    """Requests one run when the source's listing fingerprint differs from the cursor.

    The cursor is the fingerprint itself (64 hex characters, whatever the source's size). The
    first tick only records it: a source is first synced by hand or by its schedule. The run key
    is the fingerprint, so a tick that repeats never requests the same change twice."""

    @dg.sensor(name=f"{job_name(source.name)}_on_change", job=job, minimum_interval_seconds=WATCH_INTERVAL_SECONDS,
               default_status=dg.DefaultSensorStatus.RUNNING if source.watch else dg.DefaultSensorStatus.STOPPED,
               description=f"Sync {source.name!r} when its listing (names, sizes, modification times) changes.")
    def _sensor(context: dg.SensorEvaluationContext) -> dg.SensorResult | dg.SkipReason:
        try:
            fingerprint = listing_fingerprint(source)
        except PipelineError as exc:
            return dg.SkipReason(f"cannot list {source.name!r}: {exc}")
        if fingerprint is None:
            return dg.SkipReason(f"source kind {source.kind!r} has no cheap listing fingerprint; use a schedule")
        if context.cursor is None:
            return dg.SensorResult(skip_reason="first tick: listing recorded", cursor=fingerprint)
        if fingerprint == context.cursor:
            return dg.SkipReason("listing unchanged")
        request = dg.RunRequest(run_key=f"{source.name}:{fingerprint}", tags={TAG_TRIGGER: "sensor"})
        return dg.SensorResult(run_requests=[request], cursor=fingerprint)

    return _sensor


def source_definitions(sources: tuple[SourceConfig, ...]) -> dg.Definitions:
    jobs, schedules, sensors = [], [], []
    for source in sources:
        job = source_job(source.name)
        jobs.append(job)
        sensors.append(changed_listing_sensor(source, job))
        if source.schedule:
            schedules.append(_schedule(source, job))
    return dg.Definitions(assets=[source_spec(s) for s in sources], asset_checks=[freshness_check(s) for s in sources],
                          jobs=jobs, schedules=schedules, sensors=sensors)


@dg.definitions
def per_source() -> dg.Definitions:
    """No readable configuration at load: only the generic `sync` job (the UI says why in the
    runs of that job when it is launched)."""
    try:
        config = load_config(default_config_path())
    except PipelineError:
        return dg.Definitions()
    return source_definitions(config.sources)

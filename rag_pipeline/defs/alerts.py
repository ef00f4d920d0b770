"""Alerts and freshness, through Dagster's own sensor machinery: nobody has to open the UI to
learn that a sync failed, that its gate refused it, or that a scheduled source went stale.

- `alert_on_failed_sync_runs` (run-failure sensor): a failed sync run, with its source, the
  reason (the gate's verdict when the gate refused it, else the error) and a link to the run.
- `source_freshness` (every 5 minutes): judges each source's `fresh` check (a scheduled source
  must have synced successfully within its schedule interval plus `alerts.freshness_grace_minutes`),
  records the verdict on the source's asset page, and alerts once when a source turns stale
  (the cursor holds the stale sources, so a stale source is not re-announced every tick, and
  when it first saw each source: one never synced is stale an interval plus grace later).

Channels and links come from the `alerts` section of rag_pipeline.yaml (alerts/config.py); with
no channel configured, the sensors still record what they would have sent."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import dagster as dg
from dagster._utils.schedules import cron_string_iterator

from rag_pipeline import store
from rag_pipeline.alerts.config import AlertsConfig
from rag_pipeline.alerts.deliver import Alert, channels, send
from rag_pipeline.alerts.freshness import Freshness, judge
from rag_pipeline.defs.controls import as_loaded
from rag_pipeline.defs.failures import first_step_failure
from rag_pipeline.defs.per_source import configured_sources
from rag_pipeline.defs.resources import IndexDatabase
from rag_pipeline.defs.source_assets import source_key
from rag_pipeline.defs.tags import ALL_SOURCES, TAG_SOURCE
from rag_pipeline.sources.config import SourceConfig
from rag_pipeline.store.database import connect

FRESHNESS_CHECK = "fresh"
FRESHNESS_INTERVAL_SECONDS = 300
TICKS_SAMPLED = 8  # a schedule's interval: the longest gap among its next ticks (weekdays: the weekend)


def schedule_interval(cron: str | None, now: datetime) -> timedelta | None:
    """How long a source may go between syncs by its schedule: the longest gap between its next
    ticks (UTC, as its Dagster schedule runs), so an irregular cron never raises a false alarm."""
    if not cron:
        return None
    ticks = cron_string_iterator(now.timestamp(), cron, "UTC")
    times = [next(ticks) for _ in range(TICKS_SAMPLED + 1)]
    return max(b - a for a, b in zip(times, times[1:], strict=False))


def freshness_of(database: IndexDatabase, now: datetime | None = None,
                 first_seen: dict[str, datetime] | None = None) -> dict[str, Freshness]:
    """Every configured source's verdict, from the index's record of successful syncs.
    `first_seen`: when the sensor first saw each source (a source never synced is stale one
    interval plus grace after that)."""
    config = database.settings.load()
    now = now or datetime.now(UTC)
    grace = timedelta(minutes=config.alerts.freshness_grace_minutes)
    with connect(database.url()) as conn:
        last = store.runs.last_successful_syncs(conn, [s.name for s in config.sources])
    seen = first_seen or {}
    return {s.name: judge(last[s.name], schedule_interval(s.schedule, now), grace, now, seen.get(s.name))
            for s in config.sources}


def _evaluation(source: str, verdict: Freshness) -> dg.AssetCheckEvaluation:
    metadata = {"reason": verdict.reason,
                "last_successful_sync": verdict.last_success.isoformat() if verdict.last_success else "never"}
    if verdict.deadline:
        metadata["stale_after"] = verdict.deadline.isoformat()
    return dg.AssetCheckEvaluation(asset_key=source_key(source), check_name=FRESHNESS_CHECK, passed=verdict.passed,
                                   severity=dg.AssetCheckSeverity.WARN, metadata=metadata)


def freshness_check(source: SourceConfig) -> dg.AssetChecksDefinition:
    """The `fresh` check on `source/<name>`, so its page shows the verdict (recorded every 5
    minutes by `source_freshness`; "Execute" judges it at once)."""

    @dg.asset_check(asset=source_key(source.name), name=FRESHNESS_CHECK,
                    description="Synced successfully within its schedule interval plus the grace period "
                                "(alerts.freshness_grace_minutes); sources without a schedule are not judged.")
    def _fresh(context, database: IndexDatabase) -> dg.AssetCheckResult:  # noqa: ANN001 -- Dagster reads the annotation, and this module postpones them
        as_loaded(context, database)  # judged on the configuration the UI loaded, never a Launchpad override
        evaluation = _evaluation(source.name, freshness_of(database)[source.name])
        return dg.AssetCheckResult(passed=evaluation.passed, severity=evaluation.severity,
                                   metadata=evaluation.metadata)

    return _fresh


def _deliver(alerts: AlertsConfig, alert: Alert) -> str:
    if not channels(alerts):
        return f"no alert channel configured (alerts.webhook / alerts.smtp): {alert.subject}"
    delivered = send(alert, alerts)  # raises naming every channel that failed: the tick shows it
    return f"sent {alert.subject!r} to {', '.join(delivered)}"


@dg.run_failure_sensor(
    name="alert_on_failed_sync_runs",
    default_status=dg.DefaultSensorStatus.RUNNING,
    description="Sends an alert (alerts.webhook, alerts.smtp) for every failed sync run: the source, "
                "the gate's verdict or the error, and a link to the run.",
)
def alert_on_failed_sync_runs(context: dg.RunFailureSensorContext, database: IndexDatabase) -> None:
    run = context.dagster_run
    source = run.tags.get(TAG_SOURCE)
    if source is None:
        return  # not a sync run (e.g. a freshness check): nothing of a source to report
    with connect(database.url()) as conn:
        recorded = store.runs.get_run(conn, run.run_id) or {}
    gate = recorded.get("status") == "gate_failed"
    reason = (recorded.get("gate_reason") if gate else None) or first_step_failure(context.instance, run.run_id) \
        or context.failure_event.message or "the run failed"
    alerts = database.settings.load().alerts
    alert = Alert(kind="gate_failed" if gate else "crashed", source=source if source != ALL_SOURCES else "all sources",
                  reason=reason, run_id=run.run_id, link=alerts.run_link(run.run_id))
    context.log.info(_deliver(alerts, alert))


def _cursor_state(cursor: str | None) -> dict:
    """The freshness sensor's cursor; one it did not write (edited by hand, another version)
    counts as empty: every source is first seen now, none announced yet."""
    empty = {"stale": [], "first_seen": {}}
    try:
        state = json.loads(cursor) if cursor else empty
        seen = {str(n): datetime.fromisoformat(at) for n, at in state.get("first_seen", {}).items()}
        stale = [str(n) for n in state.get("stale", [])]
    except (ValueError, TypeError, AttributeError):
        return empty
    if any(at.tzinfo is None for at in seen.values()):
        return empty  # not written by this sensor (it writes UTC instants)
    return {"stale": stale, "first_seen": seen}


@dg.sensor(
    name="source_freshness",
    minimum_interval_seconds=FRESHNESS_INTERVAL_SECONDS,
    default_status=dg.DefaultSensorStatus.RUNNING,
    description="Every 5 minutes: records each source's `fresh` check and alerts once when a scheduled "
                "source has not synced successfully within its interval plus the grace period.",
)
def source_freshness(context: dg.SensorEvaluationContext, database: IndexDatabase) -> dg.SensorResult:
    now = datetime.now(UTC)
    state = _cursor_state(context.cursor)
    first_seen = dict(state["first_seen"])
    for source in database.settings.load().sources:
        first_seen.setdefault(source.name, now)
    verdicts = freshness_of(database, now, first_seen)
    stale_before = set(state["stale"])
    stale_now = {name for name, v in verdicts.items() if not v.passed}
    alerts = database.settings.load().alerts
    said = [_deliver(alerts, Alert(kind="stale", source=name, reason=verdicts[name].reason,
                                            link=f"{alerts.ui_url}/assets/source/{name}"))
            for name in sorted(stale_now - stale_before)]
    summary = f"{len(stale_now)} stale of {len(verdicts)} source(s)" + (": " + "; ".join(said) if said else "")
    cursor = {"stale": sorted(stale_now), "first_seen": {n: first_seen[n].isoformat() for n in verdicts}}
    return dg.SensorResult(asset_events=[_evaluation(name, v) for name, v in verdicts.items()],
                           cursor=json.dumps(cursor), skip_reason=summary)


@dg.definitions
def alerting() -> dg.Definitions:
    """This module's definitions (a module with a @dg.definitions function contributes only what
    it returns): the two sensors and each configured source's `fresh` check."""
    return dg.Definitions(asset_checks=[freshness_check(s) for s in configured_sources()],
                          sensors=[alert_on_failed_sync_runs, source_freshness])

"""The sync jobs: `sync` (every source, or those named in its config; what `rag-pipeline sync`
runs) and one `sync_<source>` per configured source (see `per_source.py`), with the tags the
run queue and the runs list use."""

from __future__ import annotations

import dagster as dg

from rag_pipeline.defs.assets import GROUP
from rag_pipeline.defs.tags import ALL_SOURCES, TAG_SOURCE, TAG_TRIGGER

# An automatic retry (run_retries in dagster.yaml) runs every step again: a sync's work lives in
# the index under its own run id, so re-running only the failed steps in a new run (Dagster's
# default, FROM_FAILURE) would start mid-way with nothing planned.
RETRY_ALL_STEPS = {"dagster/retry_strategy": "ALL_STEPS"}

sync_job = dg.define_asset_job(
    "sync",
    selection=dg.AssetSelection.groups(GROUP),
    description="Sync every configured source into the index, gated by the evaluation set.",
    tags={TAG_SOURCE: ALL_SOURCES, TAG_TRIGGER: "manual", **RETRY_ALL_STEPS},
)

# Off by default, like every Dagster schedule: switch it on in the UI (Automation) or set a
# per-source `schedule:` in rag_pipeline.yaml (schedules sync_<source>_schedule, on by default).
nightly_sync = dg.ScheduleDefinition(job=sync_job, cron_schedule="0 2 * * *", name="nightly_sync",
                                     tags={TAG_TRIGGER: "schedule"})


def job_name(source: str) -> str:
    """Dagster names allow letters, digits and '_' only; source names may also hold '-'."""
    return "sync_" + source.replace("-", "_")


def source_job(source: str) -> dg.UnresolvedAssetJobDefinition:
    """The sync job of one source: its runs carry the source tag, so the queue runs them one at
    a time (dagster.yaml: tag_concurrency_limits on rag/source) and the UI lists them apart.

    It runs its steps in one process, as the CLI does: the steps form a chain (each needs the
    previous one), so a process per step buys no parallelism and pays interpreter start-up and
    the model load in each step (bench/bench_ui_path.py). The generic `sync` job runs on the
    executor RAG_PIPELINE_EXECUTOR names (definitions.py; by default also one process), so it
    can spread its shards over Celery workers or pods."""
    return dg.define_asset_job(
        job_name(source),
        selection=dg.AssetSelection.groups(GROUP),
        description=f"Sync the source {source!r} into the index, gated by the evaluation set.",
        config={"ops": {"plan": {"config": {"sources": [source]}}}},
        tags={TAG_SOURCE: source, TAG_TRIGGER: "manual", **RETRY_ALL_STEPS},
        executor_def=dg.in_process_executor,
    )

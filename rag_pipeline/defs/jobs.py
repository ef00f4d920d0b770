"""The sync job (what `rag-pipeline sync` and the UI run) and its schedule."""

from __future__ import annotations

import dagster as dg

from rag_pipeline.defs.assets import GROUP

sync_job = dg.define_asset_job(
    "sync",
    selection=dg.AssetSelection.groups(GROUP),
    description="Sync every configured source into the index, gated by the evaluation set.",
)

# Off by default, like every Dagster schedule: switch it on in the UI (Automation) or set
# default_status=dg.DefaultScheduleStatus.RUNNING once the sources are configured.
nightly_sync = dg.ScheduleDefinition(job=sync_job, cron_schedule="0 2 * * *", name="nightly_sync")

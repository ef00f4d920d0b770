"""Controls that cannot lie (issue 27): what a run launched from the UI may ask for, refused at
its first step with a message saying what to launch instead, rather than run in a way the UI
does not show.

- A step or the evaluation gate launched alone (no `rag/source` tag) would escape the
  per-source queue, and a gate judging nothing staged would turn green over a failed sync's
  verdict: refused.
- A Launchpad run config that sets a resource's config (another `config_path`) passes Dagster's
  validation, but only the top-level `settings` resource would take it: the database, sources,
  model and parser resources hold the configuration the code location loaded, so the run would
  mix two configurations. Refused, naming the override and how to sync another configuration.
"""

from __future__ import annotations

from typing import Any

import dagster as dg

from rag_pipeline.defs.resources import IndexDatabase
from rag_pipeline.defs.tags import TAG_SOURCE

Context = dg.OpExecutionContext | dg.AssetCheckExecutionContext


def sync_run_only(context: Context, what: str, database: IndexDatabase) -> None:
    """The steps run only inside a sync job (`sync`, `sync_<source>` or `rag-pipeline sync`),
    whose runs carry the source tag (the queue's one-run-per-source limit) and plan, stage,
    gate and publish together, on the configuration the code location loaded."""
    if TAG_SOURCE not in context.run.tags:
        raise dg.Failure(description=f"{what} runs only inside a sync job (`sync`, `sync_<source>` or "
                                     "`rag-pipeline sync`); this run has no rag/source tag, so it was launched as a "
                                     "single step: launch the source's job instead (`rag-pipeline eval` judges the "
                                     "live index)")
    as_loaded(context, database)


def as_loaded(context: Context, database: IndexDatabase) -> None:
    """Refuse a run whose run config sets resource config other than what the code location
    loaded. The Launchpad's own scaffold repeats the loaded `config_path`: that is no override."""
    loaded = database.settings.config_path
    for key, entry in sorted(_resource_configs(context.run.run_config).items()):
        if key == "settings" and entry == {"config_path": loaded}:
            continue
        raise dg.Failure(
            description=f"this run's config sets the resource config `resources.{key}.config` ({_shown(entry)}), which "
                        f"this code location does not take: its resources run on the configuration it loaded, "
                        f"{loaded} (RAG_PIPELINE_CONFIG). Nothing was synced. Remove the `resources:` section from the "
                        "run config; to sync another configuration, run `rag-pipeline sync --config PATH` or start "
                        "the UI with RAG_PIPELINE_CONFIG=PATH",
            metadata={"loaded_config": loaded, "overridden_resource": key},
            allow_retries=False)


def _resource_configs(run_config: Any) -> dict[str, Any]:
    """`resources.<key>.config` of a run config, for each key that sets any."""
    resources = run_config.get("resources") if isinstance(run_config, dict) else None
    if not isinstance(resources, dict):
        return {}
    found = {}
    for key, entry in resources.items():
        config = entry.get("config") if isinstance(entry, dict) else entry
        if config not in (None, {}):
            found[str(key)] = config
    return found


def _shown(config: Any) -> str:
    text = repr(config)
    return text if len(text) <= 300 else text[:300] + "..."

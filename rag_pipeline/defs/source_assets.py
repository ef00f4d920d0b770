"""One asset per configured source, so the asset catalog shows each source's last sync.

Ops think in sources, but the pipeline's assets are its steps (one graph for every source).
Each source is therefore an external asset `source/<name>` (group `sources`): not computed by
Dagster, observed by every sync that publishes it. Its latest observation says when it was last
synced, by which run, with what outcome and how much of it is live; its page lists the history
of those observations.
"""

from __future__ import annotations

from typing import Any

import dagster as dg

from rag_pipeline.sources.config import SourceConfig

SOURCES_GROUP = "sources"


def source_key(name: str) -> dg.AssetKey:
    """`source/<name>`: config allows letters, digits, '-' and '_' in source names, all valid here."""
    return dg.AssetKey(["source", name])


def source_spec(source: SourceConfig) -> dg.AssetSpec:
    where = f"s3://{source.bucket}/{source.prefix}" if source.kind == "s3" else str(source.path)
    metadata: dict[str, Any] = {"kind": source.kind, "location": where, "watch": source.watch}
    if source.schedule:
        metadata["schedule"] = source.schedule
    return dg.AssetSpec(
        key=source_key(source.name), group_name=SOURCES_GROUP, kinds={"s3" if source.kind == "s3" else "folder"},
        owners=["team:data-engineering"], metadata=metadata,
        description=f"The source {source.name!r} ({where}); observed by each of its syncs, whatever the outcome.",
    )


def source_observation(name: str, run_status: str, live: dict[str, int], counts: dict[str, int]) -> dg.AssetObservation:
    return dg.AssetObservation(asset_key=source_key(name), metadata={
        "run_status": run_status,
        "live_documents": live.get("live_documents", 0),
        "live_chunks": live.get("live_chunks", 0),
        **{f"run_{key}": int(value) for key, value in counts.items()},
    })

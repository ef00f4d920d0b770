"""One asset per configured source, so the asset catalog shows each source's last sync.

Ops think in sources, but the pipeline's assets are its steps (one graph for every source).
Each source is therefore an external asset `source/<name>` (group `sources`): not computed by
Dagster, observed by every sync that publishes it. Its latest observation says when it was last
synced, by which run, with what outcome, how much of it is live and which of its files are in
quarantine now; its page lists the history of those observations.
"""

from __future__ import annotations

from datetime import UTC
from typing import Any

import dagster as dg
import psycopg

from rag_pipeline import store
from rag_pipeline.defs.markdown import md_table
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


QUARANTINE_SHOWN = 50  # files listed on the page; the count is always whole


def source_observation(conn: psycopg.Connection, name: str, run_id: str, run_status: str, live: dict[str, int],
                       counts: dict[str, int], extra: dict[str, Any] | None = None) -> dg.AssetObservation:
    """One sync outcome of the source, as its page shows it, side by side with every other
    source's (each page keeps its own latest, whatever runs came since for other sources):

    - the run's status, what of the source is live, the run's counts (`run_*`, the run's total);
    - what this run did to this source (`this_run_versions`, `_tombstones`, `_quarantined`);
    - the verdict of the run's evaluation gate (`gate`) and its metrics (`gate_<metric>`, plotted
      over time); the failing cases stay on the run's check of `staged`;
    - the files in quarantine now (`quarantined_now`, `quarantine_now`: each file, the stage that
      refused it and why), read from the index at every outcome, so a file stays listed over later
      runs that did not touch it and leaves the list with the first completed run that no longer
      quarantines it (fixed or removed)."""
    total, files = store.quarantine.source_quarantine(conn, name, QUARANTINE_SHOWN)
    run = store.runs.get_run(conn, run_id) or {}
    figures = store.status.source_run_figures(conn, run_id, name)
    return dg.AssetObservation(asset_key=source_key(name), metadata={
        "run_status": run_status,
        "live_documents": live.get("live_documents", 0),
        "live_chunks": live.get("live_chunks", 0),
        **{f"run_{key}": int(value) for key, value in counts.items()},
        **{f"this_run_{key}": value for key, value in figures.items()},
        "gate": _verdict(run),
        **{f"gate_{metric}": float(value) for metric, value in sorted((run.get("gate_metrics") or {}).items())},
        "quarantined_now": total,
        "quarantine_now": _quarantine_table(total, files),
        **(extra or {}),
    })


def _verdict(run: dict[str, Any]) -> str:
    passed, reason = run.get("gate_passed"), run.get("gate_reason") or ""
    if passed is None:
        return "not reached: the run ended before its evaluation gate"
    return ("passed: " if passed else "failed: ") + reason


def _quarantine_table(total: int, files: list[dict[str, Any]]) -> dg.MetadataValue:
    if not files:
        return dg.MetadataValue.md("No file of this source is in quarantine.")
    rows = [(f["uri"], f["stage"], f["error"], f"{f['quarantined_at'].astimezone(UTC):%Y-%m-%d %H:%M} UTC", f["run_id"]) for f in files]
    if total > len(files):
        rows.append((f"... and {total - len(files)} more (`rag-pipeline status`)", "", "", "", ""))
    return md_table(("file", "stage", "reason", "quarantined at", "run"), rows)

"""Step 6, stage: each changed document becomes a new, invisible version with its chunks and
ACL groups in one transaction; ACL-only changes copy the live chunks; gone documents get
staged tombstones. Step 8, publish: one transaction makes them all live."""

from __future__ import annotations

import mimetypes
from collections import Counter
from dataclasses import dataclass

import numpy as np

from rag_pipeline import store
from rag_pipeline.chunking.chunks import CHUNKER_VERSION
from rag_pipeline.cleaning.clean import CLEANER_VERSION
from rag_pipeline.embedding import Embedder
from rag_pipeline.errors import GateFailedError, PipelineError
from rag_pipeline.sync.batches import CONTENT_ACTIONS, work_batches
from rag_pipeline.sync.context import SyncContext
from rag_pipeline.sync.gate import run_gate


class TooManyFailuresError(PipelineError):
    """More of the run's files were quarantined than `max_failed_share` allows."""


class GateNotPassedError(GateFailedError):
    """Publish was asked for a run whose evaluation gate did not pass."""


@dataclass
class StageResult:
    counts: dict[str, int]  # versions, chunks, acl_versions, tombstones


@dataclass
class PublishResult:
    counts: dict[str, int]  # published, superseded, tombstoned


def stage_items(ctx: SyncContext, model_id: int) -> StageResult:
    """Stage the run's content versions, then its access changes and tombstones.

    Failing content never holds back access: a document whose new content could not be parsed
    (or was held back because too many new files failed) but whose groups changed gets an
    access-only version of its live content. When too many NEW files failed, content is held
    back and only access changes and removals go on (to the gate, then publish); with none of
    those either, the run fails with TooManyFailuresError."""
    counts: Counter = Counter()
    with ctx.connect() as conn:
        too_many = _too_many_failures(ctx, conn)
        if too_many is None:
            _stage_content(ctx, conn, model_id, counts)
        for source, uri in store.work_items.item_keys(conn, ctx.run_id, "planned", ("acl_changed",)):
            counts["acl_versions"] += store.versions.stage_acl_version(conn, ctx.run_id, source, uri, _acl(conn, ctx, source, uri))
        failed_stages = ("quarantined",) if too_many is None else ("quarantined", "embedded")
        if access_only := _stage_access_only(ctx, conn, failed_stages):
            counts["access_only_versions"] += access_only
        for source, uri in store.work_items.item_keys(conn, ctx.run_id, "planned", ("gone",)):
            counts["tombstones"] += store.versions.stage_tombstone(conn, ctx.run_id, source, uri)
        if too_many is not None:
            if not any(counts.values()):
                raise TooManyFailuresError(too_many)
            counts["content_held_back"] = len(store.work_items.item_keys(conn, ctx.run_id, "embedded", CONTENT_ACTIONS))
            store.runs.update_run(conn, ctx.run_id, error=too_many + "; its access changes and removals are published")
        store.runs.update_run(conn, ctx.run_id, counts={"staged": dict(counts)})
    return StageResult(counts=dict(counts))


def _stage_content(ctx: SyncContext, conn, model_id: int, counts: Counter) -> None:  # noqa: ANN001
    for batch in work_batches(ctx, conn, "embedded", ("chunks", "embeddings"), "stage"):
        for item in batch:
            chunks = item["chunks"]["chunks"]
            matrix = np.frombuffer(item["embeddings"], dtype=np.float32).reshape(len(chunks), -1) if chunks else np.zeros((0, 1), np.float32)
            fields = {
                "checksum": item["checksum"],
                "blob_sha256": item["blob_sha256"],
                "size_bytes": item["size_bytes"],
                "media_type": mimetypes.guess_type(item["uri"])[0],
                "acl_groups": item["acl_groups"],
                "parser_version": item["chunks"]["parser"],
                "cleaner_version": CLEANER_VERSION,
                "chunker_version": CHUNKER_VERSION,
                "model_id": model_id,
                "cleaning_counts": item["chunks"].get("cleaning", {}),
                "language": item["chunks"].get("language"),
            }
            if store.versions.stage_content_version(conn, ctx.run_id, item["source"], item["uri"], fields, chunks, matrix):
                counts["versions"] += 1
                counts["chunks"] += len(chunks)


def _stage_access_only(ctx: SyncContext, conn, stages: tuple[str, ...]) -> int:  # noqa: ANN001
    """Access-only versions of the live content for items whose content did not make it but
    whose groups differ from the live version's (a revocation must never wait for a parser)."""
    staged = 0
    live_by_source: dict[str, dict] = {}
    for source, uri, groups in store.work_items.item_groups(conn, ctx.run_id, stages, ("changed", "reparse")):
        live = live_by_source.setdefault(source, store.versions.live_versions(conn, source)).get(uri)
        if live is not None and sorted(live.acl_groups) != sorted(groups):
            staged += store.versions.stage_acl_version(conn, ctx.run_id, source, uri, groups)
    return staged


def _acl(conn, ctx: SyncContext, source: str, uri: str) -> list[str]:  # noqa: ANN001
    return store.work_items.load_items(conn, ctx.run_id, [(source, uri)], ())[0]["acl_groups"]


def _too_many_failures(ctx: SyncContext, conn) -> str | None:  # noqa: ANN001
    """Why the run's content must be held back, or None. Only NEW failures count: a file
    quarantined before with the same checksum fails again by definition, and would otherwise
    block every later sync; it is left out of the base too."""
    stages = store.work_items.item_stage_counts(conn, ctx.run_id)
    new_failures = stages.get("quarantined", 0) - store.work_items.known_failures(conn, ctx.run_id)
    attempted = new_failures + sum(v for k, v in stages.items() if k in ("embedded", "staged"))
    if new_failures >= 2 and attempted and new_failures / attempted > ctx.config.max_failed_share:
        return (
            f"{new_failures} of {attempted} files failed and were quarantined (more than "
            f"max_failed_share {ctx.config.max_failed_share:.0%}); no new content is published. "
            "See `rag-pipeline status` for the errors"
        )
    return None


def publish_run(ctx: SyncContext) -> PublishResult:
    """Publish a run whose gate passed; the gate's verdict is re-read from the database so a
    publish step started on its own can never bypass it."""
    with ctx.connect() as conn:
        run = store.runs.get_run(conn, ctx.run_id)
        if run is None or run["gate_passed"] is not True:
            reason = (run or {}).get("gate_reason") or "the evaluation gate has not run for this run"
            raise GateNotPassedError(f"run {ctx.run_id} is not publishable: {reason}")
        counts = store.versions.publish(conn, ctx.run_id)
        nothing = not any(counts.values())
        held_back = (run.get("counts") or {}).get("staged", {}).get("content_held_back") is not None
        store.runs.update_run(  # content held back: access changes went live, yet the run failed
            conn, ctx.run_id, status="failed" if held_back else "nothing_to_do" if nothing else "published",
            counts={"published": counts}, finished=True,
        )
        store.work_items.cleanup_run_items(conn, ctx.run_id)
    return PublishResult(counts=counts)


def finish_idle_run(ctx: SyncContext, embedder: Embedder) -> PublishResult | None:
    """Finish a run whose plan recorded no work item (nothing new, changed, moved in access or
    gone) right after plan, with the verdict and status steps 7 and 8 would record (the gate's
    reason for an unchanged index, status `nothing_to_do`), so the job can skip the steps
    between: they cost a no-op sync most of its time. None when there is work."""
    with ctx.connect() as conn:
        if store.work_items.item_stage_counts(conn, ctx.run_id):
            return None
    run_gate(ctx, embedder)  # nothing staged: records why and loads no model
    return publish_run(ctx)


def fail_run(ctx: SyncContext, *, status: str, reason: str) -> None:
    with ctx.connect() as conn:
        store.runs.fail_run(conn, ctx.run_id, status=status, reason=reason)

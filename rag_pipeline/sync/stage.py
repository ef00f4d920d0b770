"""Step 6, stage: each changed document becomes a new, invisible version with its chunks and
ACL groups in one transaction; ACL-only changes copy the live chunks; gone documents get
staged tombstones. Step 8, publish: one transaction makes them all live."""

from __future__ import annotations

import mimetypes
from collections import Counter
from typing import Any

import numpy as np

from rag_pipeline import store
from rag_pipeline.chunking import CHUNKER_VERSION
from rag_pipeline.cleaning.clean import CLEANER_VERSION
from rag_pipeline.sync.context import SyncContext
from rag_pipeline.sync.process import CONTENT_ACTIONS


class TooManyFailuresError(Exception):
    """More of the run's files were quarantined than `max_failed_share` allows."""


class GateNotPassedError(Exception):
    """Publish was asked for a run whose evaluation gate did not pass."""


def stage_items(ctx: SyncContext, model_id: int) -> dict[str, Any]:
    counts: Counter = Counter()
    with ctx.connect() as conn:
        _check_failure_share(ctx, conn)
        for batch in _content_batches(ctx, conn):
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
                }
                if store.stage_content_version(conn, ctx.run_id, item["source"], item["uri"], fields, chunks, matrix):
                    counts["versions"] += 1
                    counts["chunks"] += len(chunks)
        for source, uri in store.item_keys(conn, ctx.run_id, "planned", ("acl_changed",)):
            counts["acl_versions"] += store.stage_acl_version(conn, ctx.run_id, source, uri, _acl(conn, ctx, source, uri))
        for source, uri in store.item_keys(conn, ctx.run_id, "planned", ("gone",)):
            counts["tombstones"] += store.stage_tombstone(conn, ctx.run_id, source, uri)
        store.update_run(conn, ctx.run_id, counts={"staged": dict(counts)})
    return {"counts": dict(counts)}


def _content_batches(ctx: SyncContext, conn):  # noqa: ANN001, ANN202
    keys = store.item_keys(conn, ctx.run_id, "embedded", CONTENT_ACTIONS)
    for i, batch in enumerate(store.iter_batches(keys, ctx.config.batch_size)):
        yield store.load_items(conn, ctx.run_id, batch, ("chunks", "embeddings"))
        ctx.progress("stage", min((i + 1) * ctx.config.batch_size, len(keys)), len(keys))


def _acl(conn, ctx: SyncContext, source: str, uri: str) -> list[str]:  # noqa: ANN001
    return store.load_items(conn, ctx.run_id, [(source, uri)], ())[0]["acl_groups"]


def _check_failure_share(ctx: SyncContext, conn) -> None:  # noqa: ANN001
    stages = store.item_stage_counts(conn, ctx.run_id)
    quarantined = stages.get("quarantined", 0)
    attempted = quarantined + sum(v for k, v in stages.items() if k in ("embedded", "staged"))
    if quarantined >= 2 and attempted and quarantined / attempted > ctx.config.max_failed_share:
        raise TooManyFailuresError(
            f"{quarantined} of {attempted} files failed and were quarantined (more than "
            f"max_failed_share {ctx.config.max_failed_share:.0%}); nothing is published. "
            "See `rag-pipeline status` for the errors"
        )


def publish_run(ctx: SyncContext) -> dict[str, Any]:
    """Publish a run whose gate passed; the gate's verdict is re-read from the database so a
    publish step started on its own can never bypass it."""
    with ctx.connect() as conn:
        run = store.get_run(conn, ctx.run_id)
        if run is None or run["gate_passed"] is not True:
            reason = (run or {}).get("gate_reason") or "the evaluation gate has not run for this run"
            raise GateNotPassedError(f"run {ctx.run_id} is not publishable: {reason}")
        counts = store.publish(conn, ctx.run_id)
        nothing = not any(counts.values())
        store.update_run(
            conn, ctx.run_id, status="nothing_to_do" if nothing else "published",
            counts={"published": counts}, finished=True,
        )
        store.cleanup_run_items(conn, ctx.run_id)
    return {"counts": counts}


def fail_run(ctx: SyncContext, *, status: str, reason: str) -> None:
    with ctx.connect() as conn:
        store.fail_run(conn, ctx.run_id, status=status, reason=reason)

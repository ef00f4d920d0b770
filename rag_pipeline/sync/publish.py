"""Step 8, publish, and the other ends of a run: one transaction (store.versions.publish) makes
every version and tombstone the run staged live and closes the validity of those they replace,
only when the run's gate passed; a run with nothing to do finishes right after plan; a run
that cannot go on is failed with its reason."""

from __future__ import annotations

from rag_pipeline import store
from rag_pipeline.embedding import Embedder
from rag_pipeline.errors import GateFailedError
from rag_pipeline.sync import multilingual
from rag_pipeline.sync.context import SyncContext
from rag_pipeline.sync.counts import Counts
from rag_pipeline.sync.gate import run_gate


class GateNotPassedError(GateFailedError):
    """Publish was asked for a run whose evaluation gate did not pass."""


class PublishResult(Counts):
    """counts: published, superseded, tombstoned."""


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
    between: they cost a no-op sync most of its time. None when there is work.

    An idle run still gives the live index the multilingual vectors it lacks (an index synced
    before migration 034, or with `embedding.multilingual` off until now): they are derived
    from live chunks, so nothing new becomes visible."""
    with ctx.connect() as conn:
        if store.work_items.item_stage_counts(conn, ctx.run_id):
            return None
    if ctx.config.embedding.multilingual and any((caught := multilingual.embed_missing(ctx)).values()):
        ctx.record_counts("multilingual", caught)
    run_gate(ctx, embedder)  # nothing staged: records why and loads no model
    return publish_run(ctx)


def fail_run(ctx: SyncContext, *, status: str, reason: str) -> None:
    with ctx.connect() as conn:
        store.runs.fail_run(conn, ctx.run_id, status=status, reason=reason)

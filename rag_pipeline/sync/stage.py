"""Step 6, stage: each changed document becomes a new, invisible version with its chunks and
ACL groups in one transaction; ACL-only changes copy the live chunks; gone documents get
staged tombstones. Nothing staged is visible until publish (sync/publish.py)."""

from __future__ import annotations

import mimetypes
import queue
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack

from rag_pipeline import store
from rag_pipeline.chunking.chunks import CHUNKER_VERSION
from rag_pipeline.cleaning.clean import CLEANER_VERSION
from rag_pipeline.common.cpus import usable_cores
from rag_pipeline.errors import PipelineError
from rag_pipeline.sync import multilingual
from rag_pipeline.sync.batches import CONTENT_ACTIONS, work_batches
from rag_pipeline.sync.context import SyncContext
from rag_pipeline.sync.counts import Counts
from rag_pipeline.sync.items import WorkItem

STAGE_WRITERS = 4  # a cap: an embedded server has this machine's cores, more writers only queue on them


class TooManyFailuresError(PipelineError):
    """More of the run's files were quarantined than `max_failed_share` allows."""


class StageResult(Counts):
    """counts: versions, chunks, acl_versions, access_only_versions, tombstones, content_held_back,
    multilingual_encoded and multilingual_reused (vectors of non-English chunks: sync/multilingual.py)."""


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
        dimension = store.models.model_by_id(conn, model_id)["dimension"]
        if too_many is None:
            # a first load into an empty index builds the vector index after its rows (033)
            store.models.defer_vector_index(conn, dimension)
            _stage_content(ctx, conn, model_id, counts)
        # whether this run or an earlier failed one left it out: every staged row is indexed
        store.models.ensure_vector_index(conn, dimension)
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
        if ctx.config.embedding.multilingual:
            counts.update({f"multilingual_{k}": n for k, n in multilingual.embed_missing(ctx).items() if n})
        store.index_upkeep.flush_pending_lists(conn)  # what this run wrote, merged for the gate's and later searches
        store.runs.update_run(conn, ctx.run_id, counts={"staged": dict(counts)})
    return StageResult(counts=dict(counts))


def _stage_content(ctx: SyncContext, conn, model_id: int, counts: Counter) -> None:  # noqa: ANN001
    """Each document's version in its own transaction, on up to `stage_writers()` connections
    at once. The INSERT of a version's chunks is PostgreSQL's work (HNSW insertion about half:
    bench/README.md, issue 28), so one connection left all but one of the server's cores idle
    while a large sync staged. Documents never share rows, and a retried step skips what this
    run staged already, whichever connection staged it."""
    with ExitStack() as stack:
        writers = stage_writers()
        idle: queue.SimpleQueue = queue.SimpleQueue()
        for _ in range(writers):
            idle.put(stack.enter_context(ctx.connect()))
        pool = ThreadPoolExecutor(writers, thread_name_prefix="stage")
        # a failure (or a stop) waits for the versions being written, and starts no more
        stack.callback(pool.shutdown, wait=True, cancel_futures=True)

        def stage_one(item: WorkItem) -> int | None:
            writer = idle.get()
            try:
                return _stage_version(ctx, writer, model_id, item)
            finally:
                idle.put(writer)

        for batch in work_batches(ctx, conn, "embedded", ("chunks", "embeddings"), "stage"):
            for staged in pool.map(stage_one, batch):
                if staged is not None:
                    counts["versions"] += 1
                    counts["chunks"] += staged


def stage_writers() -> int:
    """Connections the stage step writes on: one per usable core, at most STAGE_WRITERS."""
    return min(STAGE_WRITERS, usable_cores())


def _stage_version(ctx: SyncContext, conn, model_id: int, item: WorkItem) -> int | None:  # noqa: ANN001
    """Stage one document's content version; its chunk count, or None when this run had
    staged it already (a retried step)."""
    chunked = item.chunked
    fields = {
        "checksum": item.checksum,
        "blob_sha256": item.blob_sha256,
        "size_bytes": item.size_bytes,
        "media_type": mimetypes.guess_type(item.uri)[0],
        "acl_groups": item.acl_groups,
        "parser_version": chunked.parser,
        "cleaner_version": CLEANER_VERSION,
        "chunker_version": CHUNKER_VERSION,
        "model_id": model_id,
        "cleaning_counts": chunked.cleaning,
        "language": chunked.language,
    }
    chunks = [c.to_dict() for c in chunked.chunks]
    if store.versions.stage_content_version(conn, ctx.run_id, item.source, item.uri, fields, chunks, item.embeddings):
        return len(chunks)
    return None


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
    return WorkItem.from_row(store.work_items.load_items(conn, ctx.run_id, [(source, uri)], ())[0], "stage").acl_groups


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

"""Step 1, plan: list every source, compare with the live index, copy new bytes into the blob
store and record the run's work items (new, changed, acl_changed, reparse, gone).

A file the parser refused before is not a work item while its bytes and everything the
refusal depends on are the same (`still_quarantined`, see sync/parse_key.py): the run records
the same quarantine entry again, so it stays visible, and a corpus with one broken file still
gets a sync with nothing to do when nothing changed."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

from rag_pipeline import store
from rag_pipeline.chunking.chunks import CHUNKER_VERSION
from rag_pipeline.cleaning.clean import CLEANER_VERSION
from rag_pipeline.embedding import ModelError
from rag_pipeline.errors import PipelineError
from rag_pipeline.sources import ObjectReadError, SkippedObject, SourceObject, name_problem, open_source, quarantine_name
from rag_pipeline.sync.batches import CONTENT_ACTIONS
from rag_pipeline.sync.context import SyncContext
from rag_pipeline.sync.parse_key import parse_key, parser_version_for_name

STILL_QUARANTINED = "still_quarantined"
NOT_AGAIN = "not parsed again: same bytes, parser and limits as when it failed"


class ModelMismatchError(ModelError):
    """The configured embedding model is not the live index's model; a sync never mixes them."""


class TombstoneGuardError(PipelineError):
    """A run would remove more of a source's documents than allowed; it needs an explicit flag."""


@dataclass
class PlanResult:
    counts: Counter = field(default_factory=Counter)  # per action, plus 'unchanged', 'skipped'
    per_source: dict[str, Counter] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"counts": dict(self.counts), "per_source": {s: dict(c) for s, c in self.per_source.items()}}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> PlanResult:
        return cls(counts=Counter(data.get("counts") or {}),
                   per_source={s: Counter(c) for s, c in (data.get("per_source") or {}).items()})


def plan_run(
    ctx: SyncContext,
    model_id: int,
    source_names: Sequence[str] | None = None,
    *,
    allow_mass_tombstone: bool = False,
    is_alive: Callable[[str, datetime], bool] = lambda run_id, started: True,
) -> PlanResult:
    """Plan one run over the named sources (all configured ones by default)."""
    configs = [ctx.config.source(n) for n in source_names] if source_names else list(ctx.config.sources)
    names = [c.name for c in configs]
    _check_eval_set(ctx)
    result = PlanResult()
    with ctx.connect() as conn:
        # registers the run; waits (up to source_wait_seconds) while another run syncs one of them
        store.runs.claim_sources(conn, ctx.run_id, names, is_alive, model_id=model_id,
                                 wait_seconds=ctx.config.source_wait_seconds, on_wait=_waiting_reporter(ctx))
        _refuse_mixed_models(conn, model_id)
        for source_config in configs:
            result.per_source[source_config.name] = _plan_source(
                ctx, conn, source_config, allow_mass_tombstone
            )
        for counter in result.per_source.values():
            result.counts.update(counter)
        store.runs.update_run(conn, ctx.run_id, counts={"plan": dict(result.counts)})
    return result


def _check_eval_set(ctx: SyncContext) -> None:
    """Read the gate's evaluation set before any work: a wrong path or a broken case would
    otherwise surface only at the gate, after the whole run was parsed and encoded."""
    path = ctx.config.evaluation.eval_set
    if path is not None:
        from rag_pipeline.evaluation.answer_cases import load_answer_cases
        from rag_pipeline.evaluation.evaluate import load_eval_set

        load_eval_set(path)
        load_answer_cases(path)


def _waiting_reporter(ctx: SyncContext) -> store.runs.WaitReport:
    """Says who the run waits for, in the run's log and as a progress line (seconds waited of
    the most it will wait)."""
    limit = ctx.config.source_wait_seconds

    def report(holder: store.runs.SourceHolder, waited: float) -> None:
        ctx.notice(f"waiting for {holder.describe()} ({waited:.0f} s of at most {limit:g} s, source_wait_seconds)")
        ctx.progress("wait " + ",".join(holder.sources), int(waited), int(limit))

    return report


def _refuse_mixed_models(conn, model_id: int) -> None:  # noqa: ANN001
    live = store.models.live_model_ids(conn)
    if live and live != [model_id]:
        current = store.models.model_by_id(conn, live[0]) or {}
        raise ModelMismatchError(
            f"the live index was embedded with model {current.get('name')} "
            f"({current.get('revision')}, weights {str(current.get('weights_sha256'))[:12]}, "
            f"{current.get('numerics', 'fp32')} numerics) but the configured model differs (embedding.backend "
            "onnx-int8 is a model of its own); a sync never mixes models: configure the index's model, or run a model migration"
        )


def _plan_source(ctx: SyncContext, conn, source_config, allow_mass_tombstone: bool) -> Counter:  # noqa: ANN001
    source = open_source(source_config, ctx.config.limits.max_bytes)
    live = store.versions.live_versions(conn, source_config.name)
    known = store.source_fingerprints.load_fingerprints(conn, source_config.name)
    refusals = store.quarantine.parser_refusals(conn, source_config.name)
    counts: Counter = Counter()
    items: list[dict] = []
    learned: list[tuple[str, str, str]] = []  # (uri, listing fingerprint, content sha256)
    seen: set[str] = set()
    refused: list[dict] = []
    listed = 0
    for obj in source.list_objects():  # raises ListingError: then nothing below runs, nothing is tombstoned
        listed += 1
        if problem := name_problem(obj.uri):  # one bad name never blocks the rest of the source
            counts["skipped"] += 1
            store.quarantine.record_quarantine(conn, ctx.run_id, source_config.name, quarantine_name(obj.uri), None,
                                               "list", problem)
            continue
        seen.add(obj.uri)  # listed, even if it cannot be offered now: never "gone"
        try:
            if isinstance(obj, SkippedObject):
                raise ObjectReadError(obj.reason)
            learned_before = len(learned)
            action, item, too_large = _plan_object(ctx, source, source_config.name, obj, live.get(obj.uri),
                                                   known.get(obj.uri), learned, refusals.get(obj.uri))
            if len(learned) > learned_before:
                _forget_purged_bytes(ctx, conn, live.get(obj.uri), action, learned[-1][2])
        except ObjectReadError as exc:
            counts["skipped"] += 1
            stage = "list" if isinstance(obj, SkippedObject) else "read"
            store.quarantine.record_quarantine(conn, ctx.run_id, source_config.name, obj.uri, None, stage, str(exc))
            continue
        if action == STILL_QUARANTINED:
            _carry_refusal(conn, ctx, source_config.name, obj.uri, refusals[obj.uri])
        counts[action] += 1
        if item is not None:
            (refused if too_large else items).append(item)
        if listed % 100 == 0:
            ctx.progress(f"plan {source_config.name}", listed, 0)
    counts.update(getattr(source, "request_stats", {}))  # e.g. S3 calls and retries, for the run's report
    gone = sorted(set(live) - seen)
    _guard_tombstones(source_config, len(gone), len(live), allow_mass_tombstone)
    counts["gone"] = len(gone)
    items.extend(
        {"source": source_config.name, "uri": uri, "action": "gone", "checksum": None,
         "blob_sha256": None, "size_bytes": None, "acl_groups": []}
        for uri in gone
    )
    with conn.transaction():
        store.work_items.insert_items(conn, ctx.run_id, items + refused)
        for item in refused:
            store.work_items.quarantine_item(conn, ctx.run_id, item["source"], item["uri"], "limits", _too_large(ctx, item),
                                             parse_key(item["uri"], ctx.config.limits))
        store.source_fingerprints.record_fingerprints(conn, source_config.name, learned)
    return counts


def _plan_object(ctx: SyncContext, source, source_name: str, obj: SourceObject,  # noqa: ANN001
                 live: store.versions.LiveVersion | None, known: tuple[str, str] | None,
                 learned: list[tuple[str, str, str]], refusal: dict | None = None) -> tuple[str, dict | None, bool]:
    """The object's action, its work item and whether that item is refused as too large by its
    listed size (then never read nor stored; its access change still applies). A listing fingerprint (S3 ETag+size) is turned into
    the content SHA-256 through what earlier runs learned, or by downloading once: so a changed
    object is always compared by content, and identical bytes under a new ETag are unchanged."""
    blob = None
    checksum = obj.checksum
    if not checksum.startswith("sha256:"):
        if known is not None and known[0] == checksum:
            checksum = "sha256:" + known[1]
        else:
            blob = ctx.blobs.put(_read(source, obj.uri))
            learned.append((obj.uri, obj.checksum, blob))
            checksum = "sha256:" + blob
    obj = replace(obj, checksum=checksum)
    action = _action(obj, live)
    if action == "unchanged":
        return action, None, False
    if _refused_again(ctx, obj, action, live, refusal):
        return STILL_QUARANTINED, None, False
    if action in CONTENT_ACTIONS and blob is None and obj.size > ctx.config.limits.max_bytes:
        return action, _refused_item(source_name, obj, action), True
    return action, _item(ctx, source, source_name, obj, action, blob), False


def _forget_purged_bytes(ctx: SyncContext, conn, live: store.versions.LiveVersion | None, action: str,  # noqa: ANN001
                         blob: str) -> None:
    """A listing fingerprint it did not know (an S3 ETag) made the plan read and store an object's
    bytes; if they are the bytes of a purged live version (same checksum: nothing to index), they
    go again unless something not purged uses them, so a purge stays a purge."""
    if live is None or not live.purged or action not in ("unchanged", "acl_changed"):
        return
    if not store.purge.blob_users(conn, blob, []):
        ctx.blobs.delete(blob)


def _read(source, uri: str) -> bytes:  # noqa: ANN001
    """A listed object's bytes; one that vanished since the listing is an ObjectReadError
    (quarantined for this run, gone on the next), never a crash."""
    try:
        return source.read(uri)
    except OSError as exc:
        raise ObjectReadError(f"cannot read {uri!r} after listing it: {exc}") from exc


def _refused_item(source_name: str, obj: SourceObject, action: str) -> dict:
    """A work item for a file over limits.max_bytes by its listed size: quarantined at once
    (its access change, if any, still applies), its bytes never read nor kept."""
    return {"source": source_name, "uri": obj.uri, "action": action, "checksum": obj.checksum,
            "blob_sha256": None, "size_bytes": obj.size, "acl_groups": list(obj.acl_groups)}


def _too_large(ctx: SyncContext, item: dict) -> str:
    mib = 1024 * 1024
    return (f"file is too large: {item['size_bytes'] / mib:.1f} MiB is over the "
            f"{ctx.config.limits.max_bytes / mib:.1f} MiB limit; it was not read. "
            "Split the document or raise limits.max_bytes")


def _refused_again(ctx: SyncContext, obj: SourceObject, action: str, live: store.versions.LiveVersion | None,
                   refusal: dict | None) -> bool:
    """Whether the parser would refuse these bytes again: it refused the same content under the
    same parse key, and nothing else about the file needs this run (a live version whose access
    changed takes the normal way, so the change is published; see stage._stage_access_only)."""
    if refusal is None or action not in ("new", "changed") or refusal["checksum"] != obj.checksum:
        return False
    if live is not None and sorted(live.acl_groups) != sorted(obj.acl_groups):
        return False
    return refusal["parse_key"] == parse_key(obj.uri, ctx.config.limits)


def _carry_refusal(conn, ctx: SyncContext, source_name: str, uri: str, refusal: dict) -> None:  # noqa: ANN001
    """The earlier refusal, recorded for this run as well: status, the run's report and the
    failure-share rule (a known failure, never a new one) see it as before."""
    error = refusal["error"] if NOT_AGAIN in refusal["error"] else f"{refusal['error']} ({NOT_AGAIN})"
    store.quarantine.record_quarantine(conn, ctx.run_id, source_name, uri, refusal["checksum"], refusal["stage"],
                                       error, refusal["parse_key"])


def _action(obj: SourceObject, live: store.versions.LiveVersion | None) -> str:
    """What the run does with a listed object. The model is not compared: a sync never mixes
    models (`_refuse_mixed_models` ran first), so a live version embedded with another model is
    one a model migration switched away from, and the switch gave each of its chunks a vector of
    the index's model (model_vectors). Re-parsing it would make a new version of every document
    after every migration: identical text, the history of each document cluttered, every PDF
    parsed again."""
    if live is None:
        return "new"
    if live.checksum != obj.checksum:
        return "changed"
    if live.purged:  # the same bytes never bring purged text back (not even a new parser's reparse)
        return "acl_changed" if tuple(sorted(live.acl_groups)) != tuple(sorted(obj.acl_groups)) else "unchanged"
    if (
        live.parser_version != parser_version_for_name(obj.uri)
        or live.cleaner_version != CLEANER_VERSION
        or live.chunker_version != CHUNKER_VERSION
        or live.text_config_outdated
    ):
        return "reparse"
    if tuple(sorted(live.acl_groups)) != tuple(sorted(obj.acl_groups)):
        return "acl_changed"
    return "unchanged"


def _item(ctx: SyncContext, source, source_name: str, obj: SourceObject, action: str,  # noqa: ANN001
          blob: str | None = None) -> dict:
    if action != "acl_changed" and blob is None:
        blob = ctx.blobs.put(_read(source, obj.uri))
    checksum = obj.checksum
    if checksum.startswith("sha256:") and blob is not None:
        checksum = "sha256:" + blob  # the bytes we index, even if the file changed since listing
    return {
        "source": source_name,
        "uri": obj.uri,
        "action": action,
        "checksum": checksum,
        "blob_sha256": blob,
        "size_bytes": obj.size,
        "acl_groups": list(obj.acl_groups),
    }


def _guard_tombstones(source_config, gone: int, live: int, allowed: bool) -> None:  # noqa: ANN001
    if allowed or live == 0 or gone == 0:
        return
    share = gone / live
    if share > source_config.max_tombstone_share:
        raise TombstoneGuardError(
            f"source {source_config.name!r}: {gone} of {live} live documents ({share:.0%}) are gone from "
            f"the source, more than max_tombstone_share {source_config.max_tombstone_share:.0%}; "
            "if that is intended, re-run with --allow-mass-tombstone"
        )


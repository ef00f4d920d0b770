"""The sync graph: plan -> parsed -> cleaned -> chunked -> embedded -> staged -> published,
with the blocking evaluation gate on `staged`. Each asset calls one core step and reports
counts as metadata (numbers are plotted over time in the UI). Data moves through PostgreSQL
and the blob store, never through an IO manager."""


from collections.abc import Mapping
from datetime import datetime
from typing import Any

import dagster as dg

from rag_pipeline import store
from rag_pipeline.defs.resources import DocumentSources, EmbeddingModel, IndexDatabase, ProgressReporter
from rag_pipeline.defs.retries import retry_transient
from rag_pipeline.defs.source_assets import source_observation
from rag_pipeline.defs.tags import TAG_OUTCOME
from rag_pipeline.sync import gate, process, stage
from rag_pipeline.sync import plan as planning
from rag_pipeline.sync.context import SyncContext

GROUP = "sync"
OWNERS = ["team:data-engineering"]
PY_PG = {"python", "postgres"}  # steps that compute in Python and write PostgreSQL
PY_PG_VECTOR = {"python", "postgres", "pgvector"}  # ... and touch the vector index


class PlanConfig(dg.Config):
    sources: list[str] = []  # empty = every configured source
    allow_mass_tombstone: bool = False


def _ctx(context: dg.AssetExecutionContext, database: IndexDatabase, progress: ProgressReporter) -> SyncContext:
    def report(step: str, done: int, total: int) -> None:
        progress(step, done, total)
        if total and (done == total or done % 200 == 0):
            context.log.info(f"{step}: {done}/{total}")

    def notice(message: str) -> None:
        context.log.warning(message)
        progress.notice(message)

    return database.context(context.run_id, report, notice)


def _numbers(prefix: str, counts: Mapping[str, Any]) -> dict[str, Any]:
    return {f"{prefix}{k}": int(v) for k, v in sorted(counts.items()) if isinstance(v, (int, float))}


def _md_table(header: tuple[str, ...], rows: list[tuple[Any, ...]]) -> dg.MetadataValue:
    def cell(value: Any) -> str:
        return str(value).replace("|", "\\|").replace("\n", " ")

    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in rows]
    return dg.MetadataValue.md("\n".join(lines))


def _is_alive(context: dg.AssetExecutionContext):  # noqa: ANN202
    """A run Dagster says has finished is dead; otherwise the run's own lock and lease in the
    index database decide (store.runs), since a killed run stays STARTED in Dagster forever."""

    def alive(run_id: str, started_at: datetime) -> bool:
        run = context.instance.get_run_by_id(run_id)
        return run is None or not run.is_finished

    return alive


@dg.asset(group_name=GROUP, kinds=PY_PG, owners=OWNERS, description="List sources, compare checksums and ACLs with the live index, record work items.")
def plan(
    context: dg.AssetExecutionContext,
    config: PlanConfig,
    database: IndexDatabase,
    sources: DocumentSources,
    embedding_model: EmbeddingModel,
    progress: dg.ResourceParam[ProgressReporter],
) -> dg.MaterializeResult:
    ctx = _ctx(context, database, progress)
    names = [s.name for s in sources.select(config.sources)]
    embedder = embedding_model.get()
    with ctx.connect() as conn:
        model_id = store.models.register_model(conn, embedder.identity.as_dict())
    result = planning.plan_run(ctx, model_id, names, allow_mass_tombstone=config.allow_mass_tombstone,
                           is_alive=_is_alive(context))
    rows = [(s, *(c.get(k, 0) for k in ("new", "changed", "acl_changed", "reparse", "unchanged", "gone", "skipped")))
            for s, c in result.per_source.items()]
    return dg.MaterializeResult(metadata={
        **_numbers("", {k: result.counts.get(k, 0) for k in ("new", "changed", "acl_changed", "reparse", "unchanged", "gone", "skipped")}),
        "sources": _md_table(("source", "new", "changed", "acl_changed", "reparse", "unchanged", "gone", "skipped"), rows),
        "model": f"{embedder.identity.name} ({embedder.identity.revision})",
        "run_id": context.run_id,
    })


@dg.asset(group_name=GROUP, kinds=PY_PG, owners=OWNERS, deps=[plan], description="Parse new and changed documents layout-aware; quarantine failures.")
@retry_transient
def parsed(context: dg.AssetExecutionContext, database: IndexDatabase,
           progress: dg.ResourceParam[ProgressReporter]) -> dg.MaterializeResult:
    ctx = _ctx(context, database, progress)
    result = process.parse_items(ctx)
    with ctx.connect() as conn:
        quarantined = store.quarantine.run_quarantine(conn, ctx.run_id)
    metadata: dict[str, Any] = {**_numbers("", result.counts), "quarantined": len(quarantined)}
    if quarantined:
        metadata["quarantine"] = _md_table(("source", "uri", "stage", "error"),
                                           [(q["source"], q["uri"], q["stage"], q["error"]) for q in quarantined])
    if result.warnings:
        more = result.counts.get("warning_count", 0) - len(result.warnings)
        metadata["warnings"] = dg.MetadataValue.md("\n".join([f"- {w}" for w in result.warnings]
                                                             + ([f"- ... and {more} more"] if more > 0 else [])))
    return dg.MaterializeResult(metadata=metadata)


@dg.asset(group_name=GROUP, kinds=PY_PG, owners=OWNERS, deps=[parsed], description="Strip boilerplate, neutralise control characters, redact secrets.")
@retry_transient
def cleaned(context: dg.AssetExecutionContext, database: IndexDatabase,
            progress: dg.ResourceParam[ProgressReporter]) -> dg.MaterializeResult:
    result = process.clean_items(_ctx(context, database, progress))
    rows = [(uri, ", ".join(f"{k}={v}" for k, v in sorted(c.items())) or "-") for uri, c in sorted(result.per_document.items())]
    if result.documents > len(rows):
        rows.append((f"... and {result.documents - len(rows)} more", ""))
    return dg.MaterializeResult(metadata={
        **_numbers("removed_", result.removed),
        "documents": result.documents,
        "removed_per_document": _md_table(("document", "removed"), rows),
    })


@dg.asset(group_name=GROUP, kinds=PY_PG, owners=OWNERS, deps=[cleaned], description="Chunk by section within the model's token limit.")
@retry_transient
def chunked(context: dg.AssetExecutionContext, database: IndexDatabase, embedding_model: EmbeddingModel,
            progress: dg.ResourceParam[ProgressReporter]) -> dg.MaterializeResult:
    result = process.chunk_items(_ctx(context, database, progress), embedding_model.get())
    return dg.MaterializeResult(metadata=_numbers("", result.counts))


@dg.asset(group_name=GROUP, kinds=PY_PG_VECTOR, owners=OWNERS, deps=[chunked], description="Embed chunks with the pinned model, reusing unchanged embeddings.")
@retry_transient
def embedded(context: dg.AssetExecutionContext, database: IndexDatabase, embedding_model: EmbeddingModel,
             progress: dg.ResourceParam[ProgressReporter]) -> dg.MaterializeResult:
    ctx = _ctx(context, database, progress)
    embedder = embedding_model.get()
    with ctx.connect() as conn:
        model_id = store.models.register_model(conn, embedder.identity.as_dict())
    result = process.embed_items(ctx, embedder, model_id)
    metadata = _numbers("chunks_", result.counts)
    if embedder.encoded_with is not None:  # something was encoded: which backend did it and why
        metadata["encoding_backend"] = dg.MetadataValue.json(embedder.encoded_with.as_dict())
    return dg.MaterializeResult(metadata=metadata)


@dg.asset(group_name=GROUP, kinds=PY_PG_VECTOR, owners=OWNERS, deps=[embedded], description="Write new versions, ACL-only versions and tombstones, invisible until published.")
@retry_transient
def staged(context: dg.AssetExecutionContext, database: IndexDatabase,
           progress: dg.ResourceParam[ProgressReporter]) -> dg.MaterializeResult:
    ctx = _ctx(context, database, progress)
    with ctx.connect() as conn:
        model_id = store.runs.get_run(conn, ctx.run_id)["model_id"]  # pinned at plan: no model load here
    result = stage.stage_items(ctx, model_id)
    return dg.MaterializeResult(metadata=_numbers("", result.counts))


@dg.asset_check(asset=staged, blocking=True, description="Evaluation set against the index as it will look after publishing.")
def evaluation_gate(context: dg.AssetCheckExecutionContext, database: IndexDatabase, embedding_model: EmbeddingModel,
                    progress: dg.ResourceParam[ProgressReporter]) -> dg.AssetCheckResult:
    ctx = database.context(context.run.run_id, progress)
    report = gate.run_gate(ctx, embedding_model.get())
    metadata = gate_metadata(report, ctx.config.evaluation.thresholds)
    if not report.passed:
        stage.fail_run(ctx, status="gate_failed", reason="evaluation gate failed: " + "; ".join(report.failures))
        context.instance.add_run_tags(context.run.run_id, {TAG_OUTCOME: "gate_failed"})  # not a crash, in the runs list
    return dg.AssetCheckResult(passed=report.passed, severity=dg.AssetCheckSeverity.ERROR, metadata=metadata)


def gate_metadata(report: Any, thresholds: Mapping[str, float]) -> dict[str, Any]:
    """What the check shows: each metric as a plain number (plotted over time), a table of every
    metric against its threshold, the verdict, and the cases that missed, titled by what they
    mean: `failing_cases` when the gate failed, `cases_under_par` when it passed anyway (the
    aggregate met every threshold), so a passed gate never lists "failing" cases."""
    from rag_pipeline.evaluation import MAX_METRICS

    metadata: dict[str, Any] = {k: float(v) for k, v in report.metrics.items()}
    rows = []
    for name, value in report.metrics.items():
        bound = thresholds.get(name)
        rule = "-" if bound is None else (f"<= {bound:g}" if name in MAX_METRICS else f">= {bound:g}")
        ok = "-" if bound is None else ("yes" if (value <= bound if name in MAX_METRICS else value >= bound) else "NO")
        rows.append((name, f"{value:.3f}", rule, ok))
    metadata["thresholds"] = _md_table(("metric", "value", "threshold", "met"), rows)
    metadata["verdict"] = "passed" if report.passed else "failed: " + "; ".join(report.failures)
    missed = [(c.id, c.expected, c.refused, c.source_hit, c.evidence_hit, c.acl_leaks, c.superseded_hits)
              for c in report.cases if c.failed]
    if missed:
        key = "cases_under_par" if report.passed else "failing_cases"
        metadata[key] = _md_table(("case", "expected", "refused", "source", "evidence", "leaks", "superseded"), missed)
    return metadata


@dg.asset(group_name=GROUP, kinds=PY_PG_VECTOR, owners=OWNERS, deps=[staged], description="Make the staged versions live in one transaction (only after the gate passed).")
@retry_transient
def published(context: dg.AssetExecutionContext, database: IndexDatabase,
              progress: dg.ResourceParam[ProgressReporter]) -> dg.MaterializeResult:
    ctx = _ctx(context, database, progress)
    result = stage.publish_run(ctx)
    with ctx.connect() as conn:
        run = store.runs.get_run(conn, ctx.run_id) or {}
        live = store.status.index_status(conn)["sources"]
    for name in run.get("sources") or []:  # each source's asset page shows its last sync
        context.log_event(source_observation(name, str(run.get("status")), live.get(name, {}), result.counts))
    return dg.MaterializeResult(metadata=_numbers("", result.counts))

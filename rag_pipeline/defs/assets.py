"""The sync graph: plan -> parsed -> cleaned -> chunked -> embedded -> staged -> published,
with the blocking evaluation gate on `staged`. Each asset calls one core step and reports
counts as metadata (numbers are plotted over time in the UI). Documents move through
PostgreSQL and the blob store; the heavy steps (parsed .. embedded) run as one step per shard
and pass only small JSON between their ops (see below)."""


import logging
from collections.abc import Callable, Iterator, Mapping
from datetime import datetime
from typing import Any

import dagster as dg

from rag_pipeline import store
from rag_pipeline.defs.controls import sync_run_only
from rag_pipeline.defs.markdown import md_table
from rag_pipeline.defs.resources import STEP_OUTPUTS, DocumentSources, EmbeddingModel, IndexDatabase, ProgressReporter
from rag_pipeline.defs.retries import retry_transient
from rag_pipeline.defs.source_assets import source_observation
from rag_pipeline.defs.tags import TAG_OUTCOME
from rag_pipeline.sync import chunk, clean, embed, gate, parse, publish, stage
from rag_pipeline.sync import plan as planning
from rag_pipeline.sync.batches import Shard
from rag_pipeline.sync.context import SyncContext
from rag_pipeline.sync.steps import SHARDED_STEPS, StepResult

GROUP = "sync"
OWNERS = ["team:data-engineering"]
PY_PG = {"python", "postgres"}  # steps that compute in Python and write PostgreSQL
PY_PG_VECTOR = {"python", "postgres", "pgvector"}  # ... and touch the vector index


class PlanConfig(dg.Config):
    sources: list[str] = []  # empty = every configured source
    allow_mass_tombstone: bool = False


def _ctx(context: dg.OpExecutionContext, database: IndexDatabase, progress: ProgressReporter) -> SyncContext:
    sync_run_only(context, f"the step {context.op.name!r}", database)

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


def _is_alive(context: dg.AssetExecutionContext):  # noqa: ANN202
    """A run Dagster says has finished is dead; otherwise the run's own lock and lease in the
    index database decide (store.runs), since a killed run stays STARTED in Dagster forever."""

    def alive(run_id: str, started_at: datetime) -> bool:
        run = context.instance.get_run_by_id(run_id)
        return run is None or not run.is_finished

    return alive


PLAN_COUNTS = ("new", "changed", "acl_changed", "reparse", "unchanged", "gone", "skipped", planning.STILL_QUARANTINED)


@dg.asset(group_name=GROUP, kinds=PY_PG, owners=OWNERS, output_required=False,
          description="List sources, compare checksums and ACLs with the live index, record work items. "
                      "With nothing to do, finish the run here: every later step is skipped.")
def plan(
    context: dg.AssetExecutionContext,
    config: PlanConfig,
    database: IndexDatabase,
    sources: DocumentSources,
    embedding_model: EmbeddingModel,
    progress: dg.ResourceParam[ProgressReporter],
) -> Iterator[dg.MaterializeResult]:
    ctx = _ctx(context, database, progress)
    names = [s.name for s in sources.select(config.sources)]
    embedder = embedding_model.get()
    with ctx.connect() as conn:
        model_id = store.models.register_model(conn, embedder.identity.to_dict())
    result = planning.plan_run(ctx, model_id, names, allow_mass_tombstone=config.allow_mass_tombstone,
                           is_alive=_is_alive(context))
    rows = [(s, *(c.get(k, 0) for k in PLAN_COUNTS)) for s, c in result.per_source.items()]
    metadata = {
        **_numbers("", {k: result.counts.get(k, 0) for k in PLAN_COUNTS}),
        "sources": md_table(("source", *PLAN_COUNTS), rows),
        "model": f"{embedder.identity.name} ({embedder.identity.revision})",
        "run_id": context.run_id,
    }
    idle = publish.finish_idle_run(ctx, embedder)
    if idle is None:
        yield dg.MaterializeResult(metadata=metadata)
        return
    # Nothing to do: no output, so Dagster skips every step after this one (the index is
    # unchanged, so no asset is materialised); the plan's counts and any file quarantined while
    # listing or reading (which `parsed` would otherwise have shown) are still observed.
    context.log_event(dg.AssetObservation(asset_key=context.asset_key, metadata={
        **metadata, **_quarantine_metadata(ctx),
        "outcome": "nothing to do: the run finished at plan, later steps skipped"}))
    _observe_sources(context, ctx, idle.counts)


# ---------------------------------------------------------------- the sharded heavy steps
# parsed, cleaned, chunked and embedded are graph-backed assets: an op lists the step's shards
# (one source, `shard_size` documents each), one op per shard does the work (a step of its own:
# `parsed.parse_shard[larkspur_0]`, which the Celery or Kubernetes executor may run on another
# machine), and an op combines their counts into the asset's metadata. The assets depend on
# each other as before, so every parse shard ends before the first clean shard starts (clean
# judges notices against every parsed document of the source). Between these ops only small
# JSON passes, through the index database (resources.IndexStepOutputs).

ShardStep = Callable[[dg.OpExecutionContext, SyncContext, Shard], StepResult]
Report = Callable[[dg.OpExecutionContext, SyncContext, Any], dict[str, Any]]


def _sharded_ops(step: str, resource_keys: set[str], run_shard: ShardStep, report: Report) -> tuple[Any, Any, Any]:
    """The three ops of one sharded step: list shards, work one shard, combine and report."""
    keys = {"database", "progress", *resource_keys}
    sharded = SHARDED_STEPS[step]

    @dg.op(name=f"{step}_shards", ins={"start": dg.In(dg.Nothing)}, out=dg.DynamicOut(io_manager_key=STEP_OUTPUTS),
           required_resource_keys=keys, description=f"List the run's shards for {step}.")
    @retry_transient
    def list_shards(context: dg.OpExecutionContext):  # noqa: ANN202 -- a generator of dynamic outputs
        ctx = _ctx(context, context.resources.database, context.resources.progress)
        shards = sharded.shards(ctx)
        context.log.info(f"{step}: {sum(len(s.uris) for s in shards)} documents in {len(shards)} shards")
        for shard in shards:
            yield dg.DynamicOutput(shard.to_dict(), mapping_key=shard.key)

    @dg.op(name=f"{step}_shard", out=dg.Out(io_manager_key=STEP_OUTPUTS), required_resource_keys=keys,
           description=f"{step.capitalize()} the documents of one shard.")
    @retry_transient
    def one_shard(context: dg.OpExecutionContext, shard: dict) -> dict:
        ctx = _ctx(context, context.resources.database, context.resources.progress)
        return run_shard(context, ctx, Shard.from_dict(shard)).to_dict()

    @dg.op(name=f"{step}_combine", out=dg.Out(dg.Nothing), required_resource_keys=keys,
           description=f"Combine the shards' results of {step} into the asset's metadata.")
    @retry_transient
    def combine(context: dg.OpExecutionContext, results: list[dict]) -> None:
        ctx = _ctx(context, context.resources.database, context.resources.progress)
        result = sharded.combine_dicts(ctx, results)
        context.add_output_metadata(report(context, ctx, result))

    return list_shards, one_shard, combine


# Executors that run every step of a run in one process, where a loaded model stays loaded.
SHARED_PROCESS_EXECUTORS = {"in_process", "execute_in_process_executor"}


def _parse_shard(context: dg.OpExecutionContext, ctx: SyncContext, shard: Shard) -> parse.ParseResult:
    pool = context.resources.parser.get()
    starts = pool.starts
    meanwhile = None
    if context.job_def.executor_def.name in SHARED_PROCESS_EXECUTORS:
        meanwhile = _load_model_meanwhile(context)
    result = parse.parse_items(ctx, shard, pool, meanwhile)
    if pool.starts > starts:
        context.log.info(f"started {pool.starts - starts} parser process(es) for this shard "
                         f"({pool.starts} in this step process, up to {pool.size} side by side)")
    return result


def _load_model_meanwhile(context: dg.OpExecutionContext) -> Callable[[], None]:
    """Load the embedding model (seconds of imports and weights) while the parse worker imports
    its own libraries: chunk and embed, later in this process, need it. Only where the steps
    share the process; a model that fails to load here is left for the chunk step to report."""

    def load() -> None:
        embedder = context.resources.embedding_model.get()
        if embedder.loaded or embedder.ready:
            return
        try:
            embedder.warm()
        except Exception as exc:  # noqa: BLE001 -- the chunk step loads again and fails with the real error
            context.log.warning(f"could not load the embedding model while parsing ({exc}); the chunk step will try again")
            return
        context.log.info("loaded the embedding model while the parser process started")

    return load


def _quarantine_metadata(ctx: SyncContext) -> dict[str, Any]:
    """The run's quarantined files (at listing, reading, parsing...), as ops read them in the UI."""
    with ctx.connect() as conn:
        quarantined = store.quarantine.run_quarantine(conn, ctx.run_id)
    metadata: dict[str, Any] = {"quarantined": len(quarantined)}
    if quarantined:
        metadata["quarantine"] = md_table(("source", "uri", "stage", "error"),
                                           [(q["source"], q["uri"], q["stage"], q["error"]) for q in quarantined])
    return metadata


def _parse_report(context: dg.OpExecutionContext, ctx: SyncContext, result: parse.ParseResult) -> dict[str, Any]:
    metadata: dict[str, Any] = {**_numbers("", result.counts), **_quarantine_metadata(ctx),
                                "parser_processes": result.parsers}
    if result.warnings:
        more = result.counts.get("warning_count", 0) - len(result.warnings)
        metadata["warnings"] = dg.MetadataValue.md("\n".join([f"- {w}" for w in result.warnings]
                                                             + ([f"- ... and {more} more"] if more > 0 else [])))
    return metadata


def _clean_shard(context: dg.OpExecutionContext, ctx: SyncContext, shard: Shard) -> clean.CleanResult:
    return clean.clean_items(ctx, shard)


def _clean_report(context: dg.OpExecutionContext, ctx: SyncContext, result: clean.CleanResult) -> dict[str, Any]:
    rows = [(uri, ", ".join(f"{k}={v}" for k, v in sorted(c.items())) or "-") for uri, c in sorted(result.per_document.items())]
    if result.documents > len(rows):
        rows.append((f"... and {result.documents - len(rows)} more", ""))
    return {
        **_numbers("removed_", result.removed),
        "documents": result.documents,
        "removed_per_document": md_table(("document", "removed"), rows),
    }


def _chunk_shard(context: dg.OpExecutionContext, ctx: SyncContext, shard: Shard) -> chunk.ChunkResult:
    return chunk.chunk_items(ctx, context.resources.embedding_model.get(), shard)


def _embed_shard(context: dg.OpExecutionContext, ctx: SyncContext, shard: Shard) -> embed.EmbedResult:
    embedder = context.resources.embedding_model.get()
    with ctx.connect() as conn:
        model_id = store.runs.get_run(conn, ctx.run_id)["model_id"]  # pinned at plan
    return embed.embed_items(ctx, embedder, model_id, shard)


def _embed_report(context: dg.OpExecutionContext, ctx: SyncContext, result: embed.EmbedResult) -> dict[str, Any]:
    metadata = _numbers("chunks_", result.counts)
    if result.backend is not None:  # something was encoded: which backend did it and why
        metadata["encoding_backend"] = dg.MetadataValue.json(result.backend)
    return metadata


parse_shards, parse_shard, parse_combine = _sharded_ops("parse", {"parser", "embedding_model"}, _parse_shard, _parse_report)
clean_shards, clean_shard, clean_combine = _sharded_ops("clean", set(), _clean_shard, _clean_report)
chunk_shards, chunk_shard, chunk_combine = _sharded_ops(
    "chunk", {"embedding_model"}, _chunk_shard, lambda context, ctx, result: _numbers("", result.counts))
embed_shards, embed_shard, embed_combine = _sharded_ops("embed", {"embedding_model"}, _embed_shard, _embed_report)


def _after(asset: str) -> dict[str, dg.AssetIn]:
    return {asset: dg.AssetIn(dagster_type=dg.Nothing)}


@dg.graph_asset(group_name=GROUP, kinds=PY_PG, owners=OWNERS, ins=_after("plan"),
                description="Parse new and changed documents layout-aware; quarantine failures. One step per shard.")
def parsed(plan: Any) -> Any:
    return parse_combine(parse_shards(start=plan).map(parse_shard).collect())


@dg.graph_asset(group_name=GROUP, kinds=PY_PG, owners=OWNERS, ins=_after("parsed"),
                description="Strip boilerplate, neutralise control characters, redact secrets. One step per shard.")
def cleaned(parsed: Any) -> Any:
    return clean_combine(clean_shards(start=parsed).map(clean_shard).collect())


@dg.graph_asset(group_name=GROUP, kinds=PY_PG, owners=OWNERS, ins=_after("cleaned"),
                description="Chunk by section within the model's token limit. One step per shard.")
def chunked(cleaned: Any) -> Any:
    return chunk_combine(chunk_shards(start=cleaned).map(chunk_shard).collect())


@dg.graph_asset(group_name=GROUP, kinds=PY_PG_VECTOR, owners=OWNERS, ins=_after("chunked"),
                description="Embed chunks with the pinned model, reusing unchanged embeddings. One step per shard.")
def embedded(chunked: Any) -> Any:
    return embed_combine(embed_shards(start=chunked).map(embed_shard).collect())


@dg.asset(group_name=GROUP, kinds=PY_PG_VECTOR, owners=OWNERS, deps=[embedded], description="Write new versions, ACL-only versions and tombstones, invisible until published, and the multilingual vectors of non-English chunks.")
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
                    progress: dg.ResourceParam[ProgressReporter]) -> Iterator[dg.AssetCheckResult]:
    """Yields the verdict, then, when it failed, fails its step with the verdict line itself
    (dg.Failure): the run page's failure message is then "evaluation gate failed: ndcg ...",
    not Dagster's DagsterAssetCheckFailedError trace. Either way the step fails, so `published`
    (which waits on this blocking check) never runs after a failed gate."""
    sync_run_only(context, "the evaluation gate", database)
    ctx = database.context(context.run.run_id, progress)
    with ctx.connect() as conn:
        planned = store.runs.get_run(conn, ctx.run_id) is not None
    if not planned:
        raise dg.Failure(description="the evaluation gate judges what its own run staged, and this run did not plan "
                                     "(the check was executed without the sync's steps): launch the sync job, or run "
                                     "`rag-pipeline eval` to judge the live index; no verdict recorded")
    report = gate.run_gate(ctx, embedding_model.get())
    metadata = gate_metadata(report, ctx.config.evaluation.thresholds)
    verdict = "evaluation gate failed: " + "; ".join(report.failures)
    if not report.passed:
        publish.fail_run(ctx, status="gate_failed", reason=verdict)
        context.instance.add_run_tags(context.run.run_id, {TAG_OUTCOME: "gate_failed"})  # not a crash, in the runs list
    yield dg.AssetCheckResult(passed=report.passed, severity=dg.AssetCheckSeverity.ERROR, metadata=metadata)
    if not report.passed:
        raise dg.Failure(description=verdict, allow_retries=False, metadata={
            "thresholds": metadata["thresholds"],
            "cases": "the check's result on `staged` lists the failing cases, grouped by the metric that failed"})


class _SkippedGateNotice(logging.Filter):
    """Dagster warns that a blocking check "emitted no result" whenever its step produced no
    output. The gate always yields a verdict or fails its step, so for it that means only that
    the step was skipped with `staged` (a run that finished at plan): nothing is published
    ungated, and `publish_run` re-reads the verdict from the index in any case."""

    def filter(self, record: logging.LogRecord) -> bool:
        return f"{evaluation_gate.check_key.to_user_string()!r} emitted no result" not in record.getMessage()


logging.getLogger("dagster._core.execution.plan.active").addFilter(_SkippedGateNotice())


def gate_metadata(report: Any, thresholds: Mapping[str, float]) -> dict[str, Any]:
    """What the check shows: each metric as a plain number (plotted over time), a table of every
    metric against its threshold, the verdict, and the cases that missed, titled by what they
    mean: `failing_cases` when the gate failed, `cases_under_par` when it passed anyway (the
    aggregate met every threshold), so a passed gate never lists "failing" cases."""
    from rag_pipeline.evaluation.evaluate import MAX_METRICS
    from rag_pipeline.evaluation.misses import misses_by_metric

    metadata: dict[str, Any] = {k: float(v) for k, v in report.metrics.items()}
    rows, unmet = [], []
    for name, value in report.metrics.items():
        bound = thresholds.get(name)
        rule = "-" if bound is None else (f"<= {bound:g}" if name in MAX_METRICS else f">= {bound:g}")
        ok = "-" if bound is None else ("yes" if (value <= bound if name in MAX_METRICS else value >= bound) else "NO")
        rows.append((name, f"{value:.3f}", rule, ok))
        if ok == "NO":
            unmet.append(name)
    metadata["thresholds"] = md_table(("metric", "value", "threshold", "met"), rows)
    metadata["verdict"] = "passed" if report.passed else "failed: " + "; ".join(report.failures)
    missed = [(c.id, c.expected, c.refused, c.source_hit, c.evidence_hit, c.acl_leaks, c.superseded_hits)
              for c in report.cases if c.failed]
    if missed:
        key = "cases_under_par" if report.passed else "failing_cases"
        metadata[key] = md_table(("case", "expected", "refused", "source", "evidence", "leaks", "superseded"), missed)
    # a failed metric's own cases, costliest first: rank, share of the shortfall, expected vs returned
    for metric, misses in misses_by_metric(report.cases, unmet).items():
        metadata[f"failing_{metric}"] = md_table(
            ("case", "rank", f"{metric} lost", "expected", "returned first"),
            [(m.case, m.rank or "-", f"{m.loss:.4f}", m.expected, m.returned) for m in misses])
    return metadata


@dg.asset(group_name=GROUP, kinds=PY_PG_VECTOR, owners=OWNERS, deps=[staged], description="Make the staged versions live in one transaction (only after the gate passed).")
@retry_transient
def published(context: dg.AssetExecutionContext, database: IndexDatabase,
              progress: dg.ResourceParam[ProgressReporter]) -> dg.MaterializeResult:
    ctx = _ctx(context, database, progress)
    result = publish.publish_run(ctx)
    _observe_sources(context, ctx, result.counts)
    return dg.MaterializeResult(metadata=_numbers("", result.counts))


def _observe_sources(context: dg.AssetExecutionContext, ctx: SyncContext, counts: dict[str, int]) -> None:
    """Each source's asset page shows its last sync: the run's status, live counts, published
    counts and its files in quarantine now."""
    with ctx.connect() as conn:
        run = store.runs.get_run(conn, ctx.run_id) or {}
        live = store.status.index_status(conn)["sources"]
        for name in run.get("sources") or []:
            context.log_event(source_observation(conn, name, ctx.run_id, str(run.get("status")), live.get(name, {}),
                                                 counts))

"""The `migrate_model` job: the steps of `rag-pipeline migrate-model` (rag_pipeline/migration) as
Dagster ops, each in its own step so the UI shows where a migration stands: start (resolve and
record the new model), embed (fill its vectors; counts and the estimate of the time left as
metadata), gate (both models' metrics side by side), switch. Run config:

    ops: {migration_start: {config: {to: all-MiniLM-L6-v2, backend: torch-bf16, no_worse: false}}}

or `rollback: true` instead of `to`. A killed run is continued by the next one (the migration's
row and vectors are in the index)."""

from typing import Any

import dagster as dg

from rag_pipeline import store
from rag_pipeline.defs.resources import IndexDatabase, PipelineSettings
from rag_pipeline.store import database as pg


class MigrationConfig(dg.Config):
    to: str = ""  # the new model (a folder, or a name in the Hugging Face cache)
    backend: str = ""  # its encoding backend; empty: the configuration's
    no_worse: bool = False
    rollback: bool = False
    wait_seconds: float = 600.0
    # lower the run's CPU priority by this much (0 keeps it) before anything is encoded, as the
    # CLI's --nice: searches served on the same machine keep their latency while it embeds
    nice: int = 10


def _connect(database: IndexDatabase) -> Any:
    """The pipeline's writer role, as the sync's steps use."""
    return pg.connect_as(database.url(), store.roles.WRITER)


def _lower_priority(by: int) -> int:
    """Lower the CPU priority of the run's steps by `by` and return the niceness now. The job runs
    in one process (in-process executor), so the embed step that follows, and the encoder threads
    it starts, run at it."""
    import os

    return os.nice(by) if by else os.nice(0)


@dg.op(description="Resolve and record the new model; begin (or continue) the migration to it.")
def migration_start(context: dg.OpExecutionContext, config: MigrationConfig, settings: PipelineSettings,
                    database: IndexDatabase) -> dict:
    from rag_pipeline.errors import UsageError
    from rag_pipeline.migration import steps

    if not 0 <= config.nice <= 19:
        raise UsageError("migrate_model: nice is a whole number from 0 to 19")
    niceness = _lower_priority(config.nice)
    with _connect(database) as conn:
        if config.rollback:
            started = steps.start_rollback(conn, settings.load())
        elif not config.to:
            raise UsageError("migrate_model: set ops.migration_start.config.to (the new model) or rollback: true")
        else:
            started = steps.start(conn, settings.load(), config.to, config.backend or None)
    context.add_output_metadata({"migration_id": started.migration_id, "from_model": started.from_model,
                                 "to_model": started.target.model_id, "kind": started.kind, "nice": niceness})
    return {"migration_id": started.migration_id, "no_worse": config.no_worse, "wait_seconds": config.wait_seconds}


@dg.op(description="Embed every live chunk with the new model beside the live vectors; build its vector index.")
def migration_embed(context: dg.OpExecutionContext, started: dict, settings: PipelineSettings,
                    database: IndexDatabase) -> dict:
    from rag_pipeline.migration import steps

    def progress(step: str, done: int, total: int) -> None:
        context.log.info(f"{step}: {done}/{total}")

    with _connect(database) as conn:
        resumed = steps.resume(conn, settings.load(), started["migration_id"])
        filled = steps.embed_all(conn, resumed, progress).to_dict()
    context.add_output_metadata({k: dg.MetadataValue.float(float(v)) if v is not None else dg.MetadataValue.text("-")
                                 for k, v in filled.items()})
    return {**started, "fill": filled}


@dg.op(description="The evaluation set against the live model and the new one, side by side.")
def migration_gate(context: dg.OpExecutionContext, embedded: dict, settings: PipelineSettings,
                   database: IndexDatabase) -> dict:
    from rag_pipeline.migration import steps

    with _connect(database) as conn:
        resumed = steps.resume(conn, settings.load(), embedded["migration_id"])
        verdict = steps.judge(conn, settings.load(), resumed, no_worse=embedded["no_worse"])
    table = "| metric | live | new |\n|---|---|---|\n" + "\n".join(
        f"| {name} | {live} | {new} |" for name, live, new in verdict.rows())
    context.add_output_metadata({"passed": verdict.passed, "reason": verdict.reason,
                                 "metrics": dg.MetadataValue.md(table)})
    return {**embedded, "gate": verdict.to_dict()}


@dg.op(description="Switch the index to the new model in one transaction, if the gate passed.")
def migration_switch(context: dg.OpExecutionContext, gated: dict, settings: PipelineSettings,
                     database: IndexDatabase) -> dict:
    from rag_pipeline.errors import GateFailedError
    from rag_pipeline.migration import gate, steps

    verdict = gate.GateReport(**{k: gated["gate"][k] for k in ("live", "new", "passed", "reason", "no_worse", "worse")})
    if not verdict.passed:
        raise GateFailedError(f"the new model did not pass the gate ({verdict.reason}); the live model is unchanged")
    with _connect(database) as conn:
        resumed = steps.resume(conn, settings.load(), gated["migration_id"])
        outcome = steps.finish(conn, resumed, verdict, gated["fill"], wait_seconds=gated["wait_seconds"])
    context.add_output_metadata({"status": outcome.status, "switched_at": str((outcome.switch or {}).get("switched_at"))})
    return outcome.to_dict()


@dg.job(description="Change the index's embedding model without downtime: embed beside, gate both, switch atomically.",
        executor_def=dg.in_process_executor)
def migrate_model() -> None:
    migration_switch(migration_gate(migration_embed(migration_start())))

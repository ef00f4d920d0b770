"""Resources: the pipeline configuration, the database, the sources, the embedding model, the
parser process and where progress goes.

All are built from one `rag_pipeline.yaml`: the UI's definitions take its path from
RAG_PIPELINE_CONFIG (default `rag_pipeline.yaml` in the working directory), the CLI passes the
file it was given. The file is parsed once per process, when a step first needs it.
"""

from __future__ import annotations

from typing import Any

import dagster as dg
from pydantic import PrivateAttr

from rag_pipeline import store
from rag_pipeline.config import Config, default_config_path, load_config
from rag_pipeline.embedding import Embedder, embedder_for
from rag_pipeline.parsing.pool import ParsePool
from rag_pipeline.sources.config import SourceConfig
from rag_pipeline.store import database as pg
from rag_pipeline.sync.context import Notice, Progress, SyncContext, no_notice, no_progress, prepare_database


class PipelineSettings(dg.ConfigurableResource):
    """The parsed rag_pipeline.yaml."""

    config_path: str
    _config: Config | None = PrivateAttr(default=None)

    def load(self) -> Config:
        if self._config is None:
            self._config = load_config(self.config_path)
        return self._config


class ProgressReporter:
    """Where steps report progress besides the Dagster log: the CLI, which runs the job in its
    own process, passes one that drives its progress bar; the UI's does nothing."""

    def __init__(self, callback: Progress = no_progress, notice: Notice = no_notice) -> None:
        self.callback = callback
        self.notice = notice  # sentences for the operator beside the Dagster log (the CLI: stderr)

    def __call__(self, step: str, done: int, total: int) -> None:
        self.callback(step, done, total)


class IndexDatabase(dg.ConfigurableResource):
    """PostgreSQL + pgvector: DATABASE_URL / database_url, else the embedded server. Migrated
    once per process before first use."""

    settings: PipelineSettings
    _url: str | None = PrivateAttr(default=None)

    def url(self) -> str:
        if self._url is None:
            self._url = prepare_database(self.settings.load())
        return self._url

    def context(self, run_id: str, progress: Progress = no_progress, notice: Notice = no_notice) -> SyncContext:
        return SyncContext(config=self.settings.load(), db_url=self.url(), run_id=run_id, progress=progress,
                           notice=notice)


STEP_OUTPUTS = "step_outputs"  # the IO manager of the sharded steps (their io_manager_key)


class IndexStepOutputs(dg.ConfigurableIOManager):
    """The values Dagster passes between the sharded steps (a step's list of shards, each
    shard's counts): small JSON kept in the index database (store.step_outputs) by run and by
    Dagster's identifier of the output (step key, output name, mapping key), so steps on other
    machines (Celery workers, Kubernetes pods) read them with no shared disk. Documents never
    go through it: they travel in the run's work items and the blob store."""

    database: IndexDatabase

    def handle_output(self, context: dg.OutputContext, obj: Any) -> None:
        run_id, *rest = context.get_identifier()
        with pg.connect_as(self.database.url(), store.roles.WRITER) as conn:
            store.step_outputs.put_step_output(conn, run_id, "/".join(rest), obj)

    def load_input(self, context: dg.InputContext) -> Any:
        if context.upstream_output is None:
            raise dg.DagsterInvariantViolationError(f"input {context.name!r} has no upstream output to load")
        run_id, *rest = context.upstream_output.get_identifier()
        with pg.connect_as(self.database.url(), store.roles.WRITER) as conn:
            return store.step_outputs.get_step_output(conn, run_id, "/".join(rest))


class DocumentSources(dg.ConfigurableResource):
    """The configured sources; a run may name a subset."""

    settings: PipelineSettings

    def select(self, names: list[str]) -> list[SourceConfig]:
        config = self.settings.load()
        return [config.source(n) for n in names] if names else list(config.sources)


class EmbeddingModel(dg.ConfigurableResource):
    """The pinned sentence-transformers model, loaded on first use in each step process."""

    settings: PipelineSettings
    _embedder: Embedder | None = PrivateAttr(default=None)

    def get(self) -> Embedder:
        if self._embedder is None:
            self._embedder = embedder_for(self.settings.load().embedding)
        return self._embedder


class ParserProcess(dg.ConfigurableResource):
    """The parse workers of a step process (a ParsePool, sized to the machine that runs the
    step). Dagster sets a resource up once per process that runs steps: under the in-process
    executor (the CLI, the per-source jobs) every parse shard of a run shares the pool and its
    seconds of imports are paid once per run, not per shard; under the multiprocess, Celery or
    Kubernetes executors each step process has its own. Workers start on first use and end
    with the step process's resources."""

    settings: PipelineSettings
    _pool: ParsePool | None = PrivateAttr(default=None)

    def get(self) -> ParsePool:
        if self._pool is None:
            config = self.settings.load()
            self._pool = ParsePool(config.limits, config.parse_workers)
        return self._pool

    def teardown_after_execution(self, context: dg.InitResourceContext) -> None:
        if self._pool is not None:
            self._pool.close()
            self._pool = None


def build_resources(config_path: str | None = None, progress: Progress = no_progress,
                    notice: Notice = no_notice) -> dict[str, Any]:
    """The resources of one configuration; `config_path` defaults to RAG_PIPELINE_CONFIG."""
    settings = PipelineSettings(config_path=str(config_path or default_config_path()))
    database = IndexDatabase(settings=settings)
    return {
        "settings": settings,
        "database": database,
        STEP_OUTPUTS: IndexStepOutputs(database=database),
        "sources": DocumentSources(settings=settings),
        "embedding_model": EmbeddingModel(settings=settings),
        "parser": ParserProcess(settings=settings),
        "progress": dg.ResourceDefinition.hardcoded_resource(ProgressReporter(progress, notice)),
    }


@dg.definitions
def resources() -> dg.Definitions:
    return dg.Definitions(resources=build_resources())

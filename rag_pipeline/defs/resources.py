"""Resources: the pipeline configuration, the database, the sources and the embedding model.

All are built from one `rag_pipeline.yaml` (path from RAG_PIPELINE_CONFIG, default in the working
directory), so the CLI and the UI run the same job against the same settings.
"""


import os
from typing import Any

import dagster as dg
from pydantic import PrivateAttr

from rag_pipeline.config import CONFIG_ENV, Config, SourceConfig, load_config
from rag_pipeline.embedding import Embedder, load_embedder
from rag_pipeline.sync.context import Progress, SyncContext, no_progress, prepare_database


def _default_config_path() -> str:
    return os.environ.get(CONFIG_ENV, "rag_pipeline.yaml")


class PipelineSettings(dg.ConfigurableResource):
    """The parsed rag_pipeline.yaml."""

    config_path: str = _default_config_path()

    def load(self) -> Config:
        return load_config(self.config_path)


class IndexDatabase(dg.ConfigurableResource):
    """PostgreSQL + pgvector: DATABASE_URL / database_url, else the embedded server. Migrated
    once per process before first use."""

    settings: PipelineSettings
    _url: str | None = PrivateAttr(default=None)

    def url(self) -> str:
        if self._url is None:
            self._url = prepare_database(self.settings.load())
        return self._url

    def context(self, run_id: str, progress: Progress = no_progress) -> SyncContext:
        return SyncContext(config=self.settings.load(), db_url=self.url(), run_id=run_id, progress=progress)


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
            embedding = self.settings.load().embedding
            self._embedder = load_embedder(embedding.model, embedding.device, embedding.batch_size)
        return self._embedder


_progress: list[Progress] = [no_progress]


def set_progress(callback: Progress) -> None:
    """Where steps report progress besides the Dagster log: the CLI, which runs the job in its
    own process, plugs its progress bar in here."""
    _progress[0] = callback


def report_progress(step: str, done: int, total: int) -> None:
    _progress[0](step, done, total)


def build_resources() -> dict[str, Any]:
    settings = PipelineSettings(config_path=_default_config_path())
    return {
        "settings": settings,
        "database": IndexDatabase(settings=settings),
        "sources": DocumentSources(settings=settings),
        "embedding_model": EmbeddingModel(settings=settings),
    }


@dg.definitions
def resources() -> dg.Definitions:
    return dg.Definitions(resources=build_resources())

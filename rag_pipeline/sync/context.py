"""What every sync step needs: the configuration, the database, the blob store, the run id and
a way to report progress. Steps share nothing else, so each may run in its own process."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

import psycopg

from rag_pipeline import database, store
from rag_pipeline.blobs import Blobs, open_blob_store
from rag_pipeline.config import Config

Progress = Callable[[str, int, int], None]  # (step, done, total)


def no_progress(step: str, done: int, total: int) -> None:
    return None


@dataclass
class SyncContext:
    config: Config
    db_url: str
    run_id: str
    progress: Progress = field(default=no_progress)

    _blobs: Blobs | None = field(default=None, init=False, repr=False)

    @property
    def blobs(self) -> Blobs:
        """The configured blob store, made once per context (an S3 client is not free)."""
        if self._blobs is None:
            self._blobs = open_blob_store(self.config)
        return self._blobs

    @contextmanager
    def connect(self) -> Iterator[psycopg.Connection]:
        """A connection acting as the writer role: the grants that keep history append-only
        apply to the pipeline itself, not only to other logins."""
        conn = database.connect(self.db_url)
        try:
            store.roles.assume(conn, store.roles.WRITER)
            yield conn
        finally:
            conn.close()


def prepare_database(config: Config) -> str:
    """Resolve the database URL (starting the embedded server if needed) and migrate it."""
    url = database.resolve_url(config.database_url, config.pgdata_dir)
    with database.connect(url) as conn:
        try:
            store.migrations.migrate(conn)
            store.roles.apply_passwords(conn)
        except psycopg.errors.FeatureNotSupported as exc:
            raise database.DatabaseError(f"the database lacks the pgvector extension: {exc}; install pgvector there") from exc
        except psycopg.Error as exc:
            raise database.DatabaseError(f"cannot prepare the index schema: {exc}") from exc
    return url

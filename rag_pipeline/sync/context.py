"""What every sync step needs: the configuration, the database, the blob store, the run id and
a way to report progress. Steps share nothing else, so each may run in its own process."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

import psycopg

from rag_pipeline import store
from rag_pipeline.blobs import Blobs, open_blob_store
from rag_pipeline.config import Config
from rag_pipeline.store import database

Progress = Callable[[str, int, int], None]  # (step, done, total)
Notice = Callable[[str], None]  # a sentence for the operator (Dagster's run log, the CLI's stderr)


def no_progress(step: str, done: int, total: int) -> None:
    return None


def no_notice(message: str) -> None:
    return None


@dataclass
class SyncContext:
    """`connect()` also marks the run as worked on by this process while any of its
    connections is open (store.runs.hold_run): every step works inside one, so a step killed
    by any means frees the run's sources at once for the next sync."""

    config: Config
    db_url: str
    run_id: str
    progress: Progress = field(default=no_progress)
    notice: Notice = field(default=no_notice)
    _holder: psycopg.Connection | None = field(default=None, init=False, repr=False, compare=False)
    _depth: int = field(default=0, init=False, repr=False, compare=False)

    _blobs: Blobs | None = field(default=None, init=False, repr=False)

    @property
    def blobs(self) -> Blobs:
        """The configured blob store, made once per context (an S3 client is not free)."""
        if self._blobs is None:
            self._blobs = open_blob_store(self.config.blob_store, self.config.blob_dir)
        return self._blobs

    @contextmanager
    def connect(self) -> Iterator[psycopg.Connection]:
        """A connection acting as the writer role (the grants that keep history append-only
        apply to the pipeline itself), while this process holds the run (see the class doc)."""
        self._hold()
        try:
            with database.connect_as(self.db_url, store.roles.WRITER) as conn:
                yield conn
        finally:
            self._release()

    def record_counts(self, step: str, counts: dict[str, int]) -> None:
        """A step's counts over the run, on the run's row (what the CLI and the runs list report)."""
        with self.connect() as conn:
            store.runs.update_run(conn, self.run_id, counts={step: dict(counts)})

    def _hold(self) -> None:
        if self._depth == 0:
            holder = database.connect(self.db_url)
            try:
                store.runs.hold_run(holder, self.run_id)
            except BaseException:
                holder.close()
                raise
            self._holder = holder
        self._depth += 1

    def _release(self) -> None:
        self._depth -= 1
        if self._depth == 0 and self._holder is not None:
            holder, self._holder = self._holder, None
            try:
                store.runs.release_run(holder, self.run_id)
            except psycopg.Error:
                pass  # the lock goes with the connection anyway; the lease is only a courtesy
            finally:
                holder.close()


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

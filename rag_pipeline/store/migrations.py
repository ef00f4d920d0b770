"""Schema migrations: sql/migrations/*.sql applied once each, in order, then sql/views.sql."""

from __future__ import annotations

import hashlib
from pathlib import Path

import psycopg

from rag_pipeline.errors import PipelineError

MIGRATION_LOCK = 7_300_001  # advisory lock id: one migrator at a time


class MigrationError(PipelineError):
    """The database's schema history disagrees with this package's migrations."""


def sql_dir() -> Path:
    """The project's sql/ folder: beside the package in a source checkout, or inside it as
    `rag_pipeline/_sql` in an installed wheel (pyproject maps sql/ there)."""
    package = Path(__file__).resolve().parent.parent
    for candidate in (package / "_sql", package.parent / "sql"):
        if (candidate / "migrations").is_dir():
            return candidate
    raise MigrationError(
        f"no sql/migrations folder beside or inside {package}; reinstall rag_pipeline (the wheel carries them)"
    )


def migrate(conn: psycopg.Connection, folder: Path | None = None) -> list[str]:
    """Apply pending sql/migrations/*.sql in order, then (re)create sql/views.sql.

    Idempotent and safe to race: an advisory lock serialises migrators and each applied file
    is recorded in schema_migrations in the same transaction as its statements.
    """
    folder = folder or sql_dir()
    applied_now: list[str] = []
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (MIGRATION_LOCK,))
        conn.execute(
            "CREATE TABLE IF NOT EXISTS schema_migrations ("
            " version text PRIMARY KEY, checksum text NOT NULL,"
            " applied_at timestamptz NOT NULL DEFAULT now())"
        )
        done = {r[0]: r[1] for r in conn.execute("SELECT version, checksum FROM schema_migrations")}
        for path in sorted((folder / "migrations").glob("*.sql")):
            body = path.read_text(encoding="utf-8")
            digest = hashlib.sha256(body.encode()).hexdigest()
            if path.stem in done:
                if done[path.stem] != digest:
                    raise MigrationError(
                        f"migration {path} changed after it was applied to this database; restore it and add a new migration instead"
                    )
                continue
            conn.execute(body)
            conn.execute(
                "INSERT INTO schema_migrations (version, checksum) VALUES (%s, %s)", (path.stem, digest)
            )
            applied_now.append(path.stem)
        conn.execute((folder / "views.sql").read_text(encoding="utf-8"))
    return applied_now


def schema_version(conn: psycopg.Connection) -> str | None:
    row = conn.execute("SELECT max(version) FROM schema_migrations").fetchone()
    return row[0] if row else None

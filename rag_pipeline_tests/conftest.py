"""Shared fixtures. Everything here is real: the corpus on disk, PostgreSQL, the model."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("UNSTRUCTURED_DISABLE_NOTICE", "1")

pytest_plugins = ["s3_server"]  # a real S3 API (moto server mode) on loopback, for S3 tests

PROJECT_ROOT = Path(__file__).resolve().parent.parent
LATEST_MIGRATION = max(p.stem for p in (PROJECT_ROOT / "sql" / "migrations").glob("*.sql"))
CORPUS = Path(os.environ.get("RAG_CORPUS_DIR", PROJECT_ROOT.parent / "shared" / "corpus"))


@pytest.fixture(scope="session")
def corpus_dir() -> Path:
    """The shared real-document corpus (../shared/corpus). Tests that need it fail loudly if absent."""
    if not (CORPUS / "MANIFEST.tsv").exists():
        pytest.fail(f"shared corpus not found at {CORPUS}; set RAG_CORPUS_DIR to its folder")
    return CORPUS


# --------------------------------------------------------------------------- database


def _server_url(tmp_root: Path) -> str:
    if os.environ.get("DATABASE_URL"):
        return os.environ["DATABASE_URL"]
    from rag_pipeline.store import database

    return database.embedded_url(tmp_root / "pgdata")


@pytest.fixture(scope="session")
def pg_server_url() -> Iterator[str]:
    """A real PostgreSQL with pgvector: DATABASE_URL if set, else an embedded server for the session.

    The embedded server's data lives outside pytest's temporary root: pytest resets that root to
    mode 0700 on every run, which locks out the server's own system user mid-session."""
    import shutil
    import tempfile

    root = Path(tempfile.mkdtemp(prefix="rag-pipeline-test-pg-"))
    root.chmod(0o755)
    try:
        yield _server_url(root)
    finally:
        from rag_pipeline.store import database

        database.stop_embedded(root / "pgdata")  # before its folder goes
        shutil.rmtree(root, ignore_errors=True)


@contextmanager
def fresh_database(server_url: str) -> Iterator[str]:
    """A new, migrated database on the server, dropped afterwards."""
    import uuid

    import psycopg
    from psycopg.conninfo import conninfo_to_dict, make_conninfo

    from rag_pipeline import store
    from rag_pipeline.store import database

    name = "rp_test_" + uuid.uuid4().hex[:12]
    with psycopg.connect(server_url, autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    params = conninfo_to_dict(server_url)
    params["dbname"] = name
    url = make_conninfo(**params)
    with database.connect(url) as conn:
        store.migrations.migrate(conn)
    try:
        yield url
    finally:
        with psycopg.connect(server_url, autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
            admin.execute(f'DROP DATABASE IF EXISTS "{name}{database.DAGSTER_DB_SUFFIX}" WITH (FORCE)')  # CLI runs' history


@contextmanager
def cli_database(server_url: str) -> Iterator[str]:
    """A fresh database for tests that run the CLI or Dagster jobs in-process, with DAGSTER_HOME
    unset while it lasts: the runs go into the database's own Dagster storage (dropped with it),
    never into an instance the developer's shell names."""
    saved = os.environ.pop("DAGSTER_HOME", None)
    try:
        with fresh_database(server_url) as url:
            yield url
    finally:
        if saved is not None:
            os.environ["DAGSTER_HOME"] = saved


@contextmanager
def synced_demo(server_url: str, root: Path, *, eval_set: bool = True) -> Iterator[tuple[Path, Path, str]]:
    """The demo documents copied to `root`/docs and synced once through the CLI into a
    cli_database (the travel policy's first edition): (config, docs, url)."""
    import shutil

    from rag_pipeline import cli

    docs = root / "docs"
    shutil.copytree(DEMO_DIR / "docs", docs)
    with cli_database(server_url) as url:
        config = write_config(root, url, docs=docs, eval_set=DEMO_DIR / "eval.yaml" if eval_set else None)
        assert cli.main(["sync", "--config", str(config), "--json"]) == 0
        yield config, docs, url


@pytest.fixture
def db_url(pg_server_url: str) -> Iterator[str]:
    """A fresh, migrated database per test."""
    with fresh_database(pg_server_url) as url:
        yield url


@pytest.fixture(scope="session")
def embedder():
    """The real packaged all-MiniLM-L6-v2."""
    from rag_pipeline.embedding import load_embedder

    return load_embedder()


DEMO_DIR = PROJECT_ROOT / "demo"


def write_config(root: Path, db_url: str, *, docs: Path, eval_set: Path | None = None,
                 thresholds: dict | None = None, extra: str = "", k: int = 5) -> Path:
    """A rag_pipeline.yaml under `root` syncing `docs` into the test database."""
    import yaml

    config = {
        "database_url": db_url,
        "state_dir": str(root / "state"),
        "sources": [{"name": "larkspur", "kind": "filesystem", "path": str(docs)}],
        "evaluation": {"k": k, "thresholds": thresholds or {"evidence_recall": 0.8, "source_recall": 0.8,
                                                            "acl_leaks": 0, "superseded_hits": 0}},
    }
    if eval_set is not None:
        config["evaluation"]["eval_set"] = str(eval_set)
    path = root / "rag_pipeline.yaml"
    path.write_text(yaml.safe_dump(config) + extra, encoding="utf-8")
    return path


@pytest.fixture
def demo_copy(tmp_path: Path) -> Path:
    """A private copy of the demo documents, free to edit."""
    import shutil

    target = tmp_path / "docs"
    shutil.copytree(DEMO_DIR / "docs", target)
    return target


@pytest.fixture
def cpu_load() -> Iterator[None]:
    """Busy-loop processes competing for every core while the test runs: one more than the
    cores this process may use, so none is idle."""
    import subprocess
    import sys

    loops = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(len(os.sched_getaffinity(0)) + 1)]
    try:
        yield
    finally:
        for loop in loops:
            loop.kill()
            loop.wait()

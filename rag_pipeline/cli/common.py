"""What several commands need: the configuration, a migrated connection, the caller's groups,
an as-of time, a document named by URI and the embedding model."""

from __future__ import annotations

import argparse
import sys
from contextlib import AbstractContextManager
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from rag_pipeline.errors import UsageError

if TYPE_CHECKING:
    import psycopg

    from rag_pipeline.config import Config
    from rag_pipeline.embedding import Embedder
    from rag_pipeline.retrieval.refusal import Threshold


def load_config(args: argparse.Namespace) -> Config:
    from rag_pipeline.config import load_config as load

    return load(args.config)


def connection(config: Config, role: str | None = None) -> AbstractContextManager[psycopg.Connection]:
    """A connection to the migrated index, acting as `role` (e.g. the reader role, so row-level
    security backs the search's own filter) where the login may take it on."""
    from rag_pipeline.store import database
    from rag_pipeline.sync.context import prepare_database

    return database.connect_as(prepare_database(config), role)


def groups(value: str | None) -> list[str]:
    return sorted({g.strip() for g in (value or "").split(",") if g.strip()})


def as_of(value: str | None) -> datetime | None:
    if value is None:
        return None
    from rag_pipeline.common.times import parse_time

    try:
        return parse_time(value)
    except ValueError as exc:
        raise UsageError(f"--as-of: {exc}") from exc


def document(conn: psycopg.Connection, uri: str) -> tuple[str, str]:
    """(source, uri) of a document named with or without its source prefix. A name PostgreSQL
    cannot hold (NUL, bytes that are not UTF-8) is looked up escaped, as such names are stored."""
    from rag_pipeline import store
    from rag_pipeline.common.text import storable

    uri = storable(uri)
    matches = store.history.find_documents(conn, uri)
    if not matches:
        raise UsageError(f"no document {uri!r} in the index (URIs are paths relative to the source root)")
    if len(matches) > 1:
        options = ", ".join(f"{s}/{u}" for s, u in matches)
        raise UsageError(f"{uri!r} is ambiguous; prefix it with its source: {options}")
    return matches[0]


def embedder(config: Config) -> Embedder:
    from rag_pipeline.embedding import embedder_for

    return embedder_for(config.embedding)


def refusal_threshold(conn: psycopg.Connection, config: Config, when: datetime | None = None) -> Threshold:
    """The refusal threshold searches of this index use: calibrated if it was, else the config's."""
    from rag_pipeline import store
    from rag_pipeline.retrieval import refusal
    from rag_pipeline.retrieval.search import DEFAULT_MODE

    model_id = store.search.index_model_id(conn, store.search.View(as_of=when))
    return refusal.threshold_for(conn, model_id, DEFAULT_MODE, config.evaluation.refusal_score)


def read_limited(name: str, limit: int) -> bytes:
    """At most `limit` bytes of a file or of stdin (`-`): a larger input is refused by its
    reader without being read whole. A file that cannot be opened is a usage error naming it."""
    if name == "-":
        return sys.stdin.buffer.read(limit)
    try:
        with Path(name).open("rb") as handle:
            return handle.read(limit)
    except OSError as exc:
        raise UsageError(f"{name}: {exc.strerror or exc}") from exc

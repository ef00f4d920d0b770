"""Row helpers shared by the store modules: results as dicts keyed by column name."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import psycopg
from psycopg.rows import dict_row


def rows(conn: psycopg.Connection, sql: str, params: Any = None, *, prepare: bool | None = None) -> list[dict[str, Any]]:
    """`prepare` as psycopg's: True prepares the statement at once (a search batch parses its
    statements once), None after a few runs. Every connection of the project plans prepared
    statements for their parameters each time (database.connect), never with a generic plan,
    which for the search query would mean not using the partial vector index."""
    with conn.cursor(row_factory=dict_row) as cur:
        return cur.execute(sql, params, prepare=prepare).fetchall()  # type: ignore[arg-type]


def row(conn: psycopg.Connection, sql: str, params: Any = None) -> dict[str, Any] | None:
    with conn.cursor(row_factory=dict_row) as cur:
        return cur.execute(sql, params).fetchone()  # type: ignore[arg-type]


@contextmanager
def pipelined_transaction(conn: psycopg.Connection) -> Iterator[None]:
    """A transaction whose statements travel in psycopg's pipeline mode: a statement whose
    result is not read waits for the next one that is, so the round trips are the reads (and the
    commit). BEGIN and COMMIT are sent as statements (psycopg's transaction blocks sync the
    pipeline on entry and exit); code inside must therefore not open transaction blocks of its
    own. On an error the transaction is rolled back after the pipeline is drained."""
    try:
        with conn.pipeline():
            conn.execute("BEGIN")
            yield
            conn.execute("COMMIT")
    except BaseException:
        if not conn.closed and conn.info.transaction_status != psycopg.pq.TransactionStatus.IDLE:
            conn.execute("ROLLBACK")
        raise

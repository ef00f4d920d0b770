"""Row helpers shared by the store modules: results as dicts keyed by column name."""

from __future__ import annotations

from typing import Any

import psycopg
from psycopg.rows import dict_row


def rows(conn: psycopg.Connection, sql: str, params: Any = None) -> list[dict[str, Any]]:
    with conn.cursor(row_factory=dict_row) as cur:
        return cur.execute(sql, params).fetchall()  # type: ignore[arg-type]


def row(conn: psycopg.Connection, sql: str, params: Any = None) -> dict[str, Any] | None:
    with conn.cursor(row_factory=dict_row) as cur:
        return cur.execute(sql, params).fetchone()  # type: ignore[arg-type]

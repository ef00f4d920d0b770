"""Work items of a run (`run_items`): the hand-over between steps, which may run in other
processes or machines. Each step reads its input column and writes its output column."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import Any

import psycopg
from psycopg.rows import dict_row

from rag_pipeline.store.step_outputs import drop_step_outputs


def insert_items(conn: psycopg.Connection, run_id: str, items: Iterable[dict[str, Any]]) -> None:
    """Record planned work (idempotent per run and document). Does not commit."""
    with conn.cursor() as cur:
        cur.executemany(
            "INSERT INTO run_items (run_id, source, uri, action, checksum, blob_sha256, size_bytes, acl_groups)"
            " VALUES (%(run_id)s, %(source)s, %(uri)s, %(action)s, %(checksum)s, %(blob_sha256)s,"
            " %(size_bytes)s, %(acl_groups)s)"
            " ON CONFLICT (run_id, source, uri) DO NOTHING",
            [{"run_id": run_id, **item} for item in items],
        )


def item_keys(conn: psycopg.Connection, run_id: str, stage: str, actions: Sequence[str],
              among: Sequence[tuple[str, str]] | None = None) -> list[tuple[str, str]]:
    """(source, uri) of the run's items at `stage` with `actions`; only those in `among` if given."""
    if among is None:
        rows = conn.execute(
            "SELECT source, uri FROM run_items WHERE run_id = %s AND stage = %s AND action = ANY(%s)"
            " ORDER BY source, uri",
            (run_id, stage, list(actions)),
        ).fetchall()
    else:
        rows = conn.execute(
            "SELECT source, uri FROM run_items WHERE run_id = %s AND stage = %s AND action = ANY(%s)"
            " AND (source, uri) IN (SELECT * FROM unnest(%s::text[], %s::text[])) ORDER BY source, uri",
            (run_id, stage, list(actions), [k[0] for k in among], [k[1] for k in among]),
        ).fetchall()
    return [(r[0], r[1]) for r in rows]


def load_items(conn: psycopg.Connection, run_id: str, keys: Sequence[tuple[str, str]], columns: Sequence[str]) -> list[dict[str, Any]]:
    """Load the named payload columns for a batch of items (columns come from ITEM_COLUMNS)."""
    cols = [c for c in columns if c in ITEM_COLUMNS]
    select = ", ".join(["source", "uri", "action", "checksum", "blob_sha256", "size_bytes", "acl_groups", *cols])
    with conn.cursor(row_factory=dict_row) as cur:
        rows = cur.execute(
            f"SELECT {select} FROM run_items WHERE run_id = %s"  # noqa: S608 -- columns from a fixed allow-list
            " AND (source, uri) IN (SELECT * FROM unnest(%s::text[], %s::text[]))",
            (run_id, [k[0] for k in keys], [k[1] for k in keys]),
        ).fetchall()
    order = {k: i for i, k in enumerate(keys)}
    return sorted(rows, key=lambda r: order[(r["source"], r["uri"])])


ITEM_COLUMNS = ("parsed", "cleaned", "chunks", "embeddings")


def advance_item(conn: psycopg.Connection, run_id: str, source: str, uri: str, stage: str, column: str | None = None, value: Any = None) -> None:
    """Move an item to `stage`, storing one step's output and dropping the previous payload
    it no longer needs. Does not commit."""
    if column is None:
        conn.execute(
            "UPDATE run_items SET stage = %s WHERE run_id = %s AND source = %s AND uri = %s",
            (stage, run_id, source, uri),
        )
        return
    statement = _ADVANCE[column]
    payload = value if column == "embeddings" else json.dumps(value)
    conn.execute(statement, (stage, payload, run_id, source, uri))


_ADVANCE = {
    "parsed": "UPDATE run_items SET stage = %s, parsed = %s::jsonb WHERE run_id = %s AND source = %s AND uri = %s",
    "cleaned": "UPDATE run_items SET stage = %s, cleaned = %s::jsonb, parsed = NULL WHERE run_id = %s AND source = %s AND uri = %s",
    "chunks": "UPDATE run_items SET stage = %s, chunks = %s::jsonb, cleaned = NULL WHERE run_id = %s AND source = %s AND uri = %s",
    "embeddings": "UPDATE run_items SET stage = %s, embeddings = %s WHERE run_id = %s AND source = %s AND uri = %s",
}


def quarantine_item(conn: psycopg.Connection, run_id: str, source: str, uri: str, stage: str, error: str,
                    parse_key: str | None = None) -> None:
    """Take an item out of the run and record why (with the parse key when the parser refused
    it). Its live version (if any) is untouched. Does not commit."""
    conn.execute(
        "UPDATE run_items SET stage = 'quarantined', error = %s, parsed = NULL, cleaned = NULL,"
        " chunks = NULL, embeddings = NULL WHERE run_id = %s AND source = %s AND uri = %s",
        (error, run_id, source, uri),
    )
    conn.execute(
        "INSERT INTO quarantine (run_id, source, uri, checksum, stage, error, parse_key)"
        " SELECT run_id, source, uri, checksum, %s, %s, %s FROM run_items"
        " WHERE run_id = %s AND source = %s AND uri = %s",
        (stage, error, parse_key, run_id, source, uri),
    )


def blob_still_needed(conn: psycopg.Connection, sha256: str, run_id: str, source: str, uri: str) -> bool:
    """Whether any document version, or another item of a running run, uses the blob `sha256`
    (so it cannot be dropped with the one refused item that also had it)."""
    return bool(conn.execute(
        "SELECT EXISTS (SELECT 1 FROM document_versions WHERE blob_sha256 = %s)"
        " OR EXISTS (SELECT 1 FROM run_items i JOIN runs r ON r.run_id = i.run_id"
        "  WHERE i.blob_sha256 = %s AND r.status = 'running' AND i.stage <> 'quarantined'"
        "  AND NOT (i.run_id = %s AND i.source = %s AND i.uri = %s))",
        (sha256, sha256, run_id, source, uri),
    ).fetchone()[0])


def forget_blob(conn: psycopg.Connection, run_id: str, source: str, uri: str) -> None:
    """The item's bytes were not kept: its blob reference goes too. Does not commit."""
    conn.execute("UPDATE run_items SET blob_sha256 = NULL WHERE run_id = %s AND source = %s AND uri = %s",
                 (run_id, source, uri))


def item_stage_counts(conn: psycopg.Connection, run_id: str) -> dict[str, int]:
    rows = conn.execute(
        "SELECT stage, count(*) FROM run_items WHERE run_id = %s GROUP BY stage", (run_id,)
    ).fetchall()
    return {r[0]: r[1] for r in rows}


def item_groups(conn: psycopg.Connection, run_id: str, stages: Sequence[str], actions: Sequence[str]) -> list[tuple[str, str, list[str]]]:
    """(source, uri, acl_groups) of the run's items at `stages` with `actions`."""
    rows = conn.execute(
        "SELECT source, uri, acl_groups FROM run_items WHERE run_id = %s AND stage = ANY(%s) AND action = ANY(%s)"
        " ORDER BY source, uri",
        (run_id, list(stages), list(actions)),
    ).fetchall()
    return [(r[0], r[1], list(r[2])) for r in rows]


def known_failures(conn: psycopg.Connection, run_id: str) -> int:
    """Items this run quarantined that an earlier run had already quarantined with the same
    checksum: the same broken file again, not a new failure."""
    return conn.execute(
        "SELECT count(*) FROM run_items i WHERE i.run_id = %s AND i.stage = 'quarantined' AND EXISTS"
        " (SELECT 1 FROM quarantine q WHERE q.source = i.source AND q.uri = i.uri"
        " AND q.checksum = i.checksum AND q.run_id <> i.run_id)",
        (run_id,),
    ).fetchone()[0]


def cleanup_run_items(conn: psycopg.Connection, run_id: str) -> None:
    """Drop a finished run's work items and step outputs (payloads are large; quarantine keeps the errors). Commits."""
    with conn.transaction():
        conn.execute("DELETE FROM run_items WHERE run_id = %s", (run_id,))
        drop_step_outputs(conn, run_id)

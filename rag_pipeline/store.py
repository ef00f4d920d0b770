"""Every SQL statement of the project (besides sql/): parameterised, never built from user text.

The pipeline steps, retrieval, evaluation and the CLI call these functions with an open
connection; each function documents whether it commits. Document writes are one transaction.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np
import psycopg
from psycopg.rows import dict_row

SQL_DIR = Path(__file__).resolve().parent.parent / "sql"
MIGRATION_LOCK = 7_300_001  # advisory lock id: one migrator at a time


def _rows(conn: psycopg.Connection, sql: str, params: Any = None) -> list[dict[str, Any]]:
    with conn.cursor(row_factory=dict_row) as cur:
        return cur.execute(sql, params).fetchall()  # type: ignore[arg-type]


def _row(conn: psycopg.Connection, sql: str, params: Any = None) -> dict[str, Any] | None:
    with conn.cursor(row_factory=dict_row) as cur:
        return cur.execute(sql, params).fetchone()  # type: ignore[arg-type]


class SourceBusyError(Exception):
    """Another run holds the sync lock of a source."""


# --------------------------------------------------------------------------- migrations


def migrate(conn: psycopg.Connection, sql_dir: Path = SQL_DIR) -> list[str]:
    """Apply pending sql/migrations/*.sql in order, then (re)create sql/views.sql.

    Idempotent and safe to race: an advisory lock serialises migrators and each applied file
    is recorded in schema_migrations in the same transaction as its statements.
    """
    applied_now: list[str] = []
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (MIGRATION_LOCK,))
        conn.execute(
            "CREATE TABLE IF NOT EXISTS schema_migrations ("
            " version text PRIMARY KEY, checksum text NOT NULL,"
            " applied_at timestamptz NOT NULL DEFAULT now())"
        )
        done = {r[0]: r[1] for r in conn.execute("SELECT version, checksum FROM schema_migrations")}
        for path in sorted((sql_dir / "migrations").glob("*.sql")):
            body = path.read_text(encoding="utf-8")
            digest = hashlib.sha256(body.encode()).hexdigest()
            if path.stem in done:
                if done[path.stem] != digest:
                    raise RuntimeError(
                        f"migration {path} changed after it was applied; add a new migration instead"
                    )
                continue
            conn.execute(body)
            conn.execute(
                "INSERT INTO schema_migrations (version, checksum) VALUES (%s, %s)", (path.stem, digest)
            )
            applied_now.append(path.stem)
        conn.execute((sql_dir / "views.sql").read_text(encoding="utf-8"))
    return applied_now


def schema_version(conn: psycopg.Connection) -> str | None:
    row = conn.execute("SELECT max(version) FROM schema_migrations").fetchone()
    return row[0] if row else None


# --------------------------------------------------------------------------- embedding models


def register_model(conn: psycopg.Connection, identity: dict[str, Any]) -> int:
    """Record a model identity once; return its id. Commits."""
    with conn.transaction():
        row = conn.execute(
            "INSERT INTO embedding_models (name, revision, weights_sha256, dimension, normalized, max_tokens)"
            " VALUES (%(name)s, %(revision)s, %(weights_sha256)s, %(dimension)s, %(normalized)s, %(max_tokens)s)"
            " ON CONFLICT (name, revision, weights_sha256) DO UPDATE SET name = EXCLUDED.name"
            " RETURNING id",
            identity,
        ).fetchone()
    return int(row[0])


def model_by_id(conn: psycopg.Connection, model_id: int) -> dict[str, Any] | None:
    return _row(conn, "SELECT * FROM embedding_models WHERE id = %s", (model_id,))


def live_model_ids(conn: psycopg.Connection) -> list[int]:
    """Models referenced by live content versions: more than one means a mixed index."""
    rows = conn.execute(
        "SELECT DISTINCT model_id FROM document_versions"
        " WHERE status = 'live' AND kind = 'content' ORDER BY model_id"
    ).fetchall()
    return [r[0] for r in rows if r[0] is not None]


# --------------------------------------------------------------------------- runs and locks


def create_run(conn: psycopg.Connection, run_id: str, sources: Sequence[str], model_id: int) -> None:
    """Register a run (idempotent, so a re-executed plan step does not fail). Commits."""
    with conn.transaction():
        conn.execute(
            "INSERT INTO runs (run_id, sources, model_id) VALUES (%s, %s, %s)"
            " ON CONFLICT (run_id) DO NOTHING",
            (run_id, list(sources), model_id),
        )


def claim_sources(
    conn: psycopg.Connection, run_id: str, sources: Sequence[str], is_alive: Callable[[str, datetime], bool]
) -> None:
    """Make this run the only running sync of its sources, or raise SourceBusyError. Commits.

    A transaction-level advisory lock per source serialises the check; runs still marked
    'running' whose process is gone (per `is_alive`, e.g. the orchestrator's view) are failed
    so a crash does not block a source forever.
    """
    busy: str | None = None
    with conn.transaction():
        for source in sorted(sources):
            conn.execute("SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))", ("rag-sync:" + source,))
        rows = conn.execute(
            "SELECT run_id, started_at FROM runs WHERE status = 'running' AND run_id <> %s AND sources && %s",
            (run_id, list(sources)),
        ).fetchall()
        for other, started_at in rows:
            if is_alive(other, started_at):
                busy = other
                break
            conn.execute(
                "UPDATE runs SET status = 'failed', finished_at = now(),"
                " error = coalesce(error, 'abandoned: its process is gone') WHERE run_id = %s",
                (other,),
            )
            discard_staged(conn, other, commit=False)
            conn.execute("DELETE FROM run_items WHERE run_id = %s", (other,))
    if busy is not None:
        message = f"run {busy} is still syncing one of {sorted(sources)}; wait for it to finish"
        update_run(conn, run_id, status="failed", error=message, finished=True)
        raise SourceBusyError(message)


def update_run(conn: psycopg.Connection, run_id: str, **fields: Any) -> None:
    """Set run columns; `counts` is merged into the stored JSON. Commits."""
    counts = fields.pop("counts", None)
    with conn.transaction():
        if counts:
            conn.execute(
                "UPDATE runs SET counts = counts || %s::jsonb WHERE run_id = %s",
                (json.dumps(counts), run_id),
            )
        for column in ("status", "gate_passed", "gate_reason", "error"):
            if column in fields:
                conn.execute(
                    _RUN_UPDATES[column], (fields[column], run_id)
                )
        if "gate_metrics" in fields:
            conn.execute(
                "UPDATE runs SET gate_metrics = %s::jsonb WHERE run_id = %s",
                (json.dumps(fields["gate_metrics"]), run_id),
            )
        if fields.get("finished"):
            conn.execute("UPDATE runs SET finished_at = now() WHERE run_id = %s", (run_id,))


_RUN_UPDATES = {
    "status": "UPDATE runs SET status = %s WHERE run_id = %s",
    "gate_passed": "UPDATE runs SET gate_passed = %s WHERE run_id = %s",
    "gate_reason": "UPDATE runs SET gate_reason = %s WHERE run_id = %s",
    "error": "UPDATE runs SET error = %s WHERE run_id = %s",
}


def get_run(conn: psycopg.Connection, run_id: str) -> dict[str, Any] | None:
    return _row(conn, "SELECT * FROM runs WHERE run_id = %s", (run_id,))


def recent_runs(conn: psycopg.Connection, limit: int = 5) -> list[dict[str, Any]]:
    return _rows(conn, 
            "SELECT run_id, sources, status, started_at, finished_at, gate_passed, gate_reason,"
            " gate_metrics, counts, error FROM runs ORDER BY started_at DESC LIMIT %s",
            (limit,),
        )


# --------------------------------------------------------------------------- planning


@dataclass(frozen=True)
class LiveVersion:
    version_id: int
    version_no: int
    checksum: str
    acl_groups: tuple[str, ...]
    parser_version: str
    cleaner_version: str
    chunker_version: str
    model_id: int


def live_versions(conn: psycopg.Connection, source: str) -> dict[str, LiveVersion]:
    rows = conn.execute(
        "SELECT d.uri, v.id, v.version_no, v.checksum, v.acl_groups, v.parser_version,"
        " v.cleaner_version, v.chunker_version, v.model_id"
        " FROM document_versions v JOIN documents d ON d.id = v.document_id"
        " WHERE d.source = %s AND v.status = 'live' AND v.kind = 'content'",
        (source,),
    ).fetchall()
    return {
        r[0]: LiveVersion(r[1], r[2], r[3], tuple(r[4]), r[5] or "", r[6] or "", r[7] or "", r[8])
        for r in rows
    }


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


def item_keys(conn: psycopg.Connection, run_id: str, stage: str, actions: Sequence[str]) -> list[tuple[str, str]]:
    rows = conn.execute(
        "SELECT source, uri FROM run_items WHERE run_id = %s AND stage = %s AND action = ANY(%s)"
        " ORDER BY source, uri",
        (run_id, stage, list(actions)),
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


def quarantine_item(conn: psycopg.Connection, run_id: str, source: str, uri: str, stage: str, error: str) -> None:
    """Take an item out of the run and record why. Its live version (if any) is untouched. Does not commit."""
    conn.execute(
        "UPDATE run_items SET stage = 'quarantined', error = %s, parsed = NULL, cleaned = NULL,"
        " chunks = NULL, embeddings = NULL WHERE run_id = %s AND source = %s AND uri = %s",
        (error, run_id, source, uri),
    )
    conn.execute(
        "INSERT INTO quarantine (run_id, source, uri, checksum, stage, error)"
        " SELECT run_id, source, uri, checksum, %s, %s FROM run_items"
        " WHERE run_id = %s AND source = %s AND uri = %s",
        (stage, error, run_id, source, uri),
    )


def record_quarantine(conn: psycopg.Connection, run_id: str, source: str, uri: str, checksum: str | None, stage: str, error: str) -> None:
    """Quarantine a file that never became a work item (e.g. unreadable at listing). Does not commit."""
    conn.execute(
        "INSERT INTO quarantine (run_id, source, uri, checksum, stage, error) VALUES (%s, %s, %s, %s, %s, %s)",
        (run_id, source, uri, checksum, stage, error),
    )


def item_stage_counts(conn: psycopg.Connection, run_id: str) -> dict[str, int]:
    rows = conn.execute(
        "SELECT stage, count(*) FROM run_items WHERE run_id = %s GROUP BY stage", (run_id,)
    ).fetchall()
    return {r[0]: r[1] for r in rows}


def run_quarantine(conn: psycopg.Connection, run_id: str) -> list[dict[str, Any]]:
    return _rows(conn, 
            "SELECT source, uri, stage, error FROM quarantine WHERE run_id = %s ORDER BY source, uri",
            (run_id,),
        )


def find_embeddings(conn: psycopg.Connection, hashes: Sequence[str], model_id: int) -> dict[str, np.ndarray]:
    """Stored embeddings of chunks with the same model input under the same model: reused
    instead of re-embedding unchanged text."""
    if not hashes:
        return {}
    rows = conn.execute(
        "SELECT DISTINCT ON (content_hash) content_hash, embedding FROM chunks"
        " WHERE model_id = %s AND content_hash = ANY(%s)",
        (model_id, list(set(hashes))),
    ).fetchall()
    return {r[0]: np.asarray(r[1].to_numpy(), dtype=np.float32) for r in rows}


def replace_fingerprints(conn: psycopg.Connection, source: str, uri: str, fingerprints: set[str]) -> None:
    """A document's paragraph fingerprints, replacing its previous set. Does not commit."""
    conn.execute("DELETE FROM paragraph_fingerprints WHERE source = %s AND uri = %s", (source, uri))
    with conn.cursor() as cur:
        cur.executemany(
            "INSERT INTO paragraph_fingerprints (source, fingerprint, uri) VALUES (%s, %s, %s)",
            [(source, fp, uri) for fp in sorted(fingerprints)],
        )


def drop_fingerprints(conn: psycopg.Connection, source: str, uris: Sequence[str]) -> None:
    conn.execute("DELETE FROM paragraph_fingerprints WHERE source = %s AND uri = ANY(%s)", (source, list(uris)))


def fingerprint_counts(conn: psycopg.Connection, source: str, fingerprints: Sequence[str]) -> tuple[dict[str, int], int]:
    """How many documents of the source carry each fingerprint, and how many documents it has."""
    rows = conn.execute(
        "SELECT fingerprint, count(*) FROM paragraph_fingerprints WHERE source = %s AND fingerprint = ANY(%s)"
        " GROUP BY fingerprint",
        (source, list(fingerprints)),
    ).fetchall()
    total = conn.execute(
        "SELECT count(DISTINCT uri) FROM paragraph_fingerprints WHERE source = %s", (source,)
    ).fetchone()[0]
    return {r[0]: r[1] for r in rows}, total


# --------------------------------------------------------------------------- staging


def _document_id(conn: psycopg.Connection, source: str, uri: str) -> int:
    row = conn.execute(
        "INSERT INTO documents (source, uri) VALUES (%s, %s)"
        " ON CONFLICT (source, uri) DO UPDATE SET uri = EXCLUDED.uri RETURNING id",
        (source, uri),
    ).fetchone()
    return int(row[0])


def _new_version(conn: psycopg.Connection, document_id: int, run_id: str, fields: dict[str, Any]) -> int | None:
    """Insert a staged version unless this run already staged one (re-executed step)."""
    existing = conn.execute(
        "SELECT run_id FROM document_versions WHERE document_id = %s AND status = 'staged'",
        (document_id,),
    ).fetchone()
    if existing and existing[0] == run_id:
        return None
    if existing:  # left behind by a failed or gate-rejected run: never publishable now
        conn.execute(
            "UPDATE document_versions SET status = 'discarded' WHERE document_id = %s AND status = 'staged'",
            (document_id,),
        )
    row = conn.execute(
        "INSERT INTO document_versions (document_id, version_no, kind, status, checksum, blob_sha256,"
        " size_bytes, media_type, acl_groups, parser_version, cleaner_version, chunker_version,"
        " model_id, run_id, cleaning_counts)"
        " SELECT %(document_id)s, coalesce(max(version_no), 0) + 1, %(kind)s, 'staged', %(checksum)s,"
        " %(blob_sha256)s, %(size_bytes)s, %(media_type)s, %(acl_groups)s, %(parser_version)s,"
        " %(cleaner_version)s, %(chunker_version)s, %(model_id)s, %(run_id)s, %(cleaning_counts)s::jsonb"
        " FROM document_versions WHERE document_id = %(document_id)s RETURNING id",
        {
            "document_id": document_id,
            "run_id": run_id,
            "kind": fields.get("kind", "content"),
            "checksum": fields.get("checksum"),
            "blob_sha256": fields.get("blob_sha256"),
            "size_bytes": fields.get("size_bytes"),
            "media_type": fields.get("media_type"),
            "acl_groups": list(fields.get("acl_groups", [])),
            "parser_version": fields.get("parser_version"),
            "cleaner_version": fields.get("cleaner_version"),
            "chunker_version": fields.get("chunker_version"),
            "model_id": fields.get("model_id"),
            "cleaning_counts": json.dumps(fields.get("cleaning_counts", {})),
        },
    ).fetchone()
    return int(row[0])


def stage_content_version(
    conn: psycopg.Connection,
    run_id: str,
    source: str,
    uri: str,
    fields: dict[str, Any],
    chunks: Sequence[dict[str, Any]],
    embeddings: np.ndarray,
) -> bool:
    """Write a document's new version and all its chunks in one transaction. Commits.
    Returns False when this run had already staged it (a retried step)."""
    with conn.transaction():
        version_id = _new_version(conn, _document_id(conn, source, uri), run_id, fields)
        if version_id is None:
            return False
        with conn.cursor() as cur:
            cur.executemany(
                "INSERT INTO chunks (version_id, ord, section_path, page_start, page_end, char_start,"
                " char_end, token_count, content_hash, text, model_id, embedding, tsv)"
                " VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, to_tsvector('simple', %s))",
                [
                    (
                        version_id, c["ord"], c["section_path"], c.get("page_start"), c.get("page_end"),
                        c["char_start"], c["char_end"], c["token_count"], c["content_hash"], c["text"],
                        fields["model_id"], embeddings[i], c["search_text"],
                    )
                    for i, c in enumerate(chunks)
                ],
            )
        conn.execute(
            "UPDATE run_items SET stage = 'staged', embeddings = NULL, chunks = NULL"
            " WHERE run_id = %s AND source = %s AND uri = %s",
            (run_id, source, uri),
        )
    return True


def stage_acl_version(conn: psycopg.Connection, run_id: str, source: str, uri: str, acl_groups: Sequence[str]) -> bool:
    """A new version that differs only in ACL groups: same chunks and embeddings, copied
    (content rows stay immutable per version), nothing re-embedded. Commits."""
    with conn.transaction():
        live = conn.execute(
            "SELECT v.id, v.checksum, v.blob_sha256, v.size_bytes, v.media_type, v.parser_version,"
            " v.cleaner_version, v.chunker_version, v.model_id, v.cleaning_counts"
            " FROM document_versions v JOIN documents d ON d.id = v.document_id"
            " WHERE d.source = %s AND d.uri = %s AND v.status = 'live'",
            (source, uri),
        ).fetchone()
        if live is None:
            return False
        fields = dict(
            zip(
                ("checksum", "blob_sha256", "size_bytes", "media_type", "parser_version",
                 "cleaner_version", "chunker_version", "model_id", "cleaning_counts"),
                live[1:],
            )
        )
        fields["acl_groups"] = list(acl_groups)
        version_id = _new_version(conn, _document_id(conn, source, uri), run_id, fields)
        if version_id is None:
            return False
        conn.execute(
            "INSERT INTO chunks (version_id, ord, section_path, page_start, page_end, char_start, char_end,"
            " token_count, content_hash, text, model_id, embedding, tsv)"
            " SELECT %s, ord, section_path, page_start, page_end, char_start, char_end, token_count,"
            " content_hash, text, model_id, embedding, tsv FROM chunks WHERE version_id = %s",
            (version_id, live[0]),
        )
        conn.execute(
            "UPDATE run_items SET stage = 'staged' WHERE run_id = %s AND source = %s AND uri = %s",
            (run_id, source, uri),
        )
    return True


def stage_tombstone(conn: psycopg.Connection, run_id: str, source: str, uri: str) -> bool:
    """Stage the removal of a document whose source object is gone. Commits."""
    with conn.transaction():
        version_id = _new_version(conn, _document_id(conn, source, uri), run_id, {"kind": "tombstone"})
        conn.execute(
            "UPDATE run_items SET stage = 'staged' WHERE run_id = %s AND source = %s AND uri = %s",
            (run_id, source, uri),
        )
    return version_id is not None


def discard_staged(conn: psycopg.Connection, run_id: str, *, commit: bool = True) -> int:
    """Mark a run's staged versions as never-to-be-published (gate failed, run abandoned)."""

    def _discard() -> int:
        cur = conn.execute(
            "UPDATE document_versions SET status = 'discarded' WHERE run_id = %s AND status = 'staged'",
            (run_id,),
        )
        return cur.rowcount

    if not commit:
        return _discard()
    with conn.transaction():
        return _discard()


# --------------------------------------------------------------------------- publishing


def publish(conn: psycopg.Connection, run_id: str) -> dict[str, int]:
    """Make all of a run's staged versions live at one instant, closing what they replace.
    One transaction: readers see the index before or after, never half of it. Commits."""
    with conn.transaction():
        now = conn.execute("SELECT now()").fetchone()[0]
        staged_docs = (
            "SELECT document_id FROM document_versions WHERE run_id = %(run)s AND status = 'staged'"
        )
        superseded = conn.execute(
            "UPDATE document_versions SET status = 'superseded', valid_to = %(now)s"
            f" WHERE status = 'live' AND document_id IN ({staged_docs})",
            {"run": run_id, "now": now},
        ).rowcount
        conn.execute(  # a document that re-appears closes its tombstone's window
            "UPDATE document_versions SET valid_to = %(now)s"
            f" WHERE status = 'tombstoned' AND valid_to IS NULL AND document_id IN ({staged_docs})",
            {"run": run_id, "now": now},
        )
        tombstoned = conn.execute(
            "UPDATE document_versions SET status = 'tombstoned', valid_from = %(now)s"
            " WHERE run_id = %(run)s AND status = 'staged' AND kind = 'tombstone'",
            {"run": run_id, "now": now},
        ).rowcount
        published = conn.execute(
            "UPDATE document_versions SET status = 'live', valid_from = %(now)s"
            " WHERE run_id = %(run)s AND status = 'staged' AND kind = 'content'",
            {"run": run_id, "now": now},
        ).rowcount
    return {"published": published, "superseded": superseded, "tombstoned": tombstoned}


def fail_run(conn: psycopg.Connection, run_id: str, *, status: str, reason: str) -> None:
    """Record a run that will not publish and make its staged versions unpublishable. Commits."""
    discard_staged(conn, run_id)
    update_run(conn, run_id, status=status, error=reason, finished=True)
    cleanup_run_items(conn, run_id)


def cleanup_run_items(conn: psycopg.Connection, run_id: str) -> None:
    """Drop a finished run's work items (their payloads are large; quarantine keeps the errors). Commits."""
    with conn.transaction():
        conn.execute("DELETE FROM run_items WHERE run_id = %s", (run_id,))


# --------------------------------------------------------------------------- retrieval


@dataclass(frozen=True)
class View:
    """Which versions a query sees: the live index, the index as of a time, or the index as it
    would look once `preview_run` publishes (what the gate evaluates)."""

    as_of: datetime | None = None
    preview_run: str | None = None


_VISIBLE_LIVE = "v.status = 'live'"
_VISIBLE_AS_OF = (
    "v.kind = 'content' AND v.status IN ('live', 'superseded')"
    " AND v.valid_from <= %(as_of)s AND (v.valid_to IS NULL OR %(as_of)s < v.valid_to)"
)
_VISIBLE_PREVIEW = (
    "((v.status = 'live' AND NOT EXISTS (SELECT 1 FROM document_versions s"
    "   WHERE s.document_id = v.document_id AND s.run_id = %(preview_run)s AND s.status = 'staged'))"
    " OR (v.status = 'staged' AND v.kind = 'content' AND v.run_id = %(preview_run)s))"
)


def _visibility(view: View) -> str:
    if view.preview_run is not None:
        return _VISIBLE_PREVIEW
    if view.as_of is not None:
        return _VISIBLE_AS_OF
    return _VISIBLE_LIVE


def search_chunks(
    conn: psycopg.Connection,
    query_vector: np.ndarray,
    query_text: str,
    groups: Sequence[str],
    model_id: int,
    k: int,
    view: View = View(),
    candidates: int = 50,
) -> list[dict[str, Any]]:
    """Hybrid retrieval: vector and full-text candidates fused by reciprocal rank.

    The caller's groups and the version visibility are WHERE clauses of both branches, so a
    chunk the caller may not see is never a candidate (no post-filtering).
    """
    visible = _visibility(view)
    acl = "v.acl_groups && %(groups)s::text[]"
    sql = f"""
    WITH vec AS (
        SELECT c.id, row_number() OVER (ORDER BY c.embedding <=> %(qvec)s) AS rnk
        FROM chunks c JOIN document_versions v ON v.id = c.version_id
        WHERE {visible} AND {acl} AND c.model_id = %(model_id)s
        ORDER BY c.embedding <=> %(qvec)s LIMIT %(cand)s
    ), fts AS (
        SELECT c.id, row_number() OVER (ORDER BY ts_rank_cd(c.tsv, q) DESC) AS rnk
        FROM chunks c JOIN document_versions v ON v.id = c.version_id,
             websearch_to_tsquery('simple', %(qtext)s) q
        WHERE {visible} AND {acl} AND c.model_id = %(model_id)s AND c.tsv @@ q
        ORDER BY ts_rank_cd(c.tsv, q) DESC LIMIT %(cand)s
    ), fused AS (
        SELECT coalesce(vec.id, fts.id) AS id,
               coalesce(1.0 / (60 + vec.rnk), 0) + coalesce(1.0 / (60 + fts.rnk), 0) AS rrf
        FROM vec FULL OUTER JOIN fts ON vec.id = fts.id
    )
    SELECT c.id AS chunk_id, d.source, d.uri, v.version_no, v.id AS version_id, v.status,
           v.acl_groups, c.section_path, c.page_start, c.page_end, c.char_start, c.char_end, c.text,
           f.rrf, 1 - (c.embedding <=> %(qvec)s) AS similarity
    FROM fused f JOIN chunks c ON c.id = f.id
    JOIN document_versions v ON v.id = c.version_id JOIN documents d ON d.id = v.document_id
    ORDER BY f.rrf DESC, c.id LIMIT %(k)s
    """
    params = {
        "qvec": query_vector,
        "qtext": query_text,
        "groups": list(groups),
        "model_id": model_id,
        "cand": max(candidates, k),
        "k": k,
        "as_of": view.as_of,
        "preview_run": view.preview_run,
    }
    return _rows(conn, sql, params)


def index_model_id(conn: psycopg.Connection, view: View = View()) -> int | None:
    """The model of the index a query sees: queries must embed with it."""
    row = conn.execute(
        f"SELECT v.model_id FROM document_versions v WHERE {_visibility(view)} AND v.kind = 'content'"
        " AND v.model_id IS NOT NULL GROUP BY v.model_id ORDER BY count(*) DESC LIMIT 1",
        {"as_of": view.as_of, "preview_run": view.preview_run},
    ).fetchone()
    return row[0] if row else None


def log_search(conn: psycopg.Connection, query: str, groups: Sequence[str], as_of: datetime | None, model_id: int | None, k: int, results: list[dict[str, Any]]) -> None:
    with conn.transaction():
        conn.execute(
            "INSERT INTO search_log (query, groups, as_of, model_id, k, results) VALUES (%s, %s, %s, %s, %s, %s::jsonb)",
            (query, list(groups), as_of, model_id, k, json.dumps(results)),
        )


# --------------------------------------------------------------------------- history and audits


def find_documents(conn: psycopg.Connection, uri: str) -> list[tuple[str, str]]:
    """(source, uri) pairs matching a URI given with or without its 'source/' prefix."""
    rows = conn.execute(
        "SELECT source, uri FROM documents WHERE uri = %s OR source || '/' || uri = %s ORDER BY source, uri",
        (uri, uri),
    ).fetchall()
    return [(r[0], r[1]) for r in rows]


def history(conn: psycopg.Connection, source: str, uri: str) -> list[dict[str, Any]]:
    return _rows(conn, 
            "SELECT version_no, kind, status, checksum, valid_from, valid_to, acl_groups, run_id,"
            " parser_version, chunker_version, model_name, model_revision"
            " FROM document_history WHERE source = %s AND uri = %s AND status <> 'discarded'"
            " ORDER BY version_no",
            (source, uri),
        )


def version_for(conn: psycopg.Connection, source: str, uri: str, version_no: int | None, as_of: datetime | None) -> dict[str, Any] | None:
    """The version `show` displays: a given number, the one valid at a time, or the live one."""
    base = (
        "SELECT v.id, v.version_no, v.status, v.kind, v.checksum, v.acl_groups, v.valid_from, v.valid_to,"
        " v.blob_sha256 FROM document_versions v JOIN documents d ON d.id = v.document_id"
        " WHERE d.source = %(source)s AND d.uri = %(uri)s AND "
    )
    if version_no is not None:
        where = "v.version_no = %(no)s"
    elif as_of is not None:
        where = _VISIBLE_AS_OF
    else:
        where = "v.status = 'live'"
    params = {"source": source, "uri": uri, "no": version_no, "as_of": as_of}
    return _row(conn, base + where + " ORDER BY v.version_no DESC LIMIT 1", params)


def version_chunks(conn: psycopg.Connection, version_id: int) -> list[dict[str, Any]]:
    return _rows(conn, 
            "SELECT id AS chunk_id, ord, section_path, page_start, page_end, char_start, char_end,"
            " token_count, text FROM chunks WHERE version_id = %s ORDER BY ord",
            (version_id,),
        )


def index_status(conn: psycopg.Connection) -> dict[str, Any]:
    per_source = conn.execute(
        "SELECT d.source, count(DISTINCT v.id), count(c.id) FROM document_versions v"
        " JOIN documents d ON d.id = v.document_id LEFT JOIN chunks c ON c.version_id = v.id"
        " WHERE v.status = 'live' GROUP BY d.source ORDER BY d.source"
    ).fetchall()
    quarantined = conn.execute(
        "SELECT count(*) FROM (SELECT DISTINCT ON (q.source, q.uri) q.* FROM quarantine q"
        " ORDER BY q.source, q.uri, q.quarantined_at DESC) latest"
        " WHERE NOT EXISTS (SELECT 1 FROM document_versions v JOIN documents d ON d.id = v.document_id"
        "  WHERE d.source = latest.source AND d.uri = latest.uri AND v.checksum = latest.checksum"
        "  AND v.status = 'live')"
    ).fetchone()[0]
    models = live_model_ids(conn)
    return {
        "sources": {r[0]: {"live_documents": r[1], "live_chunks": r[2]} for r in per_source},
        "quarantined_files": quarantined,
        "model_ids": models,
    }


def latest_quarantine(conn: psycopg.Connection, limit: int = 20) -> list[dict[str, Any]]:
    return _rows(conn, 
            "SELECT DISTINCT ON (source, uri) source, uri, stage, error, run_id, quarantined_at"
            " FROM quarantine ORDER BY source, uri, quarantined_at DESC LIMIT %s",
            (limit,),
        )


def iter_batches(items: Sequence[Any], size: int) -> Iterator[Sequence[Any]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]

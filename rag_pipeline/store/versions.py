"""Document versions: the live state a plan compares against, staging (invisible until
published) and the one publishing transaction. Content rows are never changed in place."""

from __future__ import annotations

import json
import weakref
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import numpy as np
import psycopg

from rag_pipeline.store import bm25_stats, index_upkeep, model_switches, text_search


@dataclass(frozen=True)
class LiveVersion:
    version_id: int
    version_no: int
    checksum: str
    acl_groups: tuple[str, ...]
    parser_version: str
    cleaner_version: str
    chunker_version: str
    purged: bool = False  # its text was purged (migration 018): the same bytes never bring it back
    # indexed with the fallback configuration although the server now has its language's
    # dictionary (migration 029): the next sync indexes it again, with the dictionary
    text_config_outdated: bool = False


def live_versions(conn: psycopg.Connection, source: str) -> dict[str, LiveVersion]:
    rows = conn.execute(
        "SELECT d.uri, v.id, v.version_no, v.checksum, v.acl_groups, v.parser_version,"
        " v.cleaner_version, v.chunker_version, coalesce(f.purged, false),"
        " coalesce(f.cfg = %(fallback)s AND rag_text_config((SELECT m.cfg FROM unnest(%(codes)s::text[], %(cfgs)s::text[])"
        "   AS m(code, cfg) WHERE m.code = v.language), %(fallback)s)::text <> %(fallback)s, false)"
        " FROM document_versions v JOIN documents d ON d.id = v.document_id"
        # a version's chunks are purged together and share one configuration: its first one says
        " LEFT JOIN LATERAL (SELECT c.purged_at IS NOT NULL AS purged, c.ts_config::text AS cfg FROM chunks c"
        "   WHERE c.version_id = v.id ORDER BY c.ord LIMIT 1) f ON true"
        " WHERE d.source = %(source)s AND v.status = 'live' AND v.kind = 'content'",
        {"source": source, "fallback": text_search.FALLBACK_CONFIG, "codes": list(text_search.DICTIONARY_LANGUAGES),
         "cfgs": [cfg for _, cfg in text_search.DICTIONARY_LANGUAGES.values()]},
    ).fetchall()
    return {
        r[0]: LiveVersion(r[1], r[2], r[3], tuple(r[4]), r[5] or "", r[6] or "", r[7] or "", r[8], r[9])
        for r in rows
    }


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
        " model_id, run_id, cleaning_counts, language)"
        " SELECT %(document_id)s, coalesce(max(version_no), 0) + 1, %(kind)s, 'staged', %(checksum)s,"
        " %(blob_sha256)s, %(size_bytes)s, %(media_type)s, %(acl_groups)s, %(parser_version)s,"
        " %(cleaner_version)s, %(chunker_version)s, %(model_id)s, %(run_id)s, %(cleaning_counts)s::jsonb,"
        " %(language)s"
        " FROM document_versions WHERE document_id = %(document_id)s AND status <> 'discarded'"  # discarded attempts hold no number
        " RETURNING id",
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
            "language": fields.get("language"),
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
    ts_config = text_search.config_for_language(fields.get("language"))
    with conn.transaction():
        version_id = _new_version(conn, _document_id(conn, source, uri), run_id, fields)
        if version_id is None:
            return False
        _copy_chunks(conn, version_id, fields["model_id"], ts_config, chunks, embeddings)
        conn.execute(
            "UPDATE run_items SET stage = 'staged', embeddings = NULL, chunks = NULL"
            " WHERE run_id = %s AND source = %s AND uri = %s",
            (run_id, source, uri),
        )
    if chunks:
        _note_copy_table(conn)
    return True


# Chunk rows go through COPY into a per-session temporary table, then one INSERT .. SELECT
# computes tsv (COPY cannot evaluate to_tsvector, and a generated tsv column would slow COPY
# itself down about 6x). Binary format: no escaping of text, exact float32 vectors. The INSERT
# empties the table as it reads it, so an outer transaction staging several versions never
# carries rows from one to the next.
_COPY_TYPES = ("int4", "text[]", "int4", "int4", "int4", "int4", "int4", "text", "text", "text", "vector", "text")
# Sessions whose table was created in a committed transaction (a rolled-back CREATE is gone).
_COPY_TABLE_COMMITTED: weakref.WeakSet[psycopg.Connection] = weakref.WeakSet()


def _copy_chunks(
    conn: psycopg.Connection, version_id: int, model_id: int, ts_config: str,
    chunks: Sequence[dict[str, Any]], embeddings: np.ndarray,
) -> None:
    """Write a version's chunk rows inside the caller's transaction: COPY, then INSERT .. SELECT
    in `ord` order, so ids are assigned exactly as one INSERT per chunk would assign them."""
    if not chunks:
        return
    if conn not in _COPY_TABLE_COMMITTED:  # granted to all: a later SET ROLE may still use it
        conn.execute(
            "CREATE TEMP TABLE IF NOT EXISTS rag_chunk_copy (ord int4, section_path text[], page_start int4,"
            " page_end int4, char_start int4, char_end int4, token_count int4, content_hash text, text text,"
            " search_prefix text, embedding vector, search_text text) ON COMMIT DELETE ROWS;"
            " GRANT ALL ON rag_chunk_copy TO PUBLIC"
        )
    with conn.cursor() as cur:
        with cur.copy(
            "COPY rag_chunk_copy (ord, section_path, page_start, page_end, char_start, char_end, token_count,"
            " content_hash, text, search_prefix, embedding, search_text) FROM STDIN (FORMAT BINARY)"
        ) as copy:
            copy.set_types(list(_COPY_TYPES))
            for i, c in enumerate(chunks):
                copy.write_row((
                    c["ord"], list(c["section_path"]), c.get("page_start"), c.get("page_end"), c["char_start"],
                    c["char_end"], c["token_count"], c["content_hash"], c["text"], c.get("search_prefix"),
                    embeddings[i], c["search_text"],
                ))
        cur.execute(
            "WITH copied AS (DELETE FROM rag_chunk_copy RETURNING *)"
            " INSERT INTO chunks (version_id, ord, section_path, page_start, page_end, char_start,"
            " char_end, token_count, content_hash, text, search_prefix, model_id, embedding, ts_config, tsv)"
            " SELECT %(version)s, ord, section_path, page_start, page_end, char_start, char_end, token_count,"
            " content_hash, text, search_prefix, %(model)s, embedding, cfg.c, to_tsvector(cfg.c, search_text)"
            # a language's own configuration where this server has it (migration 029), else the fallback
            " FROM copied, (SELECT rag_text_config(%(config)s, %(fallback)s) AS c) cfg ORDER BY ord",
            {"version": version_id, "model": model_id, "config": ts_config, "fallback": text_search.FALLBACK_CONFIG},
        )


def _note_copy_table(conn: psycopg.Connection) -> None:
    """After a staging transaction ended: with no transaction open any more, it committed, and
    the COPY table (if it created one) lasts for the session."""
    if conn.info.transaction_status == psycopg.pq.TransactionStatus.IDLE:
        _COPY_TABLE_COMMITTED.add(conn)


def stage_acl_version(conn: psycopg.Connection, run_id: str, source: str, uri: str, acl_groups: Sequence[str]) -> bool:
    """A new version that differs only in ACL groups: same chunks and embeddings, copied
    (content rows stay immutable per version), nothing re-embedded; chunks of a purged version
    are copied purged. The live version is read FOR SHARE: a purge of the document in progress
    (store.purge.lock_versions) finishes first, so its text is never copied. Commits."""
    with conn.transaction():
        live = conn.execute(
            "SELECT v.id, v.checksum, v.blob_sha256, v.size_bytes, v.media_type, v.parser_version,"
            " v.cleaner_version, v.chunker_version, v.model_id, v.cleaning_counts, v.language"
            " FROM document_versions v JOIN documents d ON d.id = v.document_id"
            " WHERE d.source = %s AND d.uri = %s AND v.status = 'live' FOR SHARE OF v",
            (source, uri),
        ).fetchone()
        if live is None:
            return False
        fields = dict(
            zip(
                ("checksum", "blob_sha256", "size_bytes", "media_type", "parser_version",
                 "cleaner_version", "chunker_version", "model_id", "cleaning_counts", "language"),
                live[1:],
            )
        )
        fields["acl_groups"] = list(acl_groups)
        version_id = _new_version(conn, _document_id(conn, source, uri), run_id, fields)
        if version_id is None:
            return False
        conn.execute(
            "INSERT INTO chunks (version_id, ord, section_path, page_start, page_end, char_start, char_end,"
            " token_count, content_hash, text, search_prefix, model_id, embedding, ts_config, tsv, purged_at)"
            " SELECT %s, ord, section_path, page_start, page_end, char_start, char_end, token_count,"
            " content_hash, text, search_prefix, model_id, embedding, ts_config, tsv, purged_at"
            " FROM chunks WHERE version_id = %s",
            (version_id, live[0]),
        )
        conn.execute(  # a quarantined item keeps its stage: its content still failed
            "UPDATE run_items SET stage = 'staged' WHERE run_id = %s AND source = %s AND uri = %s"
            " AND stage <> 'quarantined'",
            (run_id, source, uri),
        )
    return True


# the columns of the two reads below, in their order
_VERSION_FIELDS = ("checksum", "blob_sha256", "size_bytes", "media_type", "acl_groups", "parser_version",
                   "cleaner_version", "chunker_version", "cleaning_counts", "language")
_CHUNK_FIELDS = ("ord", "text", "section_path", "page_start", "page_end", "char_start", "char_end", "token_count",
                 "content_hash", "search_prefix")


def live_versions_of_chunks(conn: psycopg.Connection, chunk_ids: Sequence[int]) -> list[int]:
    """The live content versions holding any of the chunks, by id."""
    return [r[0] for r in conn.execute(
        "SELECT DISTINCT v.id FROM chunks c JOIN document_versions v ON v.id = c.version_id"
        " WHERE c.id = ANY(%s) AND v.status = 'live' AND v.kind = 'content' ORDER BY v.id",
        (list(chunk_ids),),
    ).fetchall()]


def version_sources(conn: psycopg.Connection, version_ids: Sequence[int]) -> list[str]:
    """The sources of the versions' documents: what a run re-staging them must hold."""
    return [r[0] for r in conn.execute(
        "SELECT DISTINCT d.source FROM document_versions v JOIN documents d ON d.id = v.document_id"
        " WHERE v.id = ANY(%s) ORDER BY d.source",
        (list(version_ids),),
    ).fetchall()]


def version_chunks(conn: psycopg.Connection, version_id: int) -> list[dict[str, Any]]:
    """A version's chunk rows in order, as the chunker's fields (search_text rebuilt from the
    stored prefix and text: what was embedded)."""
    found = conn.execute(
        "SELECT ord, text, section_path, page_start, page_end, char_start, char_end, token_count, content_hash,"
        " search_prefix FROM chunks WHERE version_id = %s ORDER BY ord",
        (version_id,),
    ).fetchall()
    out = [dict(zip(_CHUNK_FIELDS, r)) for r in found]
    for c in out:
        c["search_prefix"] = c["search_prefix"] or ""
        c["section_path"] = list(c["section_path"] or [])
        c["search_text"] = c["search_prefix"] + c["text"]
    return out


def stage_rechunked_version(conn: psycopg.Connection, run_id: str, version_id: int, model_id: int,
                            chunks: Sequence[dict[str, Any]], embeddings: np.ndarray) -> bool:
    """A live version again with its chunks cut smaller (a model migration to a model that reads
    fewer tokens: migration/rechunk.py): the same bytes, parse, groups and language under a new
    version number, embedded with `model_id`. The version is read FOR SHARE and must still be
    live and unpurged: one superseded or purged since its chunks were read is left alone
    (False), so a purge in between never brings its text back. Commits."""
    with conn.transaction():
        live = conn.execute(
            "SELECT v.document_id, v.checksum, v.blob_sha256, v.size_bytes, v.media_type, v.acl_groups,"
            " v.parser_version, v.cleaner_version, v.chunker_version, v.cleaning_counts, v.language"
            " FROM document_versions v"
            " WHERE v.id = %s AND v.status = 'live' AND v.kind = 'content'"
            " AND NOT EXISTS (SELECT 1 FROM chunks c WHERE c.version_id = v.id AND c.purged_at IS NOT NULL)"
            " FOR SHARE OF v",
            (version_id,),
        ).fetchone()
        if live is None:
            return False
        fields = {**dict(zip(_VERSION_FIELDS, live[1:])), "model_id": model_id}
        new_id = _new_version(conn, live[0], run_id, fields)
        if new_id is None:
            return False
        _copy_chunks(conn, new_id, model_id, text_search.config_for_language(fields["language"]), chunks, embeddings)
    _note_copy_table(conn)
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


def staged_count(conn: psycopg.Connection, run_id: str) -> int:
    """Versions (content, ACL-only, tombstones) the run has staged and not yet published."""
    return int(conn.execute(
        "SELECT count(*) FROM document_versions WHERE run_id = %s AND status = 'staged'", (run_id,)
    ).fetchone()[0])


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


def publish(conn: psycopg.Connection, run_id: str) -> dict[str, int]:
    """Make all of a run's staged versions live at one instant, closing what they replace.
    One transaction: readers see the index before or after, never half of it. Commits."""
    with conn.transaction():
        model_switches.check_publish(conn, run_id)  # a model switch since the run started: refused
        now = conn.execute("SELECT now()").fetchone()[0]
        gone = [r[0] for r in conn.execute(
            "UPDATE document_versions SET status = 'superseded', valid_to = %(now)s"
            " WHERE status = 'live' AND document_id IN"
            " (SELECT document_id FROM document_versions WHERE run_id = %(run)s AND status = 'staged')"
            " RETURNING id",
            {"run": run_id, "now": now},
        ).fetchall()]
        conn.execute(  # a document that re-appears closes its tombstone's window
            "UPDATE document_versions SET valid_to = %(now)s"
            " WHERE status = 'tombstoned' AND valid_to IS NULL AND document_id IN"
            " (SELECT document_id FROM document_versions WHERE run_id = %(run)s AND status = 'staged')",
            {"run": run_id, "now": now},
        )
        tombstoned = conn.execute(
            "UPDATE document_versions SET status = 'tombstoned', valid_from = %(now)s"
            " WHERE run_id = %(run)s AND status = 'staged' AND kind = 'tombstone'",
            {"run": run_id, "now": now},
        ).rowcount
        came = [r[0] for r in conn.execute(
            "UPDATE document_versions SET status = 'live', valid_from = %(now)s"
            " WHERE run_id = %(run)s AND status = 'staged' AND kind = 'content' RETURNING id",
            {"run": run_id, "now": now},
        ).fetchall()]
        bm25_stats.apply_publish(conn, came, gone)  # full-text statistics change with the index
    index_upkeep.flush_pending_lists(conn)  # the status changes' index entries, merged before any search reads them
    return {"published": len(came), "superseded": len(gone), "tombstoned": tombstoned}


def superseded_chunk_ids(
    conn: psycopg.Connection, chunk_ids: Sequence[int], as_of: datetime | None, preview_run: str | None
) -> set[int]:
    """Of the given chunks, those whose version has a newer version the view should have shown
    instead. Written independently of store/search.py's visibility clauses: the gate uses it to check
    them, so it must not share their mistakes."""
    if not chunk_ids:
        return set()
    found = conn.execute(
        "SELECT c.id FROM chunks c JOIN document_versions v ON v.id = c.version_id"
        " WHERE c.id = ANY(%(ids)s) AND EXISTS (SELECT 1 FROM document_versions n"
        "  WHERE n.document_id = v.document_id AND n.version_no > v.version_no AND ("
        "   (%(as_of)s::timestamptz IS NULL AND n.status IN ('live', 'superseded', 'tombstoned'))"
        "   OR (%(as_of)s::timestamptz IS NOT NULL AND n.valid_from <= %(as_of)s)"
        "   OR (n.status = 'staged' AND n.run_id = %(run)s)))",
        {"ids": list(chunk_ids), "as_of": as_of, "run": preview_run},
    ).fetchall()
    return {r[0] for r in found}

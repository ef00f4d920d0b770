"""Audits: every version of a document and the chunks a version held."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import psycopg

from rag_pipeline.store._sql import row, rows
from rag_pipeline.store.search import VISIBLE_AS_OF


def find_documents(conn: psycopg.Connection, uri: str) -> list[tuple[str, str]]:
    """(source, uri) pairs matching a URI given with or without its 'source/' prefix. A name
    matches in any Unicode normalisation form too: a file copied from a Mac is stored as its
    name's bytes, decomposed ("Mu\u0308ller.md"), where a user types "Müller.md" composed; the
    exact name is tried first, since the comparison in NFC reads every document's name."""
    rows = conn.execute(
        "SELECT source, uri FROM documents WHERE uri = %s OR source || '/' || uri = %s ORDER BY source, uri",
        (uri, uri),
    ).fetchall()
    if not rows:
        rows = conn.execute(
            "SELECT source, uri FROM documents WHERE normalize(uri, NFC) = normalize(%(uri)s, NFC)"
            " OR normalize(source || '/' || uri, NFC) = normalize(%(uri)s, NFC) ORDER BY source, uri",
            {"uri": uri},
        ).fetchall()
    return [(r[0], r[1]) for r in rows]


def history(conn: psycopg.Connection, source: str, uri: str) -> list[dict[str, Any]]:
    return rows(conn,
            "SELECT version_no, kind, change, status, checksum, valid_from, valid_to, acl_groups, run_id,"
            " parser_version, chunker_version, model_name, model_revision, purged_at,"
            " (SELECT p.reason FROM purges p WHERE p.version_id = document_history.version_id) AS purge_reason"
            " FROM document_history WHERE source = %s AND uri = %s"
            " ORDER BY version_no",
            (source, uri),
        )


def version_for(conn: psycopg.Connection, source: str, uri: str, version_no: int | None, as_of: datetime | None) -> dict[str, Any] | None:
    """The version `show` displays: a given number, the one valid at a time, or the live one."""
    base = (
        "SELECT v.id, v.version_no, v.status, v.kind, v.checksum, v.acl_groups, v.valid_from, v.valid_to,"
        " v.blob_sha256 FROM document_versions v JOIN documents d ON d.id = v.document_id"
        " WHERE d.source = %(source)s AND d.uri = %(uri)s AND v.status <> 'discarded' AND "
    )
    if version_no is not None:
        where = "v.version_no = %(no)s"
    elif as_of is not None:
        where = VISIBLE_AS_OF
    else:
        where = "v.status = 'live'"
    params = {"source": source, "uri": uri, "no": version_no, "as_of": as_of}
    return row(conn, base + where + " ORDER BY v.version_no DESC LIMIT 1", params)


def version_chunks(conn: psycopg.Connection, version_id: int) -> list[dict[str, Any]]:
    return rows(conn,
            "SELECT id AS chunk_id, ord, section_path, page_start, page_end, char_start, char_end,"
            " token_count, search_prefix, text, purged_at FROM chunks WHERE version_id = %s ORDER BY ord",
            (version_id,),
        )

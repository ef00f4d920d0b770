"""Retrieval SQL: which versions a query sees (live, as of a time, or a run's preview), the
hybrid query with the caller's groups inside both branches."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import numpy as np
import psycopg

from rag_pipeline.store._sql import rows


@dataclass(frozen=True)
class View:
    """Which versions a query sees: the live index, the index as of a time, or the index as it
    would look once `preview_run` publishes (what the gate evaluates)."""

    as_of: datetime | None = None
    preview_run: str | None = None


_VISIBLE_LIVE = "v.status = 'live'"
CANDIDATES = 50  # candidates per branch before fusion


VISIBLE_AS_OF = (
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
        return VISIBLE_AS_OF
    return _VISIBLE_LIVE


def search_chunks(
    conn: psycopg.Connection,
    query_vector: np.ndarray,
    query_text: str,
    groups: Sequence[str],
    model_id: int,
    k: int,
    view: View = View(),
    candidates: int = CANDIDATES,
) -> list[dict[str, Any]]:
    """Hybrid retrieval: vector and full-text candidates fused by reciprocal rank. Each row
    carries its rank and score in each branch (`vector_*`, `fulltext_*`; None where the branch did
    not find it), which the search log keeps to explain the result.

    The caller's groups and the version visibility are WHERE clauses of both branches, so a
    chunk the caller may not see is never a candidate (no post-filtering).
    """
    visible = _visibility(view)
    acl = "v.acl_groups && %(groups)s::text[]"
    sql = f"""
    WITH vec AS (
        SELECT c.id, row_number() OVER (ORDER BY c.embedding <=> %(qvec)s) AS rnk,
               1 - (c.embedding <=> %(qvec)s) AS score
        FROM chunks c JOIN document_versions v ON v.id = c.version_id
        WHERE {visible} AND {acl} AND c.model_id = %(model_id)s
        ORDER BY c.embedding <=> %(qvec)s LIMIT %(cand)s
    ), fts AS (
        SELECT c.id, row_number() OVER (ORDER BY ts_rank_cd(c.tsv, q) DESC) AS rnk,
               ts_rank_cd(c.tsv, q) AS score
        FROM chunks c JOIN document_versions v ON v.id = c.version_id,
             websearch_to_tsquery('simple', %(qtext)s) q
        WHERE {visible} AND {acl} AND c.model_id = %(model_id)s AND c.tsv @@ q
        ORDER BY ts_rank_cd(c.tsv, q) DESC LIMIT %(cand)s
    ), fused AS (
        SELECT coalesce(vec.id, fts.id) AS id,
               coalesce(1.0 / (60 + vec.rnk), 0) + coalesce(1.0 / (60 + fts.rnk), 0) AS rrf,
               vec.rnk AS vector_rank, vec.score AS vector_score, fts.rnk AS fulltext_rank, fts.score AS fulltext_score
        FROM vec FULL OUTER JOIN fts ON vec.id = fts.id
    )
    SELECT c.id AS chunk_id, d.source, d.uri, v.version_no, v.id AS version_id, v.status,
           v.acl_groups, c.section_path, c.page_start, c.page_end, c.char_start, c.char_end, c.text,
           f.rrf, 1 - (c.embedding <=> %(qvec)s) AS similarity,
           f.vector_rank, f.vector_score, f.fulltext_rank, f.fulltext_score
    FROM fused f JOIN chunks c ON c.id = f.id
    JOIN document_versions v ON v.id = c.version_id JOIN documents d ON d.id = v.document_id
    ORDER BY f.rrf DESC, c.id LIMIT %(k)s
    """  # noqa: S608 -- the visibility and ACL clauses are fixed fragments; values are parameters
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
    return rows(conn, sql, params)


def index_model_id(conn: psycopg.Connection, view: View = View()) -> int | None:
    """The model of the index a query sees: queries must embed with it."""
    row = conn.execute(
        f"SELECT v.model_id FROM document_versions v WHERE {_visibility(view)} AND v.kind = 'content'"  # noqa: S608 -- fixed fragment
        " AND v.model_id IS NOT NULL GROUP BY v.model_id ORDER BY count(*) DESC LIMIT 1",
        {"as_of": view.as_of, "preview_run": view.preview_run},
    ).fetchone()
    return row[0] if row else None


def superseded_chunk_ids(
    conn: psycopg.Connection, chunk_ids: Sequence[int], as_of: datetime | None, preview_run: str | None
) -> set[int]:
    """Of the given chunks, those whose version has a newer version the view should have shown
    instead. Written independently of the visibility clauses above: the gate uses it to check
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

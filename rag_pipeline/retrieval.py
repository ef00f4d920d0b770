"""Search over the index as the caller may see it: their groups and a point in time are part
of the SQL query, the query is embedded with the index's own model, and every search is logged
(query, groups, as-of, model, candidates and scores) so a past answer can be explained."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

import psycopg

from rag_pipeline import store
from rag_pipeline.embedding import Embedder, ModelError
from rag_pipeline.errors import UsageError

MAX_QUERY_CHARS = 2000  # the model reads 256 tokens; a longer "query" is a document, not a question


class QueryError(UsageError):
    """The query cannot be searched as given; the message says why."""


@dataclass
class Hit:
    chunk_id: int
    source: str
    uri: str
    version_no: int
    version_id: int
    section_path: list[str]
    page_start: int | None
    page_end: int | None
    char_start: int
    char_end: int
    score: float  # fused rank score (reciprocal rank fusion of vector and full-text ranks)
    similarity: float  # cosine similarity of query and chunk: what refusal thresholds compare
    text: str
    acl_groups: list[str]
    status: str

    def record(self, *, with_text: bool = True) -> dict[str, Any]:
        """The hit as the CLI prints it in JSON, the evaluation lists it and the search log keeps it."""
        record = {"uri": self.uri, "source": self.source, "version": self.version_no,
                  "section_path": self.section_path, "pages": [self.page_start, self.page_end],
                  "chunk_id": self.chunk_id, "score": round(self.score, 6), "similarity": round(self.similarity, 4)}
        if with_text:
            record["text"] = self.text
        return record


def check_model(conn: psycopg.Connection, embedder: Embedder, view: store.search.View = store.search.View()) -> int | None:
    """The id of the index's model, after checking the loaded model is that model."""
    model_id = store.search.index_model_id(conn, view)
    if model_id is None:
        return None
    indexed = store.models.model_by_id(conn, model_id) or {}
    if (indexed.get("weights_sha256"), indexed.get("numerics", "fp32")) != (embedder.identity.weights_sha256, embedder.identity.numerics):
        raise ModelError(
            f"the index was embedded with {indexed.get('name')} ({indexed.get('revision')}); "
            f"queries must use that model but {embedder.identity.name} is configured"
        )
    return model_id


def search(
    conn: psycopg.Connection,
    embedder: Embedder,
    query: str,
    groups: list[str],
    *,
    k: int = 10,
    as_of: datetime | None = None,
    preview_run: str | None = None,
    log: bool = True,
) -> list[Hit]:
    if len(query) > MAX_QUERY_CHARS:
        raise QueryError(f"query is {len(query):,} characters long; the limit is {MAX_QUERY_CHARS:,}")
    if "\x00" in query:
        raise QueryError("the query contains a NUL character; remove it")
    view = store.search.View(as_of=as_of, preview_run=preview_run)
    groups = sorted({g.strip() for g in groups if g and g.strip()})
    model_id = check_model(conn, embedder, view)
    hits: list[Hit] = []
    if model_id is not None and groups and query.strip():
        vector = embedder.encode([query])[0]
        rows = store.search.search_chunks(conn, vector, query, groups, model_id, k, view)
        hits = [_hit(r) for r in rows]
    if log:
        store.search.log_search(
            conn, query, groups, as_of, model_id, k,
            [h.record(with_text=False) for h in hits],
        )
    return hits


def _hit(row: dict[str, Any]) -> Hit:
    return Hit(
        chunk_id=row["chunk_id"],
        source=row["source"],
        uri=row["uri"],
        version_no=row["version_no"],
        version_id=row["version_id"],
        section_path=list(row["section_path"]),
        page_start=row["page_start"],
        page_end=row["page_end"],
        char_start=row["char_start"],
        char_end=row["char_end"],
        score=float(row["rrf"]),
        similarity=float(row["similarity"]),
        text=row["text"],
        acl_groups=list(row["acl_groups"]),
        status=row["status"],
    )

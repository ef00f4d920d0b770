"""Search over the index as the caller may see it: their groups and a point in time are part
of the SQL query, the query is embedded with the index's own model, and every search is logged
(query, groups, as-of, model, candidates and scores) so a past answer can be explained."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import psycopg

from rag_pipeline import rerank, store
from rag_pipeline.embedding import Embedder, ModelError
from rag_pipeline.errors import UsageError

MAX_QUERY_CHARS = 2000  # the model reads 256 tokens; a longer "query" is a document, not a question
MODES = ("vector", "fulltext", "hybrid", "hybrid+rerank")
DEFAULT_MODE = "hybrid+rerank"
RERANK_DEPTH = 50  # fused candidates the rerank stage reorders before the top k are kept


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
    # Why it ranked where it did: branch ranks, BM25 term coverage and, after the rerank stage,
    # every rerank feature and the rerank score. Logged with the hit.
    features: dict[str, float] = field(default_factory=dict)

    def record(self, *, with_text: bool = True) -> dict[str, Any]:
        """The hit as the CLI prints it in JSON, the evaluation lists it and the search log keeps it."""
        record = {"uri": self.uri, "source": self.source, "version": self.version_no,
                  "section_path": self.section_path, "pages": [self.page_start, self.page_end],
                  "chunk_id": self.chunk_id, "score": round(self.score, 6), "similarity": round(self.similarity, 4)}
        if self.features:
            record["features"] = self.features
        if with_text:
            record["text"] = self.text
        return record


def check_model(conn: psycopg.Connection, embedder: Embedder, view: store.search.View = store.search.View()) -> int | None:
    """The id of the index's model, after checking the loaded model is that model."""
    model_id = store.search.index_model_id(conn, view)
    if model_id is None:
        return None
    indexed = store.models.model_by_id(conn, model_id) or {}
    if indexed.get("weights_sha256") != embedder.identity.weights_sha256:
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
    mode: str = DEFAULT_MODE,
) -> list[Hit]:
    """The top k chunks for the query as the caller may see them, by `mode`: one branch alone
    (vector, fulltext), both fused by reciprocal rank (hybrid), or fused then reordered by the
    deterministic rerank stage (hybrid+rerank, the default)."""
    if mode not in MODES:
        raise QueryError(f"unknown search mode {mode!r}; choose one of {', '.join(MODES)}")
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
        reranked = mode == "hybrid+rerank"
        depth = max(k, RERANK_DEPTH) if reranked else k
        rows = store.search.search_chunks(conn, vector, query, groups, model_id, depth, view,
                                          candidates=max(50, depth), mode="hybrid" if reranked else mode)
        hits = [_hit(r) for r in rows]
        if reranked:
            hits = rerank_hits(query, hits)[:k]
    if log:
        store.search.log_search(
            conn, query, groups, as_of, model_id, k,
            [h.record(with_text=False) for h in hits],
        )
    return hits


def rerank_hits(query: str, hits: list[Hit]) -> list[Hit]:
    """Reorder fused hits by the rerank stage; each hit keeps its features and rerank score."""
    candidates = [rerank.Candidate(h.text, h.section_path, h.score, h.features.get("term_coverage", 0.0)) for h in hits]
    ordered = []
    for index, value, found in rerank.rerank(query, candidates):
        hit = hits[index]
        hit.features = {**hit.features, **found, "rerank": round(value, 6)}
        ordered.append(hit)
    return ordered


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
        features=_branch_features(row),
    )


def _branch_features(row: dict[str, Any]) -> dict[str, float]:
    found = {"term_coverage": round(float(row.get("term_coverage") or 0.0), 6)}
    for name in ("vec_rank", "fts_rank"):
        if row.get(name) is not None:
            found[name] = int(row[name])
    return found

"""The structural branch of a hybrid search: the chunks of the numbered parts a question names.

A question that says "§ 12" or "Item 1A" means that part of a document, which neither the
embedding nor BM25 can see: the number is one token among many, and every chunk of a long law
mentions paragraphs. The question's keys (retrieval/section_refs.py) are matched against each
chunk's section path through migration 022's expression index (rag_section_keys), with the
view's versions and the caller's groups in the same WHERE clause as every other branch: a
number in a question can only find chunks the caller could find anyway. The matches are ranked
by their distance to the question (a law has one § 12, a set of filings one Item 7 each) and
join the fusion as a third ranked list; every returned row carries `section_match` (1: the
chunk's innermost heading is the named part, 0.5: it lies within it), which the rerank stage
puts first.

Cost: the branch reads at most SECTION_ROWS matching chunks (which ones, beyond that, is the
index's order), so a key every document has ("s:1") stays bounded.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

SECTION_ROWS = 5_000
MAX_KEYS = 8  # as retrieval.section_refs.MAX_REFS: the statement never takes more


def branch(where: str) -> str:
    """The `sec` CTE's body: matching chunks under `where` (the view and the caller's groups),
    ranked by cosine distance to the query vector, ties by id. A purged chunk (no vector, no
    text; migration 018) keeps its section path but is never found, as in the other branches."""
    return f"""
        SELECT id, row_number() OVER (ORDER BY dist, id) AS rnk FROM (
            SELECT m.id, m.embedding <=> %(qvec)s AS dist FROM (
                SELECT c.id, c.embedding FROM chunks c JOIN document_versions v ON v.id = c.version_id
                WHERE {where} AND rag_section_keys(c.section_path, c.text) && %(section_refs)s::text[]
                  AND c.embedding IS NOT NULL
                LIMIT %(section_rows)s) m
            ORDER BY m.embedding <=> %(qvec)s, m.id LIMIT %(cand)s) matched"""  # noqa: S608 -- fixed fragments


def fused(hybrid: str) -> str:
    """The hybrid fusion with the structural list added by reciprocal rank (same k)."""
    head = ("SELECT coalesce(h.id, sec.id) AS id, coalesce(h.rrf, 0) + coalesce(1.0 / (%(rrf_k)s + sec.rnk), 0) AS rrf,"
            " h.vec_rank, h.vec_score, h.fts_rank, h.fts_score")
    return f"{head} FROM ({hybrid}) h FULL OUTER JOIN sec ON sec.id = h.id"


# Every row's closeness to the named parts (0 when the question names none): migration 022.
MATCH_COLUMN = "rag_section_match(c.section_path, c.text, %(section_refs)s::text[]) AS section_match"


def params(keys: Sequence[str]) -> dict[str, Any]:
    return {"section_refs": list(keys)[:MAX_KEYS], "section_rows": SECTION_ROWS}

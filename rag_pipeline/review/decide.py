"""Deciding on an answer: approve, reject, or correct it. Every decision is a new row (the
answer record and earlier decisions are never changed); the latest one is in force and takes the
answer out of the open queue. A correction is the reviewer's own answer to the same search (JSON
as `verify` takes it, or text with [chunk N] markers): its citations are verified again by the
same checks (answers.verify), judged against the original search and its caller, and the result
is kept with the decision, so a correction that cites what the user could not see is on record
as such."""

from __future__ import annotations

from typing import Any

import psycopg

from rag_pipeline import store
from rag_pipeline.answers.draft import read_answer
from rag_pipeline.answers.verify import verify
from rag_pipeline.embedding import Embedder
from rag_pipeline.errors import UsageError
from rag_pipeline.review import record

DECISIONS = ("approve", "reject", "correct")
MAX_COMMENT_CHARS = 4000


def decide(conn: psycopg.Connection, answer_id: int, decision: str, *, reviewer: str, groups: tuple[str, ...] | None,
           comment: str | None = None, correction: bytes | None = None,
           embedder: Embedder | None = None) -> dict[str, Any]:
    """Append the decision; returns it as recorded (id, time, and for a correction its verdict
    and checked claims). NotFoundError when `groups` may not read the answer; UsageError for a
    bad decision, comment or correction (nothing is recorded then)."""
    if decision not in DECISIONS:
        raise UsageError(f"unknown decision {decision[:40]!r}; one of {', '.join(DECISIONS)}")
    comment = (comment or "").strip() or None
    if comment is not None and len(comment) > MAX_COMMENT_CHARS:
        raise UsageError(f"the comment is {len(comment):,} characters long; the limit is {MAX_COMMENT_CHARS:,}")
    if "\x00" in (comment or ""):
        raise UsageError("the comment contains a NUL character")
    if (decision == "correct") != (correction is not None):
        raise UsageError("a correction needs the corrected answer, and only a correction takes one")
    answer = record.load(conn, answer_id, groups)  # NotFoundError before any model is loaded
    fields: dict[str, Any] = {"answer_id": answer_id, "decision": decision, "reviewer": reviewer, "comment": comment}
    if correction is not None:
        if embedder is None:
            raise UsageError("a correction is verified again: the embedding model is needed")
        draft = read_answer(correction, answer.search_id)
        checked = verify(conn, embedder, draft, user=answer.caller, record=False)
        fields.update(corrected=draft.to_dict(), corrected_claims=[c.to_dict(for_caller=False) for c in checked.claims],
                      corrected_verdict=checked.verdict)
    done = store.reviews.record_decision(conn, fields)
    return {**fields, "id": done["id"], "decided_at": done["decided_at"]}


def draft_text(answer: record.Review) -> str:
    """The answer's draft as text with [chunk N] markers: what the correction form starts from."""
    parts = []
    for claim in answer.draft.get("claims", []):
        ids = [c["chunk_id"] for c in claim.get("citations", []) if isinstance(c, dict) and "chunk_id" in c]
        marker = f" [chunk{'s' if len(ids) > 1 else ''} {', '.join(map(str, ids))}]" if ids else ""
        parts.append(f"{claim.get('text', '')}{marker}")
    return " ".join(parts)

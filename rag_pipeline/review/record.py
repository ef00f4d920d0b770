"""One answer as a reviewer sees it, in four parts: the question (who asked, with which groups,
as of when), the passages the search returned and the answer cited (each with its document,
version, section path, pages and validity), the draft as the generator gave it, and the citation
map (each claim, the passages it cites, and each check's status and reason). With them the
answer's decisions, oldest first (the last one is in force)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import psycopg

from rag_pipeline import store
from rag_pipeline.review.errors import NotFoundError


@dataclass
class Passage:
    chunk_id: int
    rank: int | None          # its rank among the search's results; None: cited, not returned
    text: str
    uri: str
    source: str
    document_id: int
    version_id: int
    version_no: int
    status: str
    valid_from: datetime | None
    valid_to: datetime | None
    section_path: list[str]
    pages: tuple[int | None, int | None]
    cited_by: list[int] = field(default_factory=list)  # claim numbers, from 1

    def validity(self) -> str:
        start = self.valid_from.isoformat(timespec="seconds") if self.valid_from else "never published"
        end = self.valid_to.isoformat(timespec="seconds") if self.valid_to else "now"
        return f"{self.status}, valid {start} to {end}"


@dataclass
class Review:
    answer_id: int
    search_id: int
    question: str
    caller: str | None
    search_groups: list[str]
    search_as_of: datetime | None
    verified_at: datetime
    verdict: str
    state: str
    message: str | None
    needs_review: bool  # verified, yet some claim stands only on citations judged across languages
    draft: dict[str, Any]
    claims: list[dict[str, Any]]       # status, reason, citations (chunk_id, status, reason, quote)
    passages: list[Passage]
    decisions: list[dict[str, Any]]

    def passage(self, chunk_id: int) -> Passage | None:
        return next((p for p in self.passages if p.chunk_id == chunk_id), None)

    def to_dict(self) -> dict[str, Any]:
        return {
            "answer_id": self.answer_id, "search_id": self.search_id, "question": self.question, "caller": self.caller,
            "search_groups": self.search_groups, "search_as_of": self.search_as_of, "verified_at": self.verified_at,
            "verdict": self.verdict, "needs_review": self.needs_review, "state": self.state, "message": self.message,
            "draft": self.draft,
            "claims": self.claims,
            "passages": [{"chunk_id": p.chunk_id, "rank": p.rank, "uri": p.uri, "source": p.source,
                          "version": p.version_no, "status": p.status, "valid_from": p.valid_from,
                          "valid_to": p.valid_to, "section_path": p.section_path, "pages": list(p.pages),
                          "cited_by": p.cited_by, "text": p.text} for p in self.passages],
            "decisions": self.decisions,
        }


def load(conn: psycopg.Connection, answer_id: int, groups: tuple[str, ...] | None) -> Review:
    """The answer's four parts; NotFoundError when it does not exist or `groups` may not read
    every passage it involves (`None`: the database login, which reads everything)."""
    found = store.reviews.answer(conn, answer_id, groups)
    if found is None:
        raise NotFoundError(f"no answer {answer_id} to review"
                            + ("" if groups is None else " that your groups may read"))
    ranks = {}
    for rank, hit in enumerate(found["results"] or [], 1):
        if isinstance(hit, dict) and isinstance(hit.get("chunk_id"), int):
            ranks.setdefault(hit["chunk_id"], rank)
    cited: dict[int, list[int]] = {}
    for number, claim in enumerate(found["claims"], 1):
        for citation in claim.get("citations", []):
            if isinstance(citation.get("chunk_id"), int):
                cited.setdefault(citation["chunk_id"], []).append(number)
    chunks = store.reviews.passages(conn, [*ranks, *cited])
    order = sorted(chunks, key=lambda c: (ranks.get(c, 1 << 62), c))
    passages = [_passage(chunks[c], ranks.get(c), sorted(set(cited.get(c, [])))) for c in order]
    return Review(
        answer_id=found["answer_id"], search_id=found["search_id"], question=found["query"], caller=found["caller"],
        search_groups=list(found["search_groups"]), search_as_of=found["search_as_of"],
        verified_at=found["verified_at"], verdict=found["verdict"], state=found["state"], message=found["message"],
        needs_review=bool(found["needs_review"]),
        draft=found["draft"], claims=found["claims"], passages=passages,
        decisions=store.reviews.decisions(conn, answer_id),
    )


def _passage(chunk: dict[str, Any], rank: int | None, cited_by: list[int]) -> Passage:
    return Passage(chunk_id=chunk["chunk_id"], rank=rank, text=chunk["text"], uri=chunk["uri"], source=chunk["source"],
                   document_id=chunk["document_id"], version_id=chunk["version_id"], version_no=chunk["version_no"],
                   status=chunk["status"], valid_from=chunk["valid_from"], valid_to=chunk["valid_to"],
                   section_path=list(chunk["section_path"] or []), pages=(chunk["page_start"], chunk["page_end"]),
                   cited_by=cited_by)


def quoted_span(text: str, quote: str | None) -> tuple[int, int] | None:
    """Where `quote` is in `text` (ignoring case and how whitespace runs), as (start, end), or None:
    the span the screen marks. The citation check's own normalisation is wider (NFKC, dashes,
    typographic quotes); a quote it found that this does not is shown unmarked."""
    words = (quote or "").split()
    if not words or len(quote or "") > 4000:
        return None
    found = re.search(r"\s+".join(re.escape(w) for w in words), text, re.IGNORECASE)
    return (found.start(), found.end()) if found else None

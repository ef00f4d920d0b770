"""Verifying a generated answer's citations against the logged search it came from, claim by
claim, and appending the verification to the answer record.

Each citation gets the first status that applies, in this order (each a stronger finding than
the next, and each cheaper to establish):

1. `not_retrieved` (no such chunk): the id names nothing in the index, a fabricated citation;
2. `not_visible`: the chunk exists but its version's access groups do not meet the groups the
   search was made with: the generator cited what the user may not see (the answer and the
   caller are told nothing more about that chunk; the record keeps what it was, for compliance);
3. `not_retrieved`: the chunk is not among the results of that search, so the generator was not
   given it (the runners-up the log also keeps were not given to it either);
4. `superseded`: the chunk's version is no longer valid at the time the answer is judged (the
   search's `as_of` when it had one, else now): since when, and which version replaced it;
5. `quote_not_found`: the quoted span is not in the chunk's text (both normalised: Unicode NFKC,
   case, whitespace runs, typographic dashes and quotes; marks around the quote and an ellipsis
   for left-out words read as quotes are written: quotes.py);
6. `unsupported`: an exact field of the claim (number, amount, percentage, date, duration,
   identifier; answers/fields.py) is not in the chunk's text, a figure of the claim stands in
   the chunk for something else (answers/roles.py) or in another column of its table row
   (answers/columns.py), an item of the claim's list is not in the
   passage's list that names its other items (answers/enumerations.py), a code the claim explains
   has another code's meaning in the passage's legend (answers/legends.py), or the support score (claim vs chunk:
   similarity + weight x term coverage - weight x polarity flag; answers/support.py) is under
   the threshold (a claim in another language than its passage: the multilingual model's
   similarity - weight x polarity flag, under the cross-lingual threshold; answers/crosslingual.py);
7. `ok`.

A claim is `supported` when some citation is `ok`, `uncited` without citations, else
`unsupported`. The verdict is `verified` (every claim supported), `rejected` (none) or
`flagged`; a rejected answer is replaced by a refusal message, as a refused search is.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import psycopg

from rag_pipeline import store
from rag_pipeline.answers import columns, crosslingual, enumerations, legends, roles, support
from rag_pipeline.answers import fields as exact
from rag_pipeline.answers.draft import AnswerError, Draft
from rag_pipeline.answers.quotes import quoted
from rag_pipeline.cleaning.safety import as_indexed
from rag_pipeline.embedding import Embedder
from rag_pipeline.retrieval.model_embedder import embedder_for_model

REFUSAL_MESSAGE = ("No answer can be given: none of the answer's statements is supported by the passages it cites. "
                   "The question may not be answered by the documents you can see.")
STATUSES = ("ok", "not_retrieved", "not_visible", "quote_not_found", "superseded", "unsupported")
CLAIM_STATUSES = ("supported", "unsupported", "uncited")
VERDICTS = ("verified", "flagged", "rejected")


@dataclass
class CitationCheck:
    chunk_id: int
    quote: str | None
    status: str
    reason: str
    chunk: dict[str, Any] | None  # the chunk as the index holds it (None: no such chunk)
    visible: bool
    score: dict[str, Any] | None = None  # similarity, term coverage, support score when scored

    @property
    def crosslingual(self) -> bool:
        """Whether the support score judged it across languages (by the multilingual model)."""
        return self.score is not None and "crosslingual" in self.score

    def to_dict(self, *, for_caller: bool = True) -> dict[str, Any]:
        """The citation's check; for the caller, nothing about a chunk it may not see."""
        shown = self.chunk if self.chunk is not None and (self.visible or not for_caller) else None
        record: dict[str, Any] = {
            "chunk_id": self.chunk_id, "status": self.status, "reason": self.reason,
            "uri": shown and shown["uri"], "version": shown and shown["version_no"],
            "section_path": shown and list(shown["section_path"]),
            "pages": shown and [shown["page_start"], shown["page_end"]],
        }
        if shown is not None and not for_caller:
            record["source"] = shown["source"]
        if self.quote is not None:
            record["quote"] = self.quote
        if self.score is not None:
            record["support"] = self.score
        return record


@dataclass
class ClaimCheck:
    text: str
    status: str
    reason: str
    citations: list[CitationCheck]

    def to_dict(self, *, for_caller: bool = True) -> dict[str, Any]:
        return {"text": self.text, "status": self.status, "reason": self.reason,
                "citations": [c.to_dict(for_caller=for_caller) for c in self.citations]}


@dataclass
class Verification:
    answer_id: int | None  # None when not recorded (evaluation)
    log_id: int
    verdict: str
    message: str | None
    claims: list[ClaimCheck]
    judged_as_of: datetime
    threshold: support.Threshold

    @property
    def needs_review(self) -> bool:
        """Whether a person should confirm the verdict though no claim failed: some claim stands
        only on citations judged across languages, where the multilingual similarity tells the
        passage's topic, not whether it says what the claim says (a reversed or changed claim in
        the passage's words scores as high; README, "Checked citations"). Such answers join the
        review queue as flagged ones do."""
        return any(c.status == "supported" and all(x.crosslingual for x in c.citations if x.status == "ok")
                   for c in self.claims)

    def to_dict(self) -> dict[str, Any]:
        """The output of `verify` (DESIGN.md, "Answers"; `needs_review` is this project's)."""
        return {"answer_id": self.answer_id, "log_id": self.log_id, "verdict": self.verdict, "message": self.message,
                "needs_review": self.needs_review,
                "judged_as_of": self.judged_as_of, "claims": [c.to_dict() for c in self.claims],
                "support_threshold": {"threshold": round(self.threshold.value, 4),
                                      "coverage_weight": self.threshold.coverage_weight,
                                      "polarity_weight": self.threshold.polarity_weight,
                                      "crosslingual_threshold": round(self.threshold.crosslingual_value, 4),
                                      "source": self.threshold.source}}


def verify(conn: psycopg.Connection, embedder: Embedder, draft: Draft, *, user: str | None = None,
           record: bool = True, threshold: support.Threshold | None = None) -> Verification:
    """Check every citation of `draft` against its logged search, as made by `user` (the caller
    identity the search was logged with), and append the verification to the answer record
    (`record=False`: judge only, as the evaluation does). `threshold`: the support threshold to
    judge by instead of the index's calibrated one. AnswerError when the search is not the
    caller's or the model differs; nothing is recorded then."""
    entry = store.search_log.logged_search(conn, draft.log_id)
    if entry is None or entry["caller"] != user:
        raise AnswerError(f"no logged search with id {draft.log_id} made by "
                          f"{'caller ' + repr(user[:60]) if user else 'a caller without identity'}: an answer is "
                          "verified against the caller's own search (its log_id, printed by search --json)")
    calibration_id = None
    if threshold is None:
        threshold, calibration_id = support.threshold_for(conn, entry["model_id"])
    result = judge(conn, embedder, draft, entry, threshold)  # AnswerError when the search's model cannot load
    if record:
        result.answer_id = store.answers.record_answer(conn, {
            "search_id": draft.log_id, "judged_as_of": result.judged_as_of, "caller": user, "draft": draft.to_dict(),
            "claims": [c.to_dict(for_caller=False) for c in result.claims], "verdict": result.verdict,
            "message": result.message,
            "model_id": entry["model_id"], "support_threshold": threshold.value,
            "support_coverage_weight": threshold.coverage_weight, "support_source": threshold.source,
            "support_polarity_weight": threshold.polarity_weight,
            "support_crosslingual_threshold": threshold.crosslingual_value,
            "support_calibration_id": calibration_id, "needs_review": result.needs_review,
        })
    return result


def judge(conn: psycopg.Connection, embedder: Embedder, draft: Draft, search: dict[str, Any],
          threshold: support.Threshold, *, preview: bool = False) -> Verification:
    """The verdict on `draft` against one search (`groups`, `as_of`, `results` as the search log
    keeps them), recording nothing: what `verify` records and the evaluation scores. `preview`:
    the results are a staged run's (the gate), whose staged chunks count as valid. `model_id` in
    `search`: the model the search embedded its query with, whose vectors (the chunk's own or a
    model migration's) and encoder the support score uses, whatever model is configured."""
    when = search["as_of"] or store.answers.now(conn)
    model_id = search.get("model_id")
    embedder = _search_embedder(conn, embedder, model_id, search.get("id", draft.log_id))
    cited = store.answers.cited_chunks(conn, [c.chunk_id for claim in draft.claims for c in claim.citations], model_id)
    retrieved = {r.get("chunk_id") for r in search["results"]}
    groups = set(search["groups"])
    checks = [[_check(c.chunk_id, c.quote, cited.get(c.chunk_id), retrieved, groups, when, preview)
               for c in claim.citations] for claim in draft.claims]
    _judge_support(conn, embedder, draft, checks, threshold)
    claims = [_claim(claim.text, found) for claim, found in zip(draft.claims, checks)]
    supported = sum(c.status == "supported" for c in claims)
    verdict = "verified" if supported == len(claims) else "rejected" if supported == 0 else "flagged"
    return Verification(answer_id=None, log_id=draft.log_id, verdict=verdict,
                        message=REFUSAL_MESSAGE if verdict == "rejected" else None,
                        claims=claims, judged_as_of=when, threshold=threshold)


def _check(chunk_id: int, quote: str | None, chunk: dict[str, Any] | None, retrieved: set[int], groups: set[str],
           when: datetime, preview: bool = False) -> CitationCheck:
    """Statuses 1-5 of the module docstring; a citation that passes them is left 'pending' for
    the exact fields and the support score."""
    if chunk is None:
        return CitationCheck(chunk_id, quote, "not_retrieved", f"no chunk {chunk_id} exists in the index", None, False)
    visible = bool(set(chunk["acl_groups"]) & groups)
    if not visible:
        return CitationCheck(chunk_id, quote, "not_visible",
                             f"chunk {chunk_id} is not visible to the search's groups ({', '.join(sorted(groups)) or 'none'})",
                             chunk, False)
    found = CitationCheck(chunk_id, quote, "pending", "", chunk, True)
    if chunk_id not in retrieved:
        found.status, found.reason = "not_retrieved", f"chunk {chunk_id} is not among the results of the search"
    elif not (preview and chunk["status"] == "staged") and not _valid_at(chunk, when):
        found.status, found.reason = "superseded", _superseded_reason(chunk, when)
    elif quote is not None and not quoted(quote, chunk["text"]):
        found.status, found.reason = "quote_not_found", f"the quoted text is not in chunk {chunk_id}"
    return found


def _valid_at(chunk: dict[str, Any], when: datetime) -> bool:
    return (chunk["status"] in ("live", "superseded") and chunk["valid_from"] is not None and chunk["valid_from"] <= when
            and (chunk["valid_to"] is None or when < chunk["valid_to"]))


def _superseded_reason(chunk: dict[str, Any], when: datetime) -> str:
    where = f"{chunk['uri']} version {chunk['version_no']}"
    if chunk["valid_to"] is None or chunk["valid_to"] > when:
        return f"{where} was not yet valid at {when.isoformat(timespec='seconds')}"
    since = chunk["valid_to"].isoformat(timespec="seconds")
    if chunk["replaced_by_version"] is None:
        return f"{where} is no longer live since {since}"
    if chunk["replaced_by_kind"] == "tombstone":
        return f"{where} is no longer live since {since}: the document was removed (version {chunk['replaced_by_version']})"
    return f"{where} is superseded since {since} by version {chunk['replaced_by_version']}"


def _search_embedder(conn: psycopg.Connection, embedder: Embedder, model_id: int | None, log_id: int) -> Embedder:
    """The encoder of the model a search ran on: `embedder` when it is that model, else the model
    as a model migration recorded it (the index may have switched models since, either way);
    AnswerError when neither loads as that identity (nothing is recorded then)."""
    if model_id is None:
        return embedder
    recorded = store.models.model_by_id(conn, model_id)
    found = None if recorded is None else embedder_for_model(conn, recorded, embedder)
    if found is None:
        name = "an unknown model" if recorded is None else f"{recorded['name']} ({recorded['revision']}, {recorded.get('numerics', 'fp32')})"
        raise AnswerError(f"search {log_id} embedded with {name}; {embedder.identity.name} "
                          f"({embedder.identity.numerics}) is configured and no model migration recorded how to load "
                          "that one: configure that model to verify its answers")
    return found


def _judge_support(conn: psycopg.Connection, embedder: Embedder, draft: Draft, checks: list[list[CitationCheck]],
                   threshold: support.Threshold) -> None:
    """Exact fields first, then each figure's role, then the claim's lists against the passage's,
    then the support score, for every citation still pending (one model call for all claims and
    cited sentences that need a score, one SQL statement for all term coverages)."""
    pending: list[tuple[int, CitationCheck]] = []
    facts: dict[int, exact.Facts] = {}
    said = [as_indexed(claim.text) for claim in draft.claims]  # judged as the cited text was cleaned
    for number, found in enumerate(checks):
        claim_fields = None
        for check in found:
            if check.status != "pending":
                continue
            claim_fields = exact.extract(said[number]) if claim_fields is None else claim_fields
            assert check.chunk is not None
            if check.chunk_id not in facts:
                facts[check.chunk_id] = exact.facts(check.chunk["text"], *_heading(check.chunk))
            passage = facts[check.chunk_id]
            absent = exact.missing(said[number], claim_fields, passage)
            if absent:
                check.status = "unsupported"
                check.reason = (f"chunk {check.chunk_id} does not state the claim's "
                                + ", ".join(f.describe() for f in absent[:5]))
            elif claim_fields and (wrong := roles.misplaced(said[number], check.chunk["text"])):
                check.status = "unsupported"
                check.reason = f"in chunk {check.chunk_id}, " + "; ".join(w.describe() for w in wrong[:5])
            elif claim_fields and (misread := columns.misread(said[number], passage)):
                check.status = "unsupported"
                check.reason = f"in chunk {check.chunk_id}, " + "; ".join(m.describe() for m in misread[:5])
            elif foreign := enumerations.foreign_items(said[number], check.chunk["text"]):
                check.status = "unsupported"
                check.reason = f"in chunk {check.chunk_id}, " + "; ".join(f.describe() for f in foreign[:5])
            elif codes := legends.swapped(said[number], check.chunk["text"]):
                check.status = "unsupported"
                check.reason = f"in chunk {check.chunk_id}, " + "; ".join(c.describe() for c in codes[:5])
            else:
                pending.append((number, check))
    if not pending:
        return
    scored = support.evidence(conn, embedder, [(said[n], c.chunk_id, c.chunk) for n, c in pending])
    for (_, check), found in zip(pending, scored):
        value = support.score(found.evidence, threshold, found.crosslingual)
        needed = support.bar(threshold, found.crosslingual)
        check.score = {"similarity": round(found.similarity, 4), "term_coverage": round(found.coverage, 4),
                       "polarity_flag": int(found.flag), "score": round(value, 4)}
        if found.languages is not None:
            check.score["crosslingual"] = {"claim_language": found.languages[0], "passage_language": found.languages[1],
                                           "model": crosslingual.MODEL, "threshold": round(needed, 4)}
            parts = f"{crosslingual.MODEL} similarity {found.similarity:.3f}, claim and passage in different languages"
        else:
            parts = f"similarity {found.similarity:.3f}" + (f" + {threshold.coverage_weight:g} x term coverage {found.coverage:.3f}"
                                                           if threshold.coverage_weight else "")
        if found.flag:
            parts += (f" - {threshold.polarity_weight:g} x polarity flag: the claim and the passage's sentence "
                      f"{found.sentence[:120]!r} differ in negation")
        if value >= needed:
            check.status = "ok"
            check.reason = f"chunk {check.chunk_id} supports the claim: support score {value:.3f} ({parts}) >= {needed:.3f}"
        else:
            check.status = "unsupported"
            check.reason = (f"chunk {check.chunk_id} does not support the claim: support score {value:.3f} ({parts}) "
                            f"< {needed:.3f} ({threshold.source})")


def _heading(chunk: dict[str, Any]) -> tuple[str, str]:
    """What the index says a passage is about: its identity line and section path (as embedded),
    and its document's name in words ("md/openapi_spec_3.0.3.md": "md openapi spec 3.0.3")."""
    path = chunk.get("search_prefix") or " / ".join(chunk.get("section_path") or ())
    name = re.sub(r"[/_\\]+", " ", re.sub(r"\.[A-Za-z0-9]{1,5}$", "", chunk.get("uri") or ""))
    return path, name


def _claim(text: str, checks: list[CitationCheck]) -> ClaimCheck:
    if not checks:
        return ClaimCheck(text, "uncited", "the claim cites no passage", checks)
    ok = [c.chunk_id for c in checks if c.status == "ok"]
    if ok:
        return ClaimCheck(text, "supported", f"supported by chunk {', '.join(map(str, ok))}", checks)
    failed = "; ".join(f"chunk {c.chunk_id} {c.status}" for c in checks)
    return ClaimCheck(text, "unsupported", f"no citation supports it ({failed})", checks)

"""Answer cases of an evaluation set (DESIGN.md, "Evaluation set format"): a question, a draft
answer whose claims cite passages, and the status each citation and claim must get.

```yaml
- id: hotel-cap-wrong-figure
  as_user: {groups: [all-staff]}
  question: How much may I spend on a hotel in Berlin?
  split: calibration                       # optional, as for retrieval cases
  answer:
    - text: Hotels in Berlin are paid up to EUR 195 a night.
      cite: {evidence: "| Berlin | 165 |"}  # or a list; {chunk_id: N} for a fabricated id
      expect: unsupported                  # the claim: supported | unsupported | uncited
```
A citation names its chunk by `evidence`, text the chunk holds (looked up among the search's
results first, then among every live chunk, `source` narrowing it to one document URI), or by
`chunk_id`; it may carry a `quote` and the `expect`ed citation status. The case's search runs
like a retrieval case's (not logged); the draft is judged as `verify` judges it, recording
nothing.

Metrics: citation accuracy (citations given the expected status, of those with one),
unsupported-claim recall and precision (a claim is flagged when it is not `supported`; the
positives are the claims expected `unsupported` or `uncited`), and citation coverage (of the claims
expected `supported`, the share the checker finds supported: correct answers must pass). Each is
1.0 when the set has no case it applies to.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import psycopg

from rag_pipeline import store
from rag_pipeline.answers import support
from rag_pipeline.answers.draft import Citation, Claim, Draft
from rag_pipeline.answers.verify import CLAIM_STATUSES, STATUSES, judge
from rag_pipeline.common.config import shown
from rag_pipeline.common.times import parse_time
from rag_pipeline.embedding import Embedder
from rag_pipeline.errors import UsageError
from rag_pipeline.evaluation.eval_file import read_eval_set
from rag_pipeline.retrieval.refusal import in_calibration_split as hashed_half
from rag_pipeline.retrieval.search import Hit, search

ANSWER_METRICS = ("citation_accuracy", "unsupported_recall", "unsupported_precision", "citation_coverage")
_CITE_KEYS = {"evidence", "chunk_id", "source", "quote", "expect"}
_CLAIM_KEYS = {"text", "cite", "expect"}


@dataclass(frozen=True)
class CiteSpec:
    evidence: str | None = None
    chunk_id: int | None = None
    source: str | None = None
    quote: str | None = None
    expect: str | None = None


@dataclass(frozen=True)
class AnswerClaim:
    text: str
    cites: tuple[CiteSpec, ...]
    expect: str


@dataclass(frozen=True)
class AnswerCase:
    id: str
    question: str
    groups: tuple[str, ...]
    claims: tuple[AnswerClaim, ...]
    as_of: datetime | None = None
    split: str | None = None

    @property
    def in_calibration_split(self) -> bool:
        return self.split == "calibration" if self.split else hashed_half(self.id)


@dataclass
class AnswerCaseResult:
    id: str
    question: str
    verdict: str
    claims: list[dict[str, Any]] = field(default_factory=list)  # text, expected, status, citations

    @property
    def failed(self) -> bool:
        return any(c["status"] != c["expected"] or any(x["expected"] not in (None, x["status"]) for x in c["citations"])
                   for c in self.claims)


def load_answer_cases(path: Path) -> list[AnswerCase]:
    """The answer cases of an evaluation set (items with `answer`); the others are retrieval
    cases (evaluate.load_eval_set)."""
    raw = read_eval_set(path)
    items = raw if isinstance(raw, list) else []
    return [_case(item, f"{path}: case {shown(item.get('id', n))}")
            for n, item in enumerate(items, 1) if isinstance(item, dict) and "answer" in item]


def _case(item: dict[str, Any], where: str) -> AnswerCase:
    groups = (item.get("as_user") or {}).get("groups") if isinstance(item.get("as_user"), dict) else None
    if not isinstance(item.get("id"), str) or not isinstance(item.get("question"), str):
        raise UsageError(f"{where}: 'id' and 'question' must be strings")
    if not isinstance(groups, list) or not all(isinstance(g, str) for g in groups):
        raise UsageError(f"{where}: 'as_user: {{groups: [...]}}' is required")
    if not isinstance(item["answer"], list) or not item["answer"]:
        raise UsageError(f"{where}: 'answer' must be a non-empty list of claims")
    as_of = item.get("as_of")
    if isinstance(as_of, str):
        try:
            as_of = parse_time(as_of)
        except ValueError as exc:
            raise UsageError(f"{where}: 'as_of': {exc}") from exc
    elif as_of is not None and not isinstance(as_of, datetime):
        raise UsageError(f"{where}: 'as_of' must be an ISO 8601 time")
    if item.get("split") not in (None, "calibration", "report"):
        raise UsageError(f"{where}: 'split' must be calibration or report")
    return AnswerCase(id=item["id"], question=item["question"], groups=tuple(groups),
                      claims=tuple(_claim(c, f"{where}, claim {n}") for n, c in enumerate(item["answer"], 1)),
                      as_of=as_of, split=item.get("split"))


def _claim(item: Any, where: str) -> AnswerClaim:
    if not isinstance(item, dict) or not isinstance(item.get("text"), str) or set(item) - _CLAIM_KEYS:
        raise UsageError(f"{where}: a claim is {{text, cite, expect}}")
    cites = item.get("cite") or []
    cites = [cites] if isinstance(cites, dict) else cites
    if not isinstance(cites, list):
        raise UsageError(f"{where}: 'cite' must be a citation or a list of them, not {shown(cites)}")
    if item.get("expect") not in CLAIM_STATUSES:
        raise UsageError(f"{where}: 'expect' must be one of {', '.join(CLAIM_STATUSES)}")
    specs = []
    for cite in cites:
        if not isinstance(cite, dict) or set(cite) - _CITE_KEYS or ("evidence" in cite) == ("chunk_id" in cite):
            raise UsageError(f"{where}: a citation is {{evidence or chunk_id, source?, quote?, expect?}}")
        chunk_id = cite.get("chunk_id")
        if chunk_id is not None and (isinstance(chunk_id, bool) or not isinstance(chunk_id, int) or chunk_id <= 0):
            raise UsageError(f"{where}: a citation's 'chunk_id' must be a positive whole number, not {shown(chunk_id)}")
        for key in ("evidence", "source", "quote"):
            if cite.get(key) is not None and (not isinstance(cite[key], str) or not cite[key].strip()):
                raise UsageError(f"{where}: a citation's {key!r} must be text, not {shown(cite[key])}")
        if cite.get("expect") not in (None, *STATUSES):
            raise UsageError(f"{where}: a citation's 'expect' must be one of {', '.join(STATUSES)}")
        specs.append(CiteSpec(**{k: cite.get(k) for k in _CITE_KEYS}))
    return AnswerClaim(text=item["text"], cites=tuple(specs), expect=item["expect"])


def run_answer_cases(conn: psycopg.Connection, embedder: Embedder, cases: list[AnswerCase], *, k: int,
                     threshold: support.Threshold, as_of: datetime | None = None,
                     preview_run: str | None = None) -> list[AnswerCaseResult]:
    """Each case's search, its draft resolved to chunk ids, and the checker's verdict on it."""
    results = []
    for case in cases:
        when = case.as_of or as_of
        preview = None if when else preview_run
        hits = search(conn, embedder, case.question, list(case.groups), k=k, as_of=when, preview_run=preview, log=False)
        resolved = [[_resolve(conn, spec, hits, when) for spec in claim.cites] for claim in case.claims]
        draft = Draft(log_id=1, claims=tuple(
            Claim(claim.text, tuple(Citation(i, s.quote) for i, s in zip(ids, claim.cites) if i is not None))
            for claim, ids in zip(case.claims, resolved)))
        found = judge(conn, embedder, draft, {"as_of": when, "groups": sorted(case.groups), "model_id": hits.model_id,
                                               "results": [{"chunk_id": h.chunk_id} for h in hits]},
                      threshold, preview=preview is not None)
        claims = []
        for claim, ids, check in zip(case.claims, resolved, found.claims):
            checked = iter(check.citations)
            citations = []
            for spec, chunk_id in zip(claim.cites, ids):
                got = next(checked) if chunk_id is not None else None
                citations.append({"chunk_id": chunk_id, "expected": spec.expect,
                                  "status": got.status if got else "unresolved",
                                  "reason": got.reason if got else f"no chunk holds {spec.evidence!r}",
                                  "support": got.score if got else None})
            claims.append({"text": claim.text, "expected": claim.expect, "status": check.status, "citations": citations})
        results.append(AnswerCaseResult(case.id, case.question, found.verdict, claims))
    return results


def _resolve(conn: psycopg.Connection, spec: CiteSpec, hits: list[Hit], as_of: datetime | None) -> int | None:
    if spec.chunk_id is not None:
        return spec.chunk_id
    assert spec.evidence is not None
    wanted = " ".join(spec.evidence.split()).casefold()  # as evaluate.evidence_in compares
    for hit in hits:
        if wanted in " ".join(hit.text.split()).casefold() and (spec.source is None or spec.source in (hit.uri, f"{hit.source}/{hit.uri}")):
            return hit.chunk_id
    return store.answers.chunk_holding(conn, spec.evidence, spec.source, as_of)


def answer_metrics(results: list[AnswerCaseResult]) -> dict[str, float]:
    claims = [c for r in results for c in r.claims]
    citations = [x for c in claims for x in c["citations"] if x["expected"] is not None]
    positive = [c for c in claims if c["expected"] != "supported"]
    flagged = [c for c in claims if c["status"] != "supported"]
    should_stand = [c for c in claims if c["expected"] == "supported"]

    def share(hits: int, total: int) -> float:
        return round(hits / total, 4) if total else 1.0

    return {
        "citation_accuracy": share(sum(x["status"] == x["expected"] for x in citations), len(citations)),
        "unsupported_recall": share(sum(c["status"] != "supported" for c in positive), len(positive)),
        "unsupported_precision": share(sum(c["expected"] != "supported" for c in flagged), len(flagged)),
        "citation_coverage": share(sum(c["status"] == "supported" for c in should_stand), len(should_stand)),
        "answer_cases": float(len(results)),
    }


def support_evidence(results: list[AnswerCaseResult], crosslingual: bool = False,
                     ) -> tuple[list[support.Evidence], list[support.Evidence]]:
    """(similarity, term coverage, polarity flag) of the citations that reached the support score, split by
    their expected status: those expected `ok` and those expected `unsupported` (what the
    support threshold is calibrated from); `crosslingual`: those of claims in another language
    than their passage (their own threshold), else the others."""
    ok, unsupported = [], []
    for result in results:
        for claim in result.claims:
            for x in claim["citations"]:
                if x["support"] is None or x["expected"] not in ("ok", "unsupported"):
                    continue
                if ("crosslingual" in x["support"]) != crosslingual:
                    continue
                found = (x["support"]["similarity"], x["support"]["term_coverage"], x["support"]["polarity_flag"])
                (ok if x["expected"] == "ok" else unsupported).append(found)
    return ok, unsupported

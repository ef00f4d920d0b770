"""The evaluation set (format in DESIGN.md) and its metrics, run against any view of the index:
live, as of a time, or as it will look once a staged run publishes (the gate).

ACL leaks and superseded-version hits are checked from the returned rows with logic of their
own, not by trusting the retrieval query's filters: the gate is the second line of defence.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import psycopg

from rag_pipeline import store
from rag_pipeline.answers import support
from rag_pipeline.chunking.chunks import ELEMENT_SEPARATOR
from rag_pipeline.common.config import shown
from rag_pipeline.common.times import parse_time
from rag_pipeline.embedding import Embedder
from rag_pipeline.evaluation.answer_cases import AnswerCase, AnswerCaseResult, answer_metrics, run_answer_cases
from rag_pipeline.evaluation.eval_file import EvalSetError, read_eval_set
from rag_pipeline.retrieval import refusal
from rag_pipeline.retrieval.search import Hit, search

# A case's half of the set: refusal is calibrated on one and figures are reported on the other.
SPLITS = ("calibration", "report")
MAX_METRICS = ("acl_leaks", "superseded_hits")  # thresholds for these are upper bounds
METRICS = ("source_recall", "evidence_recall", "ndcg", "mrr", "refusal_accuracy", "refusal_accuracy_must_refuse",
           "refusal_accuracy_must_answer", "acl_leaks", "superseded_hits",
           # of the answer cases (evaluation/answer_cases.py)
           "citation_accuracy", "unsupported_recall", "unsupported_precision", "citation_coverage")


@dataclass(frozen=True)
class EvalCase:
    id: str
    question: str
    groups: tuple[str, ...]
    expect_refused: bool = False
    expect_source: str | None = None  # document URI
    expect_section: str | None = None  # heading that must be on the hit's section path
    expect_evidence: tuple[str, ...] = ()
    as_of: datetime | None = None
    split: str | None = None  # "calibration" or "report" (SPLITS); None: the case id's hash decides
    classes: tuple[str, ...] = ()  # labels for per-class reports (e.g. section, non-english); never scored


@dataclass
class CaseResult:
    id: str
    question: str
    groups: list[str]
    expected: str
    refused: bool
    correct_refusal: bool
    source_hit: bool | None
    evidence_hit: bool | None
    first_relevant_rank: int | None
    acl_leaks: int
    superseded_hits: int
    results: list[dict[str, Any]] = field(default_factory=list)
    expected_passage: str = ""  # what the case expects to find, for a person reading a miss

    @property
    def failed(self) -> bool:
        """The case's one verdict, shown by the CLI and the gate alike."""
        return (not self.correct_refusal or bool(self.acl_leaks) or bool(self.superseded_hits)
                or self.evidence_hit is False or self.source_hit is False)


@dataclass
class EvalReport:
    metrics: dict[str, float]
    cases: list[CaseResult]
    passed: bool
    failures: list[str]
    k: int
    answer_cases: list[AnswerCaseResult] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {"metrics": self.metrics, "passed": self.passed, "failures": self.failures, "k": self.k,
                "cases": [asdict(c) for c in self.cases],
                "answer_cases": [{**asdict(c), "failed": c.failed} for c in self.answer_cases]}


def load_eval_set(path: Path) -> list[EvalCase]:
    raw = read_eval_set(path)
    if not isinstance(raw, list) or not raw:
        raise EvalSetError(f"{path}: must be a non-empty list of cases")
    # answer cases (with `answer`) are read by evaluation/answer_cases.py
    cases = [_case(item, path, i) for i, item in enumerate(raw) if not (isinstance(item, dict) and "answer" in item)]
    duplicates = sorted(i for i, n in Counter(c.id for c in cases).items() if n > 1)
    if duplicates:
        raise EvalSetError(f"{path}: duplicate case ids {duplicates}")
    return cases


def _case(item: Any, path: Path, index: int) -> EvalCase:
    where = f"{path}: case {index + 1}"
    if not isinstance(item, dict):
        raise EvalSetError(f"{where}: must be a mapping")
    where = f"{path}: case {shown(item.get('id', index + 1))}"
    for key in ("id", "question"):
        if not isinstance(item.get(key), str) or not item[key].strip():
            raise EvalSetError(f"{where}: '{key}' must be a non-empty string")
    groups = (item.get("as_user") or {}).get("groups") if isinstance(item.get("as_user"), dict) else None
    if not isinstance(groups, list) or not all(isinstance(g, str) for g in groups):
        raise EvalSetError(f"{where}: 'as_user: {{groups: [...]}}' is required")
    refused = item.get("expect") == "refused"
    if item.get("expect") not in (None, "refused"):
        raise EvalSetError(f"{where}: 'expect' may only be 'refused'")
    source = item.get("expect_source")
    if source is not None and not isinstance(source, str):
        raise EvalSetError(f"{where}: 'expect_source' must be a source/path, not {shown(source)}")
    evidence = item.get("expect_evidence") or []
    if isinstance(evidence, str):
        evidence = [evidence]
    if not isinstance(evidence, list) or not all(isinstance(e, str) and e.strip() for e in evidence):
        raise EvalSetError(f"{where}: 'expect_evidence' must be a phrase or a list of phrases, not {shown(evidence)}")
    if not refused and not source and not evidence:
        raise EvalSetError(f"{where}: give expect_source and/or expect_evidence, or expect: refused")
    uri, _, section = (source or "").partition("#")
    split = item.get("split")
    if split is not None and split not in SPLITS:
        raise EvalSetError(f"{where}: 'split' must be one of {', '.join(SPLITS)} (or absent), got {shown(split)}")
    classes = item.get("classes") or []
    if isinstance(classes, str):
        classes = [classes]
    if not isinstance(classes, list) or not all(isinstance(c, str) and c.strip() for c in classes):
        raise EvalSetError(f"{where}: 'classes' must be a list of non-empty strings")
    as_of = item.get("as_of")
    if isinstance(as_of, str):
        try:
            as_of = parse_time(as_of)
        except ValueError as exc:
            raise EvalSetError(f"{where}: as_of {exc}") from exc
    elif isinstance(as_of, datetime) and as_of.tzinfo is None:
        as_of = as_of.astimezone()
    elif as_of is not None and not isinstance(as_of, datetime):
        raise EvalSetError(f"{where}: 'as_of' must be an ISO 8601 time, not {shown(as_of)}")
    return EvalCase(
        id=str(item["id"]), question=item["question"], groups=tuple(groups), expect_refused=refused,
        expect_source=uri or None, expect_section=section or None,
        expect_evidence=tuple(evidence), as_of=as_of, split=split,
        classes=tuple(classes),
    )


def in_calibration_split(case: EvalCase) -> bool:
    """The case's own `split` key, else half of the cases fixed by a hash of their id."""
    return case.split == "calibration" if case.split else refusal.in_calibration_split(case.id)


def evidence_in(evidence: tuple[str, ...] | list[str], text: str) -> bool:
    """All of a case's evidence phrases occur in one text, ignoring case and whitespace runs
    (PDF line breaks): what "the chunk that holds the answer" means everywhere."""
    norm = _norm(text)
    return all(_norm(e) in norm for e in evidence)


def _norm(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip().casefold()


def _uri_matches(hit: Hit, uri: str) -> bool:
    """The set's path names the hit's document, with or without its source, in any Unicode
    normalisation form (a Mac-made file name is stored decomposed: store.history.find_documents)."""
    wanted = unicodedata.normalize("NFC", uri)
    return wanted in (unicodedata.normalize("NFC", hit.uri), unicodedata.normalize("NFC", f"{hit.source}/{hit.uri}"))


def holds_section(hit: Hit, heading: str) -> bool:
    """The hit is (in) the section under `heading`: the heading is on its section path, or it is
    one of the headings a chunk of merged short sections keeps inside its text (chunking/merge.py:
    the path is then the sections' common parent, and each merged section starts with its own
    heading as an element of its own)."""
    wanted = _norm(heading)
    return (wanted in {_norm(s) for s in hit.section_path}
            or wanted in {_norm(part) for part in hit.text.split(ELEMENT_SEPARATOR)})


def is_relevant(hit: Hit, case: EvalCase) -> bool:
    if case.expect_source and not _uri_matches(hit, case.expect_source):
        return False
    if case.expect_section and not holds_section(hit, case.expect_section):
        return False
    # with evidence, only the chunk holding it is relevant (nDCG and MRR rank the answering
    # passage, not any chunk of the right file)
    return not case.expect_evidence or evidence_in(case.expect_evidence, hit.text)


def evaluate(
    conn: psycopg.Connection,
    embedder: Embedder,
    cases: list[EvalCase],
    *,
    k: int,
    thresholds: dict[str, float],
    refusal_threshold: refusal.Threshold,
    as_of: datetime | None = None,
    preview_run: str | None = None,
    progress: Callable[[int, int], None] = lambda done, total: None,
    answer_cases: Sequence[AnswerCase] = (),
    support_threshold: support.Threshold | None = None,
    model_id: int | None = None,
) -> EvalReport:
    """Every retrieval case and answer case of the set; the metrics of both against the
    thresholds. The answer cases are judged by `support_threshold`, else the index's calibrated
    one (answers/support.py). `model_id`: search that model's vectors instead of the index's (a
    model migration's gate judges its new model on the live index this way; a case with its own as-of
    time keeps the model in force then)."""
    results = []
    for number, case in enumerate(cases, 1):
        when = case.as_of or as_of
        hits = search(conn, embedder, case.question, list(case.groups), k=k, as_of=when,
                      preview_run=None if when else preview_run, log=False, model_id=None if when else model_id)
        superseded = store.versions.superseded_chunk_ids(conn, [h.chunk_id for h in hits], when, None if when else preview_run)
        results.append(score_case(case, hits, refusal_threshold, superseded))
        progress(number, len(cases))
    answered: list[AnswerCaseResult] = []
    if answer_cases:
        if support_threshold is None:
            model_id = store.search.index_model_id(conn, store.search.View(as_of=as_of, preview_run=preview_run))
            support_threshold = support.threshold_for(conn, model_id)[0]
        answered = run_answer_cases(conn, embedder, list(answer_cases), k=k, threshold=support_threshold,
                                    as_of=as_of, preview_run=preview_run)
    metrics = {**_aggregate(results), **answer_metrics(answered)}
    failures = _check(metrics, thresholds)
    return EvalReport(metrics=metrics, cases=results, passed=not failures, failures=failures, k=k, answer_cases=answered)


def score_case(case: EvalCase, hits: list[Hit], refusal_threshold: refusal.Threshold, superseded: set[int]) -> CaseResult:
    """One case's verdict over the hits in rank order (a prefix of them scores the metrics @k);
    refused as `search` refuses (refusal.decide)."""
    refused = refusal.decide(hits, refusal_threshold).refused
    leaks = sum(1 for h in hits if not set(h.acl_groups) & set(case.groups))
    rank = next((i + 1 for i, h in enumerate(hits) if is_relevant(h, case)), None)
    answerable = not case.expect_refused
    source_hit = any(_uri_matches(h, case.expect_source) for h in hits) if answerable and case.expect_source else None
    evidence_hit = None
    if answerable and case.expect_evidence:
        evidence_hit = any(
            evidence_in(case.expect_evidence, h.text) and
            (not case.expect_source or _uri_matches(h, case.expect_source))
            for h in hits
        )
    return CaseResult(
        id=case.id, question=case.question, groups=list(case.groups),
        expected="refused" if case.expect_refused else "answer",
        refused=refused, correct_refusal=refused == case.expect_refused,
        source_hit=source_hit, evidence_hit=evidence_hit,
        first_relevant_rank=rank if answerable else None,
        acl_leaks=leaks, superseded_hits=sum(1 for h in hits if h.chunk_id in superseded),
        results=[h.to_dict(with_text=False) for h in hits],
        expected_passage=expected_passage(case),
    )


def expected_passage(case: EvalCase) -> str:
    """The case's expectation in one line: document › section › "evidence"."""
    parts = [case.expect_source or "", case.expect_section or "",
             " / ".join(f"\u201c{e}\u201d" for e in case.expect_evidence)]
    return " \u203a ".join(p for p in parts if p) or ("(a refusal)" if case.expect_refused else "(any answer)")


def _aggregate(results: list[CaseResult]) -> dict[str, float]:
    answerable = [r for r in results if r.expected == "answer"]

    def mean(values: list[float]) -> float:
        return round(sum(values) / len(values), 4) if values else 1.0

    with_source = [r for r in answerable if r.source_hit is not None]
    with_evidence = [r for r in answerable if r.evidence_hit is not None]
    return {
        "source_recall": mean([float(bool(r.source_hit)) for r in with_source]),
        "evidence_recall": mean([float(bool(r.evidence_hit)) for r in with_evidence]),
        "ndcg": mean([1 / math.log2(r.first_relevant_rank + 1) if r.first_relevant_rank else 0.0 for r in answerable]),
        "mrr": mean([1 / r.first_relevant_rank if r.first_relevant_rank else 0.0 for r in answerable]),
        "refusal_accuracy": mean([float(r.correct_refusal) for r in results]),
        # both ways: refusing everything must not look good, nor must answering everything
        "refusal_accuracy_must_refuse": mean([float(r.refused) for r in results if r.expected == "refused"]),
        "refusal_accuracy_must_answer": mean([float(not r.refused) for r in answerable]),
        "acl_leaks": float(sum(r.acl_leaks for r in results)),
        "superseded_hits": float(sum(r.superseded_hits for r in results)),
        "cases": float(len(results)),
    }


def _check(metrics: dict[str, float], thresholds: dict[str, float]) -> list[str]:
    failures = []
    for name, bound in sorted(thresholds.items()):
        if name not in metrics:
            failures.append(f"unknown metric {name!r} in thresholds (known: {', '.join(METRICS)})")
        elif name in MAX_METRICS and metrics[name] > bound:
            failures.append(f"{name} = {metrics[name]:g} exceeds {bound:g}")
        elif name not in MAX_METRICS and metrics[name] < bound:
            failures.append(f"{name} = {metrics[name]:.3f} is under {bound:g}")
    return failures

"""The adversarial answer cases on the shared corpus (evalsets/answers): the file is valid (schema,
unique ids, both splits with both kinds of claim, every cited document in the corpus), and on a
real sync of a few of its documents (PostgreSQL, the packaged model) every evidence phrase of
those documents names a chunk and a handful of cases come out as labelled, end to end through
the evaluator, at the support threshold the set's calibration split gives on the whole corpus
(bench/README.md, "bench_verify.py")."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

from rag_pipeline import store
from rag_pipeline.answers.support import Threshold
from rag_pipeline.errors import UsageError
from rag_pipeline.evaluation.answer_cases import answer_metrics, load_answer_cases, run_answer_cases
from rag_pipeline.store import database
from rag_pipeline_tests.conftest import CORPUS, PROJECT_ROOT
from rag_pipeline_tests.helpers import sync

ANSWERS = PROJECT_ROOT / "evalsets" / "answers" / "corpus_answers.yaml"
# small documents in three formats; their URIs are the set's own
SUBSET = ("pdf/ntsb_report_20080102X00002.pdf", "html/readability_wikipedia_mozilla_en.source.html",
          "docx/docling_word_sample.docx", "pptx/nasa_gsfc_science_exploration_1slide.pptx")
# one of each kind: correct, a figure written differently, an adjacent figure, another table row,
# a fabricated id, a retrieved passage on another subject (decided by the support score), mixed
CASES = ("ntsb-aircraft-ok", "ntsb-aircraft-date-written-differently", "ntsb-aircraft-wrong-registration",
         "mozilla-revenue-currency-code", "mozilla-revenue-changed-figure", "mozilla-google-share-mixed",
         "mozilla-cisco-wrong-section", "docx-duck-berries-ok", "docx-duck-berries-other-row",
         "nasa-code-670-ok", "nasa-sedvme-fabricated-id")
# support score weights and threshold calibrated on the set's calibration split over the whole corpus
CALIBRATED = Threshold(1.643, "evalsets/answers calibration split", coverage_weight=1.8, polarity_weight=1.0)
HELD_OUT = PROJECT_ROOT / "evalsets" / "answers" / "heldout_answers.yaml"
MAN_PAGES = PROJECT_ROOT / "evalsets" / "answers" / "heldout_manpages_answers.yaml"
HELD_OUT_2 = PROJECT_ROOT / "evalsets" / "answers" / "heldout2_answers.yaml"
HELD_OUT_3 = PROJECT_ROOT / "evalsets" / "answers" / "heldout3_answers.yaml"


def test_the_answer_case_file_is_valid_with_unique_ids_both_splits_and_known_documents() -> None:
    cases = load_answer_cases(ANSWERS)
    raw = yaml.safe_load(ANSWERS.read_text(encoding="utf-8"))
    assert len(cases) == len(raw) >= 120  # every item is an answer case
    assert len({c.id for c in cases}) == len(cases)
    assert all(c.split in ("calibration", "report") and c.groups == ("all-staff",) for c in cases)
    for split in ("calibration", "report"):
        claims = [claim for c in cases if c.split == split for claim in c.claims]
        assert sum(c.expect == "supported" for c in claims) >= 40 and sum(c.expect != "supported" for c in claims) >= 40
    for case in cases:
        for claim in case.claims:
            assert (claim.expect == "uncited") == (not claim.cites), case.id
            for cite in claim.cites:
                assert cite.chunk_id is not None or (CORPUS / "docs" / str(cite.source)).is_file(), (case.id, cite)


def test_the_held_out_cases_are_valid_report_only_and_cite_documents_the_first_set_never_cites() -> None:
    held_out, first = load_answer_cases(HELD_OUT), load_answer_cases(ANSWERS)
    assert len(held_out) >= 40 and len({c.id for c in held_out}) == len(held_out)
    assert not {c.id for c in held_out} & {c.id for c in first}
    assert all(c.split == "report" and not c.in_calibration_split for c in held_out)  # never calibrated on
    sources = {cite.source for c in held_out for claim in c.claims for cite in claim.cites}
    assert all((CORPUS / "docs" / str(s)).is_file() for s in sources)
    assert not sources & {cite.source for c in first for claim in c.claims for cite in claim.cites}


def test_the_man_page_cases_are_report_only_and_cite_the_generalisation_sets_documents() -> None:
    cases = load_answer_cases(MAN_PAGES)
    others = {c.id for path in (ANSWERS, HELD_OUT) for c in load_answer_cases(path)}
    assert len(cases) >= 20 and len({c.id for c in cases}) == len(cases) and not {c.id for c in cases} & others
    assert all(c.split == "report" and not c.in_calibration_split for c in cases)
    docs = PROJECT_ROOT / "evalsets" / "generalisation" / "docs"
    cites = [cite for c in cases for claim in c.claims for cite in claim.cites]
    assert all((docs / str(cite.source)).is_file() and cite.evidence for cite in cites)
    for cite in cites:  # each evidence phrase is verbatim text of its man page (whitespace aside)
        text = " ".join((docs / str(cite.source)).read_text(encoding="utf-8").split()).casefold()
        assert " ".join(str(cite.evidence).split()).casefold() in text, cite
    expected = [claim.expect for c in cases for claim in c.claims]
    assert expected.count("supported") == expected.count("unsupported") == len(expected) // 2


LATER_HELD_OUT = sorted((PROJECT_ROOT / "evalsets" / "answers").glob("heldout[0-9]_answers.yaml"))


def test_the_later_held_out_sets_are_found() -> None:
    assert HELD_OUT_2 in LATER_HELD_OUT and HELD_OUT_3 in LATER_HELD_OUT


@pytest.mark.parametrize("path", LATER_HELD_OUT, ids=lambda p: p.name)
def test_the_later_held_out_cases_are_report_only_and_cite_passages_no_other_set_cites(path: Path) -> None:
    cases = load_answer_cases(path)
    others = [c for other in (ANSWERS, HELD_OUT, MAN_PAGES, *LATER_HELD_OUT) if other != path
              for c in load_answer_cases(other)]
    assert len(cases) >= 40 and len({c.id for c in cases}) == len(cases) and not {c.id for c in cases} & {c.id for c in others}
    assert all(c.split == "report" and not c.in_calibration_split for c in cases)  # never calibrated on
    cites = [cite for c in cases for claim in c.claims for cite in claim.cites]
    assert all((CORPUS / "docs" / str(cite.source)).is_file() and cite.evidence for cite in cites)
    # no passage is named by a phrase another set names it by
    assert not {cite.evidence for cite in cites} & {cite.evidence for c in others for claim in c.claims for cite in claim.cites}
    for case in cases:
        for claim in case.claims:  # a claim's label and its citations' agree; an uncited claim cites nothing
            if claim.expect == "uncited":
                assert not claim.cites
                continue
            assert claim.cites and {cite.expect for cite in claim.cites} == {"ok" if claim.expect == "supported" else "unsupported"}
    expected = [claim.expect for c in cases for claim in c.claims]
    assert expected.count("supported") >= 20 and expected.count("unsupported") >= 20


def test_evidence_resolves_and_cases_come_out_as_labelled_on_a_real_sync(
        tmp_path: Path, corpus_dir: Path, db_url: str, embedder, capsys) -> None:
    docs = tmp_path / "docs"
    for uri in SUBSET:
        (docs / uri).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(corpus_dir / "docs" / uri, docs / uri)
    config = tmp_path / "rag_pipeline.yaml"
    config.write_text(yaml.safe_dump({"database_url": db_url, "state_dir": str(tmp_path / "state"), "sources": [
        {"name": "corpus", "kind": "filesystem", "path": str(docs), "default_groups": ["all-staff"]}]}), encoding="utf-8")
    code, out = sync(capsys, config)
    assert code == 0 and out["status"] == "published", out
    cases = {c.id: c for c in load_answer_cases(ANSWERS)}
    with database.connect(db_url) as conn:
        cited = [(case.id, cite) for case in cases.values() for claim in case.claims for cite in claim.cites
                 if cite.source in SUBSET]
        assert len(cited) >= 20
        for case_id, cite in cited:
            assert store.answers.chunk_holding(conn, str(cite.evidence), cite.source) is not None, (case_id, cite.evidence)
        results = run_answer_cases(conn, embedder, [cases[i] for i in CASES], k=10, threshold=CALIBRATED)
    found = {r.id: r for r in results}
    for case_id in CASES:
        assert not found[case_id].failed, (case_id, found[case_id].claims)
    assert found["mozilla-google-share-mixed"].verdict == "flagged"
    assert found["ntsb-aircraft-ok"].verdict == "verified" and found["nasa-sedvme-fabricated-id"].verdict == "rejected"
    assert answer_metrics(results) == {"citation_accuracy": 1.0, "unsupported_recall": 1.0,
                                       "unsupported_precision": 1.0, "citation_coverage": 1.0, "answer_cases": 11.0}


BROKEN = {
    "not YAML": "- id: [unclosed\n",
    "claim with an unknown key": "- {id: a, question: q, as_user: {groups: [x]}, answer: [{text: t, expect: supported, why: x}]}\n",
    "unknown claim status": "- {id: a, question: q, as_user: {groups: [x]}, answer: [{text: t, expect: maybe}]}\n",
    "chunk id as text": "- {id: a, question: q, as_user: {groups: [x]}, answer: [{text: t, expect: supported, cite: {chunk_id: '51'}}]}\n",
    "chunk id negative": "- {id: a, question: q, as_user: {groups: [x]}, answer: [{text: t, expect: supported, cite: {chunk_id: -3}}]}\n",
    "as_of a number": "- {id: a, question: q, as_user: {groups: [x]}, as_of: 2026, answer: [{text: t, expect: uncited}]}\n",
    "as_of not a time": "- {id: a, question: q, as_user: {groups: [x]}, as_of: yesterday, answer: [{text: t, expect: uncited}]}\n",
    "empty answer": "- {id: a, question: q, as_user: {groups: [x]}, answer: []}\n",
    "no groups": "- {id: a, question: q, answer: [{text: t, expect: uncited}]}\n",
    "both evidence and chunk id": "- {id: a, question: q, as_user: {groups: [x]}, answer: [{text: t, expect: supported, cite: {chunk_id: 5, evidence: e}}]}\n",
    "cite a number": "- {id: a, question: q, as_user: {groups: [x]}, answer: [{text: t, expect: supported, cite: 5}]}\n",
    "evidence a list": "- {id: a, question: q, as_user: {groups: [x]}, answer: [{text: t, expect: supported, cite: {evidence: [e]}}]}\n",
    "source a mapping": ("- {id: a, question: q, as_user: {groups: [x]}, answer: [{text: t, expect: supported, "
                         "cite: {evidence: e, source: {a: b}}}]}\n"),
    "an id of 5,000 digits": "- {id: " + "9" * 5_000 + ", question: q, as_user: {groups: [x]}, answer: [{text: t, expect: uncited}]}\n",
}


def test_broken_answer_cases_are_refused_naming_the_file_and_case(tmp_path: Path) -> None:
    """Each broken case is a usage error (exit 2 in the CLI) that names the file; a valid case
    beside it loads."""
    for name, text in BROKEN.items():
        path = tmp_path / "set.yaml"
        path.write_text(text, encoding="utf-8")
        with pytest.raises(UsageError, match="set.yaml") as raised:
            load_answer_cases(path)
        assert "\n" not in str(raised.value).strip() or name == "not YAML", (name, raised.value)
    path = tmp_path / "ok.yaml"
    path.write_text("- {id: a, question: q, as_user: {groups: [x]}, as_of: '2026-01-01T00:00:00Z',"
                    " answer: [{text: t, expect: supported, cite: {chunk_id: 51, quote: q}}]}\n", encoding="utf-8")
    [case] = load_answer_cases(path)
    assert case.as_of.year == 2026 and case.claims[0].cites[0].chunk_id == 51

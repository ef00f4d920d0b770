"""What a passage's place states (answers/fields.py, verify._heading), ages and rupees: found on
the fifth held-out answer set, where correct claims were refused for a figure only the section
path said ("On page 2 of the BMFOL Form 944 display", under "Return Form 944 Display (page 2)"),
a version only the document's name said ("OpenAPI 3.0.3" in openapi_spec_3.0.3.md), an age read as
a duration ("15-year-olds" on "aged 15"). Each restatement stands; each near miss (another form,
another age, a section's own number, the year in a filing's name, another amount) stays missing.
Real model and database: the last test verifies such a claim through `verify` on a synced index."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import ANOTHER_DOCUMENT, sync_folder, verify_claims

from rag_pipeline.answers.fields import extract, facts, missing

FORM_PATH = "2.3.59-65 Command Code BMFOL Return Form 944 Display (page 2)"
WAIVER = "13 20-21 Waiver Indicator\n\n00 = Not significant\n\n24 = FTD penalty waived due to deposit frequency change"


def _missing(claim: str, passage: str, heading: str = "", document: str = "") -> list[str]:
    return [f.describe() for f in missing(claim, extract(claim), facts(passage, heading, document))]


@pytest.mark.parametrize(("claim", "passage", "heading", "document"), [
    ("On page 2 of the Form 944 display, a Waiver Indicator of 24 means the penalty was waived.", WAIVER, FORM_PATH, ""),
    ("In the Info Object of OpenAPI 3.0.3, title and version are required.", "| title | string | REQUIRED |",
     "OpenAPI Specification > Info Object", "md openapi spec 3.0.3"),
    ("Among 15-year-olds, Finland had 5.7 percent low achievers.", "low-achievers in reading literacy aged 15 (5.7 %)", "", ""),
    ("A 3-year-old child travels free.", "Children aged 3 travel free.", "", ""),
    ("Revenue was ₹1,186 crore.", "Net profit of ₹1,186 crore in the year.", "", ""),
    ("Revenue was INR 1,186 crore.", "Net profit of ₹1,186 crore in the year.", "", ""),
    ("Revenue was 11,860 million rupees.", "Net profit of ₹1,186 crore in the year.", "", ""),
])
def test_a_figure_said_by_the_passages_place_or_written_otherwise_is_stated(claim: str, passage: str, heading: str,
                                                                           document: str) -> None:
    assert _missing(claim, passage, heading, document) == []


@pytest.mark.parametrize(("claim", "passage", "heading", "document", "absent"), [
    ("On page 3 of the Form 945 display, a Waiver Indicator of 24 means the penalty was waived.", WAIVER, FORM_PATH, "",
     ["number '3'", "number '945'"]),
    # a section's own number is where it stands, not a figure it states
    ("At Tier 2, practices are approved by management.", "Risk management practices are approved by management.",
     "Framework for Critical Infrastructure Cybersecurity, Version 1.1\n2.0 Framework Basics > 2.2 Framework Implementation Tiers",
     "", ["number '2'"]),
    # the document's name says what it is, not each passage's figures
    ("Revenue was 5 million in 2021.", "Revenue was 5 million in 2020.", "Results of operations", "html sec 10k galaxy gaming 2021",
     ["number '2021'"]),
    ("Among 16-year-olds, Finland had 5.7 percent low achievers.", "low-achievers in reading literacy aged 15 (5.7 %)", "", "",
     ["number '16'"]),
    ("Records are kept for 10 years.", "the archive holds records 10 years old", "", "", ["duration '10 years'"]),
    ("Revenue was ₹1,168 crore.", "Net profit of ₹1,186 crore in the year.", "", "", ["amount '₹11680000000'"]),
    ("Revenue was $1,186 crore.", "Net profit of ₹1,186 crore in the year.", "", "", ["amount '$11860000000'"]),
])
def test_a_near_miss_stays_missing(claim: str, passage: str, heading: str, document: str, absent: list[str]) -> None:
    assert _missing(claim, passage, heading, document) == absent


def test_verify_reads_the_section_path_and_the_document_name(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                                            db_url: str) -> None:
    """Through the CLI on a real index: a claim naming the form and page only the section path
    gives is supported; the same claim with another form number is unsupported, saying why."""
    config = sync_folder(capsys, tmp_path, db_url, {
        "irm_2.3.59.md": "# 2.3.59 Command Code BMFOL\n\n## 2.3.59-65 Return Form 944 Display (page 2)\n\n"
                         "13 20-21 Waiver Indicator. 00 means not significant; 24 means the FTD penalty was waived"
                         " due to a change in the deposit frequency requirement.\n"}
        | ANOTHER_DOCUMENT)
    results = verify_claims(capsys, config, db_url, "What does a waiver indicator of 24 mean?", "irm_2.3.59.md", {
        form: f"On page 2 of the Form {form} display, a waiver indicator of 24 means the FTD penalty was waived."
        for form in ("944", "945")})
    assert results["944"]["status"] == "supported", results["944"]
    assert results["945"]["status"] == "unsupported" and "945" in results["945"]["citations"][0]["reason"]

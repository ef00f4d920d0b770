"""Chunks that know their document: every chunk's embedded and full-text input starts with its
document's identity line (title; for filings the form, registrant, period and file number), so
a passage from one of a series of near-identical reports is found under the right company and
period. The line is cleaned and redacted like body text and never crowds out the body."""

from __future__ import annotations

from pathlib import Path

from rag_pipeline.chunking.chunks import MAX_IDENTITY_TOKENS, chunk_elements, cleaned_text
from rag_pipeline.chunking.document_identity import document_identity, filing_facts
from rag_pipeline.cleaning.clean import clean_elements
from rag_pipeline.parsing import parse_document
from rag_pipeline.parsing.config import ParseLimits
from rag_pipeline.parsing.types import Element, ParsedDocument
from rag_pipeline.sync.parse import redacted

TEN_K = "html/sec_10k_galaxy_gaming_2021.html"
GITHUB = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
BODY = [Element("paragraph", "Revenue increased by four percent compared with the prior period.")]


def _identity_of(corpus_dir: Path, relative: str) -> tuple[str, list[Element]]:
    parsed = parse_document((corpus_dir / "docs" / relative).read_bytes(), Path(relative).name, ParseLimits(ocr=False))
    elements, _ = clean_elements(parsed.elements)
    return document_identity(parsed.title, elements, relative), elements


def test_sec_10k_chunks_name_the_registrant_form_period_and_file_number(corpus_dir: Path, embedder) -> None:
    identity, elements = _identity_of(corpus_dir, TEN_K)
    assert identity == ("Form 10-K | Galaxy Gaming, Inc. | fiscal year ended December 31, 2021"
                        " | Commission file number 000-30653")
    chunks = chunk_elements(elements, embedder.count_tokens, embedder.max_tokens, identity=identity)
    text, _ = cleaned_text(elements)
    for chunk in chunks:
        assert chunk.search_text.startswith(identity + "\n")
        assert chunk.search_text == chunk.search_prefix + chunk.text
        assert chunk.token_count == embedder.count_tokens([chunk.search_text])[0] <= embedder.max_tokens
        assert text[chunk.char_start : chunk.char_end] == chunk.text


def test_quarterly_report_identity_holds_its_period() -> None:
    cover = [
        Element("paragraph", "FORM 10-Q"),
        Element("paragraph", "☒ QUARTERLY REPORT PURSUANT TO SECTION 13 OR 15(d) OF THE SECURITIES EXCHANGE ACT OF 1934"),
        Element("paragraph", "For the quarterly period ended June 29, 2024"),
        Element("paragraph", "Commission File Number: 001-36743"),
        Element("paragraph", "Apple Inc."),
        Element("paragraph", "(Exact name of Registrant as specified in its charter)"),
    ] + BODY
    assert filing_facts(cover) == ["Form 10-Q", "Apple Inc.", "quarterly period ended June 29, 2024",
                                   "Commission file number 001-36743"]


def test_pdf_and_html_titles_come_from_the_files_own_properties(corpus_dir: Path) -> None:
    nist, _ = _identity_of(corpus_dir, "pdf/nist_csf_v1.1_2018-04-16.pdf")
    assert nist == "Framework for Critical Infrastructure Cybersecurity, Version 1.1"
    wiki, _ = _identity_of(corpus_dir, "html/wikipedia_de_deutschland.html")
    assert wiki == "Deutschland – Wikipedia"
    # a machine-made title property ("Sb_2025_270_2026-01-01_IZ") gives way to the file name
    law, _ = _identity_of(corpus_dir, "pdf/cz_zakon_270-2025_novela_trestniho_zakoniku.pdf")
    assert law == "cz zakon 270 2025 novela trestniho zakoniku"


def test_untitled_documents_use_their_opening_heading_then_their_file_name() -> None:
    headed = [Element("heading", "Travel Policy", level=1)] + BODY
    assert document_identity(None, headed, "policies/travel.pdf") == "Travel Policy"
    numbered = [Element("heading", "1 Introduction", level=1)] + BODY
    assert document_identity(None, numbered, "reports/q3_sales-review.pdf") == "q3 sales review"
    assert document_identity("   \n\t ", BODY, "a/b/Board_Minutes-2024.docx") == "Board Minutes 2024"


def test_hostile_titles_are_cleaned_bounded_and_redacted(embedder) -> None:
    controls = document_identity("Budget\x1b]0;pwned\x07 \u202eoverview\x00", BODY, "x.pdf")
    assert "\x1b" not in controls and "\x07" not in controls and "\u202e" not in controls and "\x00" not in controls
    assert "Budget" in controls and "overview" in controls
    huge = document_identity("Annual report " * 1000, BODY, "x.pdf")
    assert len(huge) <= 320 and huge.endswith("\u2026")
    secret = document_identity(f"Deploy notes {GITHUB}", BODY, "x.pdf")
    assert GITHUB not in secret and "Deploy notes" in secret and "REDACTED" in secret
    assert document_identity(None, [], "") == ""


def test_identity_counts_against_the_token_budget_and_never_cuts_the_body(embedder) -> None:
    long_paragraph = " ".join(f"Sentence {i} explains a rule about freight documents." for i in range(300))
    elements = [Element("heading", "Rules", level=1), Element("paragraph", long_paragraph)]
    identity = "Consolidated quarterly report of a very long company name " * 20
    chunks = chunk_elements(elements, embedder.count_tokens, embedder.max_tokens, identity=identity)
    line = chunks[0].search_prefix.split("\n")[0]
    assert line.endswith("\u2026") and embedder.count_tokens([line])[0] <= MAX_IDENTITY_TOKENS
    for chunk in chunks:
        assert chunk.search_text.startswith(line + "\nRules\n")
        assert chunk.token_count <= embedder.max_tokens
    assert " ".join(c.text for c in chunks).split() == long_paragraph.split()  # every word indexed


def test_the_parse_step_redacts_the_title_before_it_is_stored() -> None:
    wire = {"elements": [e.to_dict() for e in BODY], "parser": "p", "title": f"Keys {GITHUB}\x1b[2J"}
    stored = redacted(ParsedDocument.from_dict(wire)).to_dict()
    assert GITHUB not in stored["title"] and "\x1b" not in stored["title"]
    assert any(k.startswith("secret:") for k in stored["safety"])


def test_a_title_that_is_also_the_top_heading_is_said_once(embedder) -> None:
    elements = [Element("paragraph", "Issued by the finance office."), Element("heading", "Travel Policy", level=1),
                Element("heading", "Approval", level=2)] + BODY
    chunks = chunk_elements(elements, embedder.count_tokens, embedder.max_tokens, target_tokens=64, identity="Travel Policy")
    assert chunks[0].search_prefix == "Travel Policy\n"  # before the first heading: the identity line
    assert chunks[-1].search_prefix == "Travel Policy > Approval\n"

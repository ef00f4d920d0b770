"""Running headers, footers and page numbers: removed from real documents, real content kept.

The real-document tests parse corpus PDFs with the project's PDF parser and check the cleaned
element list; the small hand-built lists pin down the rules (what counts as repetition, short
documents, elements without a position) where a real document would hide which rule fired.
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

import pytest

from rag_pipeline.cleaning.boilerplate import is_page_number, strip_page_boilerplate
from rag_pipeline.parsing.pdf import parse_pdf
from rag_pipeline.parsing.types import Element

HEIGHT = 792.0


@cache
def _clean_cached(path: str) -> tuple[tuple[Element, ...], tuple[Element, ...], tuple[tuple[str, int], ...]]:
    doc = parse_pdf(Path(path).read_bytes(), name=Path(path).name)
    kept, counts = strip_page_boilerplate(doc.elements)
    return tuple(doc.elements), tuple(kept), tuple(sorted(counts.items()))


def cleaned(corpus_dir: Path, name: str) -> tuple[list[Element], list[Element], dict[str, int]]:
    """(parsed elements, kept elements, removal counts) for a corpus PDF, once per session."""
    elements, kept, counts = _clean_cached(str(corpus_dir / "docs/pdf" / name))
    return list(elements), list(kept), dict(counts)


def in_margin(e: Element, share: float = 0.1) -> bool:
    centre = (e.bbox[1] + e.bbox[3]) / 2
    return centre <= share * e.page_height or centre >= (1 - share) * e.page_height


def el(text: str, page: int | None, y0: float | None, kind: str = "paragraph", height: float = 12.0) -> Element:
    bbox = None if y0 is None else (72.0, y0, 540.0, y0 + height)
    return Element(kind, text, page, None, bbox, None if y0 is None else HEIGHT)  # type: ignore[arg-type]


# ------------------------------------------------------------------------------------------------
# Real documents
# ------------------------------------------------------------------------------------------------


def test_nist_csf_11_running_header_and_doi_footer_removed(corpus_dir):
    elements, kept, counts = cleaned(corpus_dir, "nist_csf_v1.1_2018-04-16.pdf")
    assert counts["running_header"] >= 50 and counts["running_footer"] >= 50
    assert not any(e.text == "April 16, 2018 Cybersecurity Framework Version 1.1" for e in kept)
    assert not any("This publication is available free of charge from" in e.text for e in kept)
    assert not any(is_page_number(e.text) and in_margin(e) for e in kept)
    # everything removed was in a margin band; headings and body are all still there
    kept_ids = {id(e) for e in kept}
    removed = [e for e in elements if id(e) not in kept_ids]
    assert all(in_margin(e, 0.12) for e in removed)
    assert len(removed) == sum(counts.values())
    kept_headings = {e.text for e in kept if e.kind == "heading"}
    assert {"1.0 Framework Introduction", "2.1 Framework Core", "Appendix B: Glossary"} <= kept_headings
    assert [e for e in elements if e.kind == "table"] == [e for e in kept if e.kind == "table"]


def test_nist_csf_10_bare_page_numbers_removed(corpus_dir):
    _, kept, counts = cleaned(corpus_dir, "nist_csf_v1.0_2014-02-12.pdf")
    assert counts["page_number"] >= 35
    assert counts["running_header"] >= 35
    assert not any(is_page_number(e.text) and in_margin(e) for e in kept)
    assert not any(e.text == "February 12, 2014 Cybersecurity Framework Version 1.0" for e in kept)


def test_irs_manual_headers_and_footers_removed_form_rows_kept(corpus_dir):
    elements, kept, counts = cleaned(corpus_dir, "irs_irm_2.3.59_idrs_400p.pdf")
    assert counts["running_header"] >= 390 and counts["running_footer"] >= 390
    for furniture in ("Cat. No. 28171E", "Any line marked with a #", "IDRS Terminal Responses page"):
        assert not any(furniture in e.text and in_margin(e) for e in kept), furniture
    assert not any(re.fullmatch(r"Command Codes BMFOL and BMFOR 2\.3\.59 page \d+", e.text) for e in kept)
    assert not any(re.fullmatch(r"page \d+ 2\.3 IDRS Terminal Responses", e.text) for e in kept)
    # rows of the exhibit screens that happen to sit low on a few pages are content, not footers
    rows = [e for e in elements if e.text == "7 11 Preparer Checkbox"]
    assert len(rows) >= 10 and all(e in kept for e in rows)
    assert "(1) This transmits revised IRM 2.3.59, IDRS Terminal Responses, Command Codes BMFOL and BMFOR." in {
        e.text for e in kept
    }


def test_federal_register_header_footer_and_margin_note_removed(corpus_dir):
    _, kept, counts = cleaned(corpus_dir, "federal_register_2020-17221.pdf")
    assert not any(e.text.startswith("VerDate Sep<11>2014") for e in kept)
    assert not any("jbell on DSKJLSW7X2PROD" in e.text for e in kept)  # rotated note in the margin
    assert not any("Federal Register / Vol. 85, No. 152 / Thursday, August 6, 2020" in e.text for e in kept)
    assert "47698" not in {e.text for e in kept}  # first page number, top of page 1
    assert counts["page_number"] >= 1
    assert any(e.text == "Background" and e.kind == "heading" for e in kept)


def test_alternating_author_and_title_headers_removed(corpus_dir):
    """Even pages carry the authors, odd pages the title (a French paper, Aligon et al.)."""
    elements, kept, counts = cleaned(corpus_dir, "olap_query_logs_aligon_fr.pdf")
    assert sum(e.text == "J. Aligon et al." for e in elements) >= 5
    assert not any(e.text == "J. Aligon et al." for e in kept)
    assert not any(e.text == "Résumés et interrogations de logs de requêtes OLAP" and e.page > 1 for e in kept)
    assert counts["running_header"] >= 10


def test_section_running_headers_removed_repeated_section_titles_kept(corpus_dir):
    """Lecture notes: "4 1.1. TOPOLOGISCHE RÄUME" heads each page; the exercise sections are all
    titled "Übungsaufgaben" (three real headings) and must survive."""
    elements, kept, _ = cleaned(corpus_dir, "geotopo_lecture_notes_de_117p.pdf")
    assert not any(re.fullmatch(r"\d+ \d\.\d\. [A-ZÄÖÜ ]+", e.text) and in_margin(e) for e in kept)
    exercises = [e for e in elements if e.text == "Übungsaufgaben"]
    assert len(exercises) >= 3 and all(e in kept for e in exercises)


def test_czech_law_strana_page_numbers_removed(corpus_dir):
    elements, kept, counts = cleaned(corpus_dir, "cz_zakon_270-2025_novela_trestniho_zakoniku.pdf")
    assert counts["page_number"] >= 80
    assert not any(re.fullmatch(r"strana \d+", e.text) for e in kept)
    assert "270" in {e.text for e in kept}  # the law's number under the title is not a page number


# ------------------------------------------------------------------------------------------------
# The rules on hand-built element lists
# ------------------------------------------------------------------------------------------------


def test_page_x_of_y_footers_match_across_pages():
    elements = []
    for page in range(1, 6):
        elements += [el(f"Body text of page {page}.", page, 300), el(f"Page {page} of 40", page, 760)]
    kept, counts = strip_page_boilerplate(elements)
    assert [e.text for e in kept] == [f"Body text of page {p}." for p in range(1, 6)]
    assert counts == {"running_header": 0, "running_footer": 0, "page_number": 5}


def test_odd_and_even_running_headers():
    elements = []
    for page in range(1, 9):
        header = "A Study of Things" if page % 2 else "Smith and Jones"
        elements += [el(header, page, 40), el(f"Paragraph {page} starts here and goes on.", page, 200)]
    kept, counts = strip_page_boilerplate(elements)
    assert all(e.text.startswith("Paragraph") for e in kept) and len(kept) == 8
    assert counts["running_header"] == 8


def test_text_repeated_once_is_kept():
    elements = []
    for page in range(1, 11):
        elements.append(el("Chapter running title", page, 40))
        elements.append(el(f"Content {page}", page, 300))
    elements += [el("Note: see appendix", 3, 60), el("Note: see appendix", 7, 60)]  # twice, top band
    kept, _ = strip_page_boilerplate(elements)
    assert sum(e.text == "Note: see appendix" for e in kept) == 2
    assert not any(e.text == "Chapter running title" for e in kept)


def test_same_text_at_different_heights_is_not_a_running_header():
    elements = [el("Summary", page, y) for page, y in ((1, 20), (2, 45), (3, 70))]
    elements += [el(f"Body {p}", p, 300) for p in (1, 2, 3)]
    kept, counts = strip_page_boilerplate(elements)
    assert len(kept) == 6 and sum(counts.values()) == 0


def test_scattered_repeats_in_a_long_document_are_kept():
    """Three far-apart pages of a 40-page document with the same last table row: content."""
    elements = [el(f"Body {p}", p, 300) for p in range(1, 41)]
    elements += [el("7 11 Preparer Checkbox", p, 740) for p in (5, 17, 31)]
    kept, counts = strip_page_boilerplate(elements)
    assert sum(e.text == "7 11 Preparer Checkbox" for e in kept) == 3
    assert counts["running_footer"] == 0


def test_short_documents_keep_repeats_but_lose_bare_page_numbers():
    elements = [
        el("Acme Corp quarterly letter", 1, 40),
        el("Dear shareholders, ...", 1, 200),
        el("1", 1, 760),
        el("Acme Corp quarterly letter", 2, 40),
        el("Results were good.", 2, 200),
        el("- 2 -", 2, 760),
    ]
    kept, counts = strip_page_boilerplate(elements)
    assert [e.text for e in kept] == [
        "Acme Corp quarterly letter",
        "Dear shareholders, ...",
        "Acme Corp quarterly letter",
        "Results were good.",
    ]
    assert counts == {"running_header": 0, "running_footer": 0, "page_number": 2}


def test_a_number_in_the_body_is_not_a_page_number():
    elements = [el("42", 1, 400), el("Total", 1, 380)]
    kept, counts = strip_page_boilerplate(elements)
    assert len(kept) == 2 and counts["page_number"] == 0


def test_elements_without_position_only_lose_known_header_and_footer_kinds():
    elements = [
        Element("page_header", "ACME Confidential"),
        Element("heading", "Introduction", level=1),
        Element("paragraph", "3"),
        Element("paragraph", "Page 1 of 2"),
        Element("page_footer", "Page 1"),
        Element("paragraph", "Slide body", page=2),
    ]
    kept, counts = strip_page_boilerplate(elements)
    assert [e.text for e in kept] == ["Introduction", "3", "Page 1 of 2", "Slide body"]
    assert counts == {"running_header": 1, "running_footer": 1, "page_number": 0}


@pytest.mark.parametrize(
    "text, expected",
    [
        ("12", True),
        ("- 12 -", True),
        ("Page 3 of 40", True),
        ("Seite 7", True),
        ("strana 15", True),
        ("xiv", True),
        ("47698", True),
        ("Page", False),
        ("2018 Annual Report", False),
        ("Figure 3", False),
        ("X", False),
    ],
)
def test_is_page_number(text, expected):
    assert is_page_number(text) is expected

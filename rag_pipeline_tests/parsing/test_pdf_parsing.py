"""The PDF parser against real documents from the shared corpus (no synthetic stand-ins, no
mocks). Each test states a property a reader can check by opening the PDF.

OCR is exercised on one-page documents (or a one-page slice) with English only, so the whole
file stays well under a minute on two cores.
"""

from __future__ import annotations

import random
import re
from functools import cache
from pathlib import Path

import pymupdf
import pytest

from rag_pipeline.parsing.config import ParseLimits
from rag_pipeline.parsing.pdf import PARSER_VERSION, parse_pdf
from rag_pipeline.parsing.pdf import ocr as pdf_ocr
from rag_pipeline.parsing.types import Element, ParsedDocument, ParseError

ENGLISH_OCR = ParseLimits(ocr_languages="eng")  # one language: 2x faster OCR, same test value


@cache
def _parse_cached(path: str, limits: ParseLimits = ParseLimits()) -> ParsedDocument:
    return parse_pdf(Path(path).read_bytes(), name=Path(path).name, limits=limits)


def parsed(corpus_dir: Path, relative: str, limits: ParseLimits = ParseLimits()) -> ParsedDocument:
    """Parse a corpus PDF once per test session (several tests look at the same document)."""
    return _parse_cached(str(corpus_dir / relative), limits)


def headings(doc: ParsedDocument) -> dict[str, int]:
    return {e.text: e.level for e in doc.elements if e.kind == "heading"}


def index_of(elements: list[Element], needle: str) -> int:
    """Position of the first element containing `needle` (fails the test when absent)."""
    for i, element in enumerate(elements):
        if needle in element.text:
            return i
    pytest.fail(f"no element contains {needle!r}")


def one_page_pdf(source: Path, page: int) -> bytes:
    """A one-page slice of a corpus PDF, built in memory (the corpus itself is never copied)."""
    src = pymupdf.open(source)
    out = pymupdf.open()
    out.insert_pdf(src, from_page=page, to_page=page)
    return out.tobytes()


# ------------------------------------------------------------------------------------------------
# Contract
# ------------------------------------------------------------------------------------------------


def test_a_pymupdf_upgrade_changes_the_recorded_parser_version():
    """The version stored with every document names the library release, so upgrading PyMuPDF
    re-parses what it parsed (the plan compares recorded and current versions)."""
    assert f"pymupdf-{pymupdf.__version__}+" in PARSER_VERSION


@pytest.mark.parametrize(
    "relative",
    ["docs/pdf/nist_csf_v1.1_2018-04-16.pdf", "docs/pdf/dpr_karpukhin2020_two_column_13p.pdf"],
)
def test_every_element_has_page_bbox_and_page_height(corpus_dir, relative):
    doc = parsed(corpus_dir, relative)
    assert doc.parser == PARSER_VERSION
    assert doc.page_count == pymupdf.open(corpus_dir / relative).page_count
    assert doc.elements
    for e in doc.elements:
        assert e.page is not None and 1 <= e.page <= doc.page_count, e
        assert e.bbox is not None and e.bbox[0] <= e.bbox[2] and e.bbox[1] <= e.bbox[3], e
        assert e.page_height and e.page_height > 0, e
        assert e.text.strip(), e
        assert (e.level is not None) == (e.kind == "heading"), e


# ------------------------------------------------------------------------------------------------
# Headings
# ------------------------------------------------------------------------------------------------


def test_nist_csf_11_headings_come_from_its_outline(corpus_dir):
    found = headings(parsed(corpus_dir, "docs/pdf/nist_csf_v1.1_2018-04-16.pdf"))
    expected = {
        "1.0 Framework Introduction": 2,
        "2.0 Framework Basics": 2,
        "2.1 Framework Core": 3,
        "2.2 Framework Implementation Tiers": 3,
        "3.0 How to Use the Framework": 2,
        "4.0 Self-Assessing Cybersecurity Risk with the Framework": 2,
        "Appendix A: Framework Core": 2,
        "Appendix B: Glossary": 2,
    }
    for title, level in expected.items():
        assert found.get(title) == level, (title, found.get(title))
    # the running header and the page numbers never become headings
    assert not any("Cybersecurity Framework Version 1.1" in t for t in found)
    assert not any(t.strip().isdigit() for t in found)


def test_nist_csf_10_headings_from_font_statistics(corpus_dir):
    """Version 1.0 has no outline: headings come from font size / bold, levels from numbering."""
    doc = parsed(corpus_dir, "docs/pdf/nist_csf_v1.0_2014-02-12.pdf")
    found = headings(doc)
    for title in ("1.0 Framework Introduction", "2.0 Framework Basics", "3.0 How to Use the Framework"):
        assert found.get(title) == 1, (title, found.get(title))
    for title in ("Appendix A: Framework Core", "Appendix B: Glossary", "Executive Summary"):
        assert title in found
    assert found["Tier 1: Partial"] > found["2.0 Framework Basics"]
    assert not any("Cybersecurity Framework Version 1.0" in t for t in found)
    assert not any(re.fullmatch(r"[\divx]+", t) for t in found)
    assert not any(e.kind == "heading" for e in doc.elements if e.page in range(21, 39))  # core table pages


def test_irs_manual_flat_outline_gets_levels_from_section_numbers(corpus_dir):
    doc = parsed(corpus_dir, "docs/pdf/irs_irm_2.3.59_idrs_400p.pdf")
    found = headings(doc)
    assert found["2.3.59.1 Program Scope and Objectives"] == 1
    assert found["2.3.59.1.1 Background"] == 2
    assert found["2.3.59.1.3 Responsibilities or Roles and Responsibilities"] == 2  # three lines joined
    assert found["2.3.59.2 Command Code BMFOL Overview"] == 1
    assert len(found) >= 100
    # the side heading precedes the body paragraph printed to its right
    elements = [e for e in doc.elements if e.page == 7]
    authority = index_of(elements, "2.3.59.1.2 Authority")
    assert elements[authority].kind == "heading"
    assert any("Not Available" in e.text for e in elements[authority + 1 : authority + 4])


def test_dpr_paper_numbered_section_headings(corpus_dir):
    found = headings(parsed(corpus_dir, "docs/pdf/dpr_karpukhin2020_two_column_13p.pdf"))
    assert found["1 Introduction"] == 1
    assert found["3 Dense Passage Retriever (DPR)"] == 1
    assert found["3.1 Overview"] == 2
    assert found["5.2 Ablation Study on Model Training"] == 2
    assert found["Dense Passage Retrieval for Open-Domain Question Answering"] == 1
    assert "Training Model NQ TriviaQA WQ TREC SQuAD" not in found  # a table header row


# ------------------------------------------------------------------------------------------------
# Reading order, paragraphs, lists
# ------------------------------------------------------------------------------------------------


def test_dpr_two_column_sentence_reads_in_order(corpus_dir):
    """The sentence runs over eight lines and two PyMuPDF blocks of the right-hand column."""
    doc = parsed(corpus_dir, "docs/pdf/dpr_karpukhin2020_two_column_13p.pdf")
    sentence = (
        "Consider the question “Who is the bad guy in lord of the rings?”, which can be answered "
        "from the context “Sala Baker is best known for portraying the villain Sauron in the Lord "
        "of the Rings trilogy.”"
    )
    assert any(sentence in e.text for e in doc.elements)
    # end-of-line hyphenation undone ("ef-" / "ficient"), real hyphens kept
    assert any("relies on efficient passage retrieval" in e.text for e in doc.elements)
    assert any("Lucene-BM25 system" in e.text for e in doc.elements)
    # left column (introduction) before the right column on page 1
    assert index_of(doc.elements, "1 Introduction") < index_of(doc.elements, "Retrieval in open-domain QA")
    assert index_of(doc.elements, "of improving retrieval.") < index_of(doc.elements, "Retrieval in open-domain QA")


def test_federal_register_three_columns_read_column_by_column(corpus_dir):
    doc = parsed(corpus_dir, "docs/pdf/federal_register_2020-17221.pdf")
    page2 = [e for e in doc.elements if e.page == 2]
    first_col = index_of(page2, "Hatta International Airport in Jakarta")
    second_col = index_of(page2, "altitude disagree alert")
    third_col = index_of(page2, "and the Ethiopian Civil Aviation Authority (ECAA).")
    assert first_col < second_col < third_col
    # a footnote at the foot of column one comes before column two
    assert index_of(page2, "1 Preliminary KNKT.18.10.35.04") < second_col
    background = index_of(doc.elements, "Background")
    assert doc.elements[background].kind == "heading"
    assert "On October 29, 2018, a Boeing Model 737–8 airplane" in doc.elements[background + 1].text


def test_rotated_page_is_read_as_displayed(corpus_dir):
    """A page stored sideways with /Rotate 90 (how scanners and office suites save landscape
    pages) reads like the upright page: same sentence, page height as displayed."""
    source = pymupdf.open(corpus_dir / "docs/pdf/dpr_karpukhin2020_two_column_13p.pdf")
    width, height = source[0].rect.width, source[0].rect.height
    out = pymupdf.open()
    page = out.new_page(width=height, height=width)
    page.show_pdf_page(page.rect, source, 0, rotate=90)
    page.set_rotation(90)
    doc = parse_pdf(out.tobytes(), name="rotated.pdf")
    assert any("relies on efficient passage retrieval to select candidate contexts" in e.text for e in doc.elements)
    assert doc.elements[0].text == "Dense Passage Retrieval for Open-Domain Question Answering"
    assert {round(e.page_height) for e in doc.elements} == {round(height)}


def test_nist_bullets_become_list_items_without_the_bullet(corpus_dir):
    doc = parsed(corpus_dir, "docs/pdf/nist_csf_v1.1_2018-04-16.pdf")
    item = doc.elements[index_of(doc.elements, "Functions organize basic cybersecurity activities")]
    assert item.kind == "list_item"
    assert item.text.startswith("Functions organize basic cybersecurity activities at their highest level.")
    assert item.text.endswith("resulting in reduced impact to the delivery of services.")  # lines joined


def test_linn_ocr_reads_two_columns_in_order(corpus_dir):
    """An image-only brochure: OCR text, checked against the corpus ground truth."""
    doc = parsed(corpus_dir, "docs/scanned/linn_two_column_brochure_scan.pdf", ENGLISH_OCR)
    assert doc.ocr_pages == [1]
    words = lambda text: re.findall(r"[a-z]{3,}", text.lower())  # noqa: E731
    truth = words((corpus_dir / "docs/scanned/linn_two_column_brochure_scan.groundtruth.txt").read_text())
    found = set(words(" ".join(e.text for e in doc.elements)))
    recall = sum(1 for w in truth if w in found) / len(truth)
    assert recall >= 0.8, recall
    # left column (bottom paragraph) before the right column (top paragraph)
    assert index_of(doc.elements, "To erase a wrong note") < index_of(doc.elements, "One way to create a song")
    assert index_of(doc.elements, "Recording a Sequence") < index_of(doc.elements, "Creating a Song")


def test_huckfinn_scanned_page_is_ocred(corpus_dir):
    data = one_page_pdf(corpus_dir / "docs/scanned/huckfinn_multipage_scanned.pdf", 0)
    doc = parse_pdf(data, name="huckfinn_p1.pdf", limits=ENGLISH_OCR)
    assert doc.ocr_pages == [1]
    text = " ".join(e.text for e in doc.elements)
    assert "along a path amongst" in text  # OCR of an old book page: a phrase and a word
    assert "widow" in text


def test_scan_with_ocr_layer_is_not_ocred_again(corpus_dir, monkeypatch):
    ocred = []  # OCR of this page would take seconds: Tesseract is never asked
    monkeypatch.setattr(pymupdf.Page, "get_textpage_ocr", lambda page, *a, **k: ocred.append(page.number))
    path = corpus_dir / "docs/scanned/suaa_letter_scanned_with_ocr_layer.pdf"
    doc = parse_pdf(path.read_bytes(), name=path.name)
    assert ocred == []
    assert doc.ocr_pages == []
    assert any("SUAACTION" in e.text for e in doc.elements)


def test_scan_without_ocr_is_reported_never_silently_dropped(corpus_dir):
    """A text page followed by a scanned page: with OCR off the scan is named in a warning."""
    out = pymupdf.open(corpus_dir / "docs/pdf/scotus_transcript_p1.pdf")
    out.insert_pdf(pymupdf.open(corpus_dir / "docs/scanned/linn_two_column_brochure_scan.pdf"))
    doc = parse_pdf(out.tobytes(), name="mixed.pdf", limits=ParseLimits(ocr=False))
    assert doc.ocr_pages == []
    assert any("page 2 has no text layer" in w for w in doc.warnings), doc.warnings
    assert {e.page for e in doc.elements} == {1}


def test_missing_tesseract_gives_install_hint(corpus_dir, monkeypatch):
    """With Tesseract off the PATH the warning says how to install it."""
    out = pymupdf.open(corpus_dir / "docs/pdf/scotus_transcript_p1.pdf")
    out.insert_pdf(pymupdf.open(corpus_dir / "docs/scanned/linn_two_column_brochure_scan.pdf"))
    monkeypatch.setenv("PATH", "/nonexistent")
    pdf_ocr._tesseract_setup.cache_clear()
    try:
        doc = parse_pdf(out.tobytes(), name="mixed.pdf")
    finally:
        monkeypatch.undo()
        pdf_ocr._tesseract_setup.cache_clear()
    assert "page 2 has no text layer and OCR is not installed (apt-get install tesseract-ocr)" in doc.warnings


def test_scan_only_pdf_without_ocr_is_a_parse_error(corpus_dir):
    data = (corpus_dir / "docs/scanned/linn_two_column_brochure_scan.pdf").read_bytes()
    with pytest.raises(ParseError, match=r"no extractable text.*page 1 has no text layer"):
        parse_pdf(data, name="linn.pdf", limits=ParseLimits(ocr=False))


# ------------------------------------------------------------------------------------------------
# Tables
# ------------------------------------------------------------------------------------------------


def _table_rows(markdown: str) -> list[list[str]]:
    rows = []
    for line in markdown.splitlines():
        cells = [c.strip() for c in re.split(r"(?<!\\)\|", line.strip())[1:-1]]
        rows.append(cells)
    return rows


def test_ca_warn_report_is_one_table_across_pages(corpus_dir):
    path = corpus_dir / "docs/pdf/ca_warn_report_2015-07_to_2016-03.pdf"
    doc = parsed(corpus_dir, "docs/pdf/ca_warn_report_2015-07_to_2016-03.pdf")
    tables = [e for e in doc.elements if e.kind == "table" and "Maxim Integrated Product" in e.text]
    assert len(tables) == 1
    table = tables[0]
    assert table.page == 1
    rows = _table_rows(table.text)
    assert rows[0] == ["Notice Date", "Effective", "Received", "Company", "City", "No. Of", "Layoff/Closure"]
    assert set(rows[1]) == {"---"}
    data = rows[2:]
    assert all(len(r) == 7 for r in data)
    assert sum(1 for line in table.text.splitlines() if "Notice Date" in line) == 1  # header once
    # every notice of the report is a row: each has three dates, the heading area has two more
    source = pymupdf.open(path)
    dates = sum(len(re.findall(r"\d\d/\d\d/\d{4}", page.get_text())) for page in source)
    assert len(data) == (dates - 2) // 3
    assert all(re.fullmatch(r"\d\d/\d\d/\d{4}", r[0]) and r[6] for r in data)
    assert data[0][3] == "Maxim Integrated Product" and data[0][5] == "150"
    # table text is not repeated as paragraphs
    assert not any("Maxim Integrated" in e.text for e in doc.elements if e.kind != "table")


def test_nist_core_table_continues_over_pages_with_header_once(corpus_dir):
    doc = parsed(corpus_dir, "docs/pdf/nist_csf_v1.1_2018-04-16.pdf")
    core = [e for e in doc.elements if e.kind == "table" and "ID.AM-1" in e.text]
    assert len(core) == 1
    text = core[0].text
    assert text.splitlines()[0] == "| Function | Category | Subcategory | Informative References |"
    assert text.count("| Function | Category | Subcategory | Informative References |") == 1
    for subcategory in ("ID.AM-1", "PR.AC-1", "DE.CM-1", "RS.RP-1", "RC.CO-3"):  # first to last page
        assert subcategory in text
    assert core[0].page == 31


def test_symbol_font_bullets_read_as_bullets_in_table_cells_and_lists(corpus_dir):
    doc = parsed(corpus_dir, "docs/pdf/nist_csf_v1.0_2014-02-12.pdf")
    text = "\n".join(e.text for e in doc.elements)
    assert "\uf0b7" not in text  # the Symbol font's private-use bullet, shown as a box
    assert "inventoried | \u2022 CCS CSC 1 \u2022 COBIT 5 BAI09.01, BAI09.02" in text
    # a bullet that starts a line still makes a list item, without the bullet
    assert any(e.kind == "list_item" and not e.text.startswith("\u2022") for e in doc.elements)


# ------------------------------------------------------------------------------------------------
# Bad input
# ------------------------------------------------------------------------------------------------


def _nist_bytes(corpus_dir: Path) -> bytes:
    return (corpus_dir / "docs/pdf/nist_csf_v1.1_2018-04-16.pdf").read_bytes()


def test_truncated_pdf(corpus_dir):
    data = _nist_bytes(corpus_dir)
    with pytest.raises(ParseError, match="truncated.*download or export it again"):
        parse_pdf(data[: len(data) // 2], name="cut.pdf")


def test_random_bytes_named_pdf():
    with pytest.raises(ParseError, match="not a PDF"):
        parse_pdf(random.Random(7).randbytes(20_000), name="noise.pdf")


def test_random_bytes_behind_a_pdf_header():
    with pytest.raises(ParseError, match="damaged"):
        parse_pdf(b"%PDF-1.7\n" + random.Random(7).randbytes(20_000), name="noise.pdf")


def test_html_named_pdf():
    with pytest.raises(ParseError, match="not a PDF.*another format"):
        parse_pdf(b"<!DOCTYPE html><html><body><p>Moved</p></body></html>", name="page.pdf")


def test_encrypted_pdf(tmp_path):
    doc = pymupdf.open()
    doc.new_page().insert_text((72, 72), "confidential")
    target = tmp_path / "locked.pdf"
    doc.save(target, encryption=pymupdf.PDF_ENCRYPT_AES_256, user_pw="x", owner_pw="owner")
    with pytest.raises(ParseError, match="encrypted and needs a password"):
        parse_pdf(target.read_bytes(), name="locked.pdf")


def test_zero_page_pdf():
    zero = (
        b"%PDF-1.4\n1 0 obj<</Type/Catalog/Pages 2 0 R>>endobj\n"
        b"2 0 obj<</Type/Pages/Kids[]/Count 0>>endobj\ntrailer<</Root 1 0 R>>\n%%EOF\n"
    )
    with pytest.raises(ParseError, match="no pages"):
        parse_pdf(zero, name="zero.pdf")


def test_blank_pdf():
    doc = pymupdf.open()
    doc.new_page()
    doc.new_page()
    with pytest.raises(ParseError, match="no extractable text in 2 page"):
        parse_pdf(doc.tobytes(), name="blank.pdf")


def test_page_limit(corpus_dir):
    with pytest.raises(ParseError, match="55 pages, over the 10-page limit"):
        parse_pdf(_nist_bytes(corpus_dir), name="nist.pdf", limits=ParseLimits(max_pages=10))


def test_byte_limit(corpus_dir):
    with pytest.raises(ParseError, match="over the 0 MB limit"):
        parse_pdf(_nist_bytes(corpus_dir), name="nist.pdf", limits=ParseLimits(max_bytes=1000))


def test_hostile_3000_page_pdf_is_refused_quickly(monkeypatch):
    """Refused from its page count, before a single page is loaded."""
    doc = pymupdf.open()
    for _ in range(3000):
        doc.new_page().insert_text((72, 72), "x")
    data = doc.tobytes()
    loaded = []
    real_load_page = pymupdf.Document.load_page
    monkeypatch.setattr(pymupdf.Document, "load_page",
                        lambda self, *a, **k: loaded.append(a) or real_load_page(self, *a, **k))
    with pytest.raises(ParseError, match="3000 pages, over the 2000-page limit"):
        parse_pdf(data, name="huge.pdf")
    assert loaded == []

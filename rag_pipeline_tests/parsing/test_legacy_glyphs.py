"""A rupee sign drawn by a legacy font at the backtick (pdf/legacy_glyphs.py) reads as "₹", in
paragraphs and in table cells; a backtick in any other font stays a backtick. On the real Reliance
annual report excerpt of the shared corpus and on PDFs written here."""

from __future__ import annotations

import re
from pathlib import Path

import pymupdf

from rag_pipeline.parsing import parse_document
from rag_pipeline.parsing.config import ParseLimits

LIMITS = ParseLimits(ocr=False)


def _with_font_named(doc: pymupdf.Document, name: str) -> bytes:
    """The document with its Times font renamed `name`, as a template's font is named (the
    amounts below are set in Times, everything else in Helvetica)."""
    for xref in range(1, doc.xref_length()):
        if doc.xref_get_key(xref, "Type")[1] == "/Font" and "Times" in doc.xref_get_key(xref, "BaseFont")[1]:
            doc.xref_set_key(xref, "BaseFont", f"/{name}")
    return doc.tobytes()


def _text(data: bytes) -> str:
    return "\n".join(e.text for e in parse_document(data, "report.pdf", LIMITS).elements)


def test_the_real_annual_report_shows_rupees(corpus_dir: Path) -> None:
    path = corpus_dir / "docs" / "pdf" / "reliance_annual_report_excerpt_3p.pdf"
    text = _text(path.read_bytes())
    assert "\u20b917,81,841 crore" in text
    assert not re.search(r"`\d", text)


def test_a_rupee_font_in_prose_and_in_a_ruled_table_and_a_code_sample_beside_it() -> None:
    doc = pymupdf.open()
    page = doc.new_page()
    page.insert_text((72, 72), "Revenue rose to `1,186 crore this year.", fontname="tiro", fontsize=11)
    page.insert_text((72, 100), "Run `make test` before you push.", fontname="helv", fontsize=11)
    x0, y0, w, h = 72, 150, 150, 24  # a 2 x 3 ruled table
    for r in range(4):
        page.draw_line((x0, y0 + r * h), (x0 + 2 * w, y0 + r * h))
    for c in range(3):
        page.draw_line((x0 + c * w, y0), (x0 + c * w, y0 + 3 * h))
    for r, (label, amount) in enumerate([("Segment", "Revenue"), ("Retail", "`2,60,364 crore"), ("Jio", "`1,00,119 crore")]):
        page.insert_text((x0 + 6, y0 + r * h + 16), label, fontname="helv", fontsize=10)
        page.insert_text((x0 + w + 6, y0 + r * h + 16), amount, fontname="tiro", fontsize=10)
    text = _text(_with_font_named(doc, "RupeeForadian"))
    assert "Revenue rose to \u20b91,186 crore this year." in text
    assert "Run `make test` before you push." in text  # Helvetica's backticks are backticks
    assert "| Retail | \u20b92,60,364 crore |" in text and "| Jio | \u20b91,00,119 crore |" in text


def test_the_same_font_under_another_name_keeps_its_backticks() -> None:
    doc = pymupdf.open()
    page = doc.new_page()
    page.insert_text((72, 72), "Quote it as `value` in the shell.", fontname="tiro", fontsize=11)
    assert "Quote it as `value` in the shell." in _text(_with_font_named(doc, "SourceCodePro"))

"""Letter-spaced PDF text (parsing/pdf/letter_spacing.py): a heading set with character spacing
("E X E C U T I V E S U M M A R Y" as PyMuPDF reads it) is indexed as its words, found by them and
named by them in the section path; single letters the PDF itself separates with spaces, spread
table labels and ordinary text are left as they are. The PDFs are written with the content
stream operators a layout program uses: Tc (character spacing) and TJ (positioned glyphs)."""

from __future__ import annotations

import pymupdf
import pytest

from rag_pipeline.chunking.chunks import chunk_elements
from rag_pipeline.parsing import parse_document

BODY = "The board approved the budget for the coming year after a short discussion of the risks."


def _pdf(*pages: list[str]) -> bytes:
    """A PDF whose pages hold the given content stream lines (font /F1 is Helvetica)."""
    document = pymupdf.open()
    for lines in pages:
        page = document.new_page()
        page.insert_text((72, 72), "x", fontsize=11)  # registers Helvetica as the page's font
        name = page.get_fonts()[0][4]
        stream = "\n".join(f"BT /{name} {line} ET" for line in lines)
        document.update_stream(page.get_contents()[0], stream.encode("latin-1"))
    return document.tobytes()


def _text(data: bytes) -> str:
    return "\n".join(e.text for e in parse_document(data, "spaced.pdf").elements)


@pytest.mark.parametrize(("operators", "words"), [
    ("20 Tf 8 Tc 72 700 Td (EXECUTIVE SUMMARY) Tj", "EXECUTIVE SUMMARY"),  # wide tracking, a real space between
    ("20 Tf 3 Tc 72 700 Td (ANNUAL REPORT 2025) Tj", "ANNUAL REPORT 2025"),  # narrow: PyMuPDF splits some letters only
    ("20 Tf 0 Tc 72 700 Td [(S) -400 (U) -400 (M) -400 (M) -400 (A) -400 (R) -400 (Y)] TJ", "SUMMARY"),  # no space glyph
    ("11 Tf 2 Tc 72 700 Td (Table 1) Tj", "Table 1"),
])
def test_a_letter_spaced_line_reads_as_its_words(operators: str, words: str) -> None:
    text = _text(_pdf([operators, f"11 Tf 0 Tc 72 660 Td ({BODY}) Tj"]))
    assert words in text.splitlines(), text
    assert BODY in text


def test_word_gaps_of_glyphs_set_one_by_one_stay_word_boundaries() -> None:
    # no space glyph at all: the gap between the words is 0.9 em against 0.4 em between letters
    line = "20 Tf 72 700 Td [(R) -400 (I) -400 (S) -400 (K) -900 (R) -400 (E) -400 (P) -400 (O) -400 (R) -400 (T)] TJ"
    assert "RISK REPORT" in _text(_pdf([line, f"11 Tf 72 660 Td ({BODY}) Tj"])).splitlines()


@pytest.mark.parametrize("operators", [
    "11 Tf 0 Tc 72 700 Td (Options a b c d e are listed below.) Tj",  # the PDF's own spaces
    "11 Tf 0 Tc 72 700 Td (A B C D E F) Tj",
    "11 Tf 0 Tc 72 700 Td (x y z) Tj",
])
def test_single_letters_the_pdf_separates_with_spaces_are_left_alone(operators: str) -> None:
    written = operators.split("(")[1].split(")")[0]
    assert written in _text(_pdf([operators, f"11 Tf 0 Tc 72 660 Td ({BODY}) Tj"])).splitlines()


def test_labels_spread_wider_than_letter_spacing_are_not_joined() -> None:
    # column labels 2 em apart: no tracking is that wide, so they are not one word "ABCD"
    line = "14 Tf 72 700 Td [(A) -2000 (B) -2000 (C) -2000 (D)] TJ"
    text = _text(_pdf([line, f"11 Tf 72 660 Td ({BODY}) Tj"]))
    assert "ABCD" not in text and all(letter in text for letter in "ABCD")


def test_a_letter_spaced_heading_names_the_section_and_is_searchable_by_its_words(embedder) -> None:
    data = _pdf([
        "22 Tf 6 Tc 72 700 Td (RISK FACTORS) Tj",
        f"11 Tf 0 Tc 72 660 Td ({BODY}) Tj",
        "11 Tf 0 Tc 72 640 Td (Currency movements and interest rates may reduce the margin next year.) Tj",
    ])
    parsed = parse_document(data, "report.pdf")
    chunks = chunk_elements(parsed.elements, embedder.count_tokens, embedder.max_tokens)
    assert any("RISK FACTORS" in " ".join(c.section_path) for c in chunks), [c.section_path for c in chunks]
    assert "R I S K" not in "\n".join(c.search_text for c in chunks)


def test_many_pages_of_letter_spaced_lines_all_read_as_words() -> None:
    # hostile size: 200 pages of 40 tracked lines each, every one rewritten (no time limit here:
    # the work is one rawdict per page that holds such a line)
    lines = [f"12 Tf 4 Tc 72 {760 - 18 * i} Td (SECTION NUMBER {i:02d} OF THE REPORT) Tj" for i in range(40)]
    text = _text(_pdf(*[lines] * 200))
    assert text.count("SECTION NUMBER") == 40 * 200 and "OF THE REPORT" in text
    assert "S E C T" not in text and "R E P" not in text

"""Margin line numbers (pdf/line_numbers.py): a transcript's 1..25 and a bill's every-fifth-line
numbers never reach the text, so its lines join into paragraphs; a ranked list between
paragraphs and a column of figures keep their numbers. On the real Supreme Court transcript of
the shared corpus and on PDFs written here."""

from __future__ import annotations

from pathlib import Path

import pymupdf

from rag_pipeline.parsing import parse_document
from rag_pipeline.parsing.config import ParseLimits

LIMITS = ParseLimits(ocr=False)
SPEECH = ("The above-entitled matter came on for oral argument before the Supreme Court of the United States at "
          "one o'clock in the afternoon, and counsel for the petitioner rose to address the bench on the question "
          "whether the state court had reasonably applied clearly established federal law when it rejected the claim "
          "of ineffective assistance of counsel brought by the respondent after his conviction for murder in the first "
          "degree, a question on which the court of appeals had divided sharply and which both parties had briefed at "
          "length before the argument began").split()


def _texts(data: bytes) -> list[str]:
    return [e.text for e in parse_document(data, "page.pdf", LIMITS).elements]


def _transcript(every: int = 1, right: bool = False, lines: int = 25) -> bytes:
    """A page of `lines` double-spaced text lines, numbered in the margin (every `every`th line)."""
    doc = pymupdf.open()
    page = doc.new_page()
    words = iter(SPEECH * 3)
    for n in range(1, lines + 1):
        y = 60 + n * 26
        page.insert_text((126, y), " ".join(next(words) for _ in range(8)), fontname="cour", fontsize=11)
        if n % every == 0:
            page.insert_text((520 if right else 90, y), str(n), fontname="cour", fontsize=11)
    return doc.tobytes()


def test_the_real_transcript_reads_without_its_line_numbers(corpus_dir: Path) -> None:
    path = corpus_dir / "docs" / "pdf" / "scotus_transcript_p1.pdf"
    texts = _texts(path.read_bytes())
    assert not any(t.isdigit() and 2 <= int(t) <= 25 for t in texts)
    assert "argument before the Supreme Court of the United States at 1:01 p.m." in texts


def test_numbered_lines_in_either_margin_are_left_out() -> None:
    for every, right in ((1, False), (5, False), (1, True)):
        texts = _texts(_transcript(every, right))
        assert not any(t.strip().isdigit() for t in texts), (every, right, texts)
        joined = " ".join(texts)
        assert "came on for oral argument before the Supreme" in joined
        assert not any(f" {n} " in f" {joined} " for n in (5, 10, 15)), (every, right)


def test_a_ranked_list_between_paragraphs_and_a_column_of_figures_keep_their_numbers() -> None:
    doc = pymupdf.open()
    page = doc.new_page()
    page.insert_text((72, 60), "The committee ranked the five proposals as follows after two rounds of review.", fontsize=10)
    for n, name in enumerate(["Harbour bridge", "Library wing", "Cycle lanes", "Market hall", "Solar roofs"], 1):
        page.insert_text((72, 90 + n * 16), str(n), fontsize=10)
        page.insert_text((100, 90 + n * 16), name, fontsize=10)
    for i in range(20):  # a long discussion below the list: the list is no page-long column
        page.insert_text((72, 220 + i * 16), f"Paragraph line {i} of the discussion that follows the ranking in the minutes.",
                         fontsize=10)
    texts = _texts(doc.tobytes())
    joined = " ".join(texts)
    for n in range(1, 6):
        assert str(n) in joined.split(), texts
    doc = pymupdf.open()
    page = doc.new_page()
    for i, value in enumerate([12, 40, 7, 95, 3, 61]):  # figures of a table column: they do not count lines
        page.insert_text((72, 80 + i * 16), f"Branch office number {i} reported", fontsize=10)
        page.insert_text((300, 80 + i * 16), str(value), fontsize=10)
    assert "95" in " ".join(_texts(doc.tobytes()))


def test_a_contents_page_keeps_its_chapter_numbers() -> None:
    """Chapter numbers down a contents page's margin go up by one, but its sections' rows stand
    between them: they number chapters, not lines (as the German lecture notes' contents page)."""
    doc = pymupdf.open()
    page = doc.new_page()
    y = 60
    for chapter in range(1, 7):
        page.insert_text((72, y), str(chapter), fontsize=10)
        page.insert_text((90, y), f"Chapter title number {chapter}", fontsize=10)
        y += 16
        for section in range(1, 5):
            page.insert_text((90, y), f"{chapter}.{section} A section of chapter {chapter} . . . . . {chapter * 10 + section}",
                             fontsize=10)
            y += 16
    joined = " ".join(_texts(doc.tobytes()))
    for chapter in range(1, 7):
        assert f"{chapter} Chapter title number {chapter}" in joined

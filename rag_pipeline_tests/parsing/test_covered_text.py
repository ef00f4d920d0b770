"""Text under a box drawn over it (parsing/pdf/covered_text.py): a PDF "redacted" by drawing a black
or white box over a passage still holds the passage in its text layer; the index must not hand
out what the page hides. Text drawn on top of a box, a panel drawn before its text, a
transparent highlight, a strikethrough and a frame drawn as an outline are seen and stay."""

from __future__ import annotations

from pathlib import Path

import pymupdf
import pytest

from rag_pipeline.parsing import parse_document

SECRET = "Witness: Jonathan Q. Example, 12 Harbour Road, Bristol."
VISIBLE = "The claimant's statement is on file with the registry."


def _pdf(draw) -> bytes:
    document = pymupdf.open()
    page = document.new_page()
    page.insert_text((72, 100), VISIBLE, fontsize=11)
    draw(page)
    return document.tobytes()


def _text(data: bytes) -> tuple[str, list[str]]:
    parsed = parse_document(data, "statement.pdf")
    return "\n".join(e.text for e in parsed.elements), parsed.warnings


@pytest.mark.parametrize("fill", [(0, 0, 0), (1, 1, 1), (0.2, 0.2, 0.2)], ids=["black", "white", "grey"])
def test_text_under_a_box_drawn_over_it_is_left_out_with_a_warning(fill: tuple[float, float, float]) -> None:
    def draw(page: pymupdf.Page) -> None:
        page.insert_text((72, 130), SECRET, fontsize=11)
        page.draw_rect(pymupdf.Rect(70, 118, 400, 134), color=None, fill=fill)  # drawn after the text

    text, warnings = _text(_pdf(draw))
    assert VISIBLE in text and "Jonathan" not in text and "Harbour" not in text
    assert len(warnings) == 1 and warnings[0].startswith("page 1: ") and "box drawn over them" in warnings[0]


def test_only_the_covered_words_go() -> None:
    def draw(page: pymupdf.Page) -> None:
        page.insert_text((72, 130), SECRET, fontsize=11)
        page.draw_rect(pymupdf.Rect(118, 118, 235, 134), color=None, fill=(0, 0, 0))  # over the name only

    text, _ = _text(_pdf(draw))
    assert "Witness:" in text and "Harbour Road, Bristol." in text and "Jonathan" not in text


@pytest.mark.parametrize("draw", [
    # a panel drawn before its text, and white text drawn on top of a dark box
    lambda page: (page.draw_rect(pymupdf.Rect(70, 118, 400, 134), color=None, fill=(0.9, 0.9, 1)),
                  page.insert_text((72, 130), SECRET, fontsize=11)),
    lambda page: (page.draw_rect(pymupdf.Rect(70, 118, 400, 134), color=None, fill=(0, 0, 0.4)),
                  page.insert_text((72, 130), SECRET, fontsize=11, color=(1, 1, 1))),
    # a highlight with transparency, a strikethrough and a frame (stroked) drawn after the text
    lambda page: (page.insert_text((72, 130), SECRET, fontsize=11),
                  page.draw_rect(pymupdf.Rect(70, 118, 400, 134), color=None, fill=(1, 1, 0), fill_opacity=0.4)),
    lambda page: (page.insert_text((72, 130), SECRET, fontsize=11),
                  page.draw_rect(pymupdf.Rect(70, 126, 400, 127.5), color=None, fill=(0, 0, 0))),
    lambda page: (page.insert_text((72, 130), SECRET, fontsize=11),
                  page.draw_rect(pymupdf.Rect(70, 118, 400, 134), color=(0, 0, 0), fill=None, width=1)),
], ids=["panel-before", "white-on-box", "transparent-highlight", "strikethrough", "frame"])
def test_text_a_reader_sees_stays(draw) -> None:
    text, warnings = _text(_pdf(draw))
    assert SECRET in text and warnings == []


def test_the_corpus_text_under_white_boxes_goes_and_its_diagrams_stay(corpus_dir: Path) -> None:
    # the Redbook's page 10 draws a diagram's boxes after the text around it: all of it stays;
    # page 5's yellow "Chapter 1." lies under a white box drawn after it: it goes
    path = corpus_dir / "docs" / "pdf" / "ibm_redbook_redp5110_sampled.pdf"
    parsed = parse_document(path.read_bytes(), path.name)
    pages = {e.page: [] for e in parsed.elements}
    for e in parsed.elements:
        pages[e.page].append(e.text)
    assert any("CREATE PERMISSION" in t for t in pages[10]) and any("Signed on as ALICE" in t for t in pages[11])
    # (the white "Front cover" and "Back cover" under boxes on pages 1 and 18 go as white text first)
    assert [w.split(":")[0] for w in parsed.warnings if "box drawn over them" in w] == ["page 5"]


def test_a_page_of_many_boxes_over_many_lines_hides_each() -> None:
    # hostile size: 45 lines, each with its own box drawn over its second half, on 40 pages
    document = pymupdf.open()
    for _ in range(40):
        page = document.new_page()
        for i in range(45):
            y = 60 + 16 * i
            kept = f"Line {i:02d} keeps this part "
            page.insert_text((72, y), f"{kept}SECRET{i:02d} HIDDEN", fontsize=11)
            start = 72 + pymupdf.get_text_length(kept, fontsize=11)
            page.draw_rect(pymupdf.Rect(start, y - 11, 400, y + 3), color=None, fill=(0, 0, 0))
    text, warnings = _text(document.tobytes())
    assert text.count("keeps this part") == 45 * 40 and "SECRET" not in text and "HIDDEN" not in text
    assert len(warnings) == 40

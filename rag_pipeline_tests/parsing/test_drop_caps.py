"""Drop caps (parsing/pdf/drop_caps.py): a paragraph whose first letter is set large beside its
first lines reads as the word it begins ("The company ..."), not as a one-letter paragraph or
heading "T" and a broken word "he"; large letters that begin nothing stay as they are. The PDFs
are written with the content stream operators a layout program uses."""

from __future__ import annotations

import pymupdf
import pytest

from rag_pipeline.chunking.chunks import chunk_elements
from rag_pipeline.parsing import parse_document

LINES = ("was founded in 1902 by three brothers who sold", "bicycles from a small shop near the harbour. Within a decade",
         "it had grown into the largest maker of frames in the region.")


def _pdf(cap: str, first: str, cap_size: int = 40, indent: int = 100, heading: bool = True) -> bytes:
    document = pymupdf.open()
    page = document.new_page()
    page.insert_text((72, 72), "x", fontsize=11)  # registers Helvetica as the page's font
    name = page.get_fonts()[0][4]
    rows = [f"BT /{name} 16 Tf 72 720 Td (Company History) Tj ET"] if heading else []
    rows.append(f"BT /{name} {cap_size} Tf 72 654 Td ({cap}) Tj ET")
    for n, text in enumerate((f"{first} {LINES[0]}", *LINES[1:])):
        rows.append(f"BT /{name} 11 Tf {indent} {680 - 13 * n} Td ({text}) Tj ET")
    rows.append(f"BT /{name} 11 Tf 72 641 Td (After the war the firm turned to motorcycles and later to cars.) Tj ET")
    document.update_stream(page.get_contents()[0], "\n".join(rows).encode("latin-1"))
    return document.tobytes()


def _paragraphs(data: bytes) -> list[str]:
    return [e.text for e in parse_document(data, "history.pdf").elements]


@pytest.mark.parametrize(("cap", "first", "reads"), [
    ("T", "he company", "The company was founded in 1902"),
    ("T", "HE COMPANY", "THE COMPANY was founded in 1902"),  # the rest of the word in small capitals
    ("I", "n the beginning the company", "In the beginning the company was founded"),
    ("A", "Company of brothers", "A Company of brothers was founded"),  # the letter is a word of its own
])
def test_a_drop_cap_is_read_as_the_start_of_its_word(cap: str, first: str, reads: str) -> None:
    elements = _paragraphs(_pdf(cap, first))
    assert elements[0] == "Company History"
    assert elements[1].startswith(reads), elements
    assert cap not in elements and f"{first} {LINES[0]}" not in elements[1][1:2 + len(first)]


def test_a_drop_cap_names_no_section_even_where_it_is_the_pages_largest_text(embedder) -> None:
    parsed = parse_document(_pdf("T", "he company", cap_size=48, heading=False), "history.pdf")
    chunks = chunk_elements(parsed.elements, embedder.count_tokens, embedder.max_tokens)
    assert all("T" not in c.section_path for c in chunks), [c.section_path for c in chunks]
    assert "The company was founded" in "\n".join(c.text for c in chunks)


@pytest.mark.parametrize(("cap_size", "indent"), [
    (14, 100),  # not large enough to be a drop cap: a letter of its own
    (40, 240),  # the text starts far right of the letter: a label, not the rest of a word
])
def test_a_large_letter_that_begins_nothing_is_left_alone(cap_size: int, indent: int) -> None:
    elements = _paragraphs(_pdf("Q", "uiet shops", cap_size=cap_size, indent=indent))
    assert not any(e.startswith("Quiet") for e in elements), elements
    assert any("uiet shops" in e for e in elements)


def test_a_page_of_many_drop_caps_joins_each_to_its_own_paragraph() -> None:
    # hostile: 30 drop caps on one page, each beside its own three lines
    document = pymupdf.open()
    page = document.new_page(height=30 * 60 + 100)
    page.insert_text((72, 72), "x", fontsize=11)
    name = page.get_fonts()[0][4]
    rows = []
    for k in range(30):
        base = 30 * 60 + 40 - 60 * k
        rows.append(f"BT /{name} 40 Tf 72 {base - 26} Td (T) Tj ET")
        rows.append(f"BT /{name} 11 Tf 100 {base} Td (he shop number {k:02d} sold bicycles) Tj ET")
        rows.append(f"BT /{name} 11 Tf 100 {base - 13} Td (and frames to the harbour town.) Tj ET")
    document.update_stream(page.get_contents()[0], "\n".join(rows).encode("latin-1"))
    text = "\n".join(_paragraphs(document.tobytes()))
    assert text.count("The shop number") == 30 and "\nhe shop" not in text and not text.startswith("he shop")

"""Issue 28, item 4: plain text parses without unstructured's partitioner, asking spaCy only
about the short lines that could be headings, to the same elements as the former path
(unstructured's partition_text, mapped and demoted as before) -- on real text files (the licence
and notice files of the installed packages, the corpus' Markdown read as text), seeded random
documents and hostile shapes."""

from __future__ import annotations

import importlib.metadata
import random
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from rag_pipeline.parsing import ParseError, parse_document
from rag_pipeline.parsing.config import ParseLimits
from rag_pipeline.parsing.office.elements import map_markup_elements
from rag_pipeline.parsing.office.fast_heuristics import fast_heuristics
from rag_pipeline.parsing.text_direct import guessed_text_elements
from rag_pipeline.parsing.worker import ParseWorker
from rag_pipeline_tests.conftest import CORPUS
from rag_pipeline_tests.helpers import parsed_in_a_fresh_process

Shape = list[tuple[str, str, int | None]]
LIMITS = ParseLimits(ocr=False)

LINES = [
    "Quarterly Results", "Revenue grew strongly", "project overview", "INTRODUCTION", "ÜBERSICHT DER KOSTEN", "TODO",
    "Intro", "What is the refund policy?", "Note: see below", "1.2 Scope and purpose", "A. General", "Step 1: install",
    "\u2022 milk", "- item one", "* starred", "\u25cf dot", "e bullet from OCR", "\u00b7", "-", "1. First step", "2) second",
    "john@example.com", "Doylestown, PA 18901", "----BREAK----", "2024", "APPROVED!", "Dear team,",
    "Please approve by Friday.", "Chapter 3.", "IV.", "Costs fell. Revenue rose. Margins widened.",
    "The committee reviewed the budget and approved it after a long discussion about the costs.",
    "Shopping list:\n\u2022 milk\n\u2022 bread", "Apache License\nVersion 2.0, January 2004\nhttp://www.apache.org/licenses/",
    "a line\nbroken across\nseveral lines of text that go on", "R\u00e9sum\u00e9 des co\u00fbts", "\u6210\u672c\u6982\u89c8",
    "\u0418\u0442\u043e\u0433\u0438 \u0433\u043e\u0434\u0430", "x" * 500, "\t  indented line  ", "a\x00b\x0bc",
    "\u202eevil override", "Revenue\u00a0grew", "tab\tseparated\tvalues here",
]
SEPARATORS = ["\n\n", "\n", "\n\n\n", "\r\n\r\n", " \n \n", "\n\f\n"]


@pytest.fixture(scope="module")
def former() -> Iterator[Callable[[str, int], Shape]]:
    """The former path: partition_text with the shortcut the project installed for it (a block
    over 400 characters or 12 words is narrative), map_markup_elements, and a guessed heading
    that ends as a sentence made a paragraph (the rule map_guessed_text_elements applied)."""
    import re

    import unstructured.partition.text as partition

    original = partition.is_possible_narrative_text

    def narrative(text: str, *args: object, **kwargs: object) -> bool:
        return True if len(text) > 400 or len(text.split(" ")) > 12 else original(text, *args, **kwargs)

    sentence_end = re.compile(r"[.!;,]\s*$")
    number_end = re.compile(r"(?:^|\s)(?:\d+(?:\.\d+)*|[IVXLCivxlc]+)\.\s*$")

    def parse(text: str, offset: int = 0) -> Shape:
        with fast_heuristics():
            elements = map_markup_elements(partition.partition_text(text=text, languages=[""]), offset)
        for element in elements:
            if element.kind == "heading" and sentence_end.search(element.text) and not number_end.search(element.text):
                element.kind, element.level = "paragraph", None
        return [(e.kind, e.text, e.level) for e in elements]

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(partition, "is_possible_narrative_text", narrative)
        yield parse


def _direct(text: str, offset: int = 0) -> Shape:
    return [(e.kind, e.text, e.level) for e in guessed_text_elements(text, offset)]


def _package_text_files() -> list[Path]:
    """Licence, notice and author files of the installed distributions: real plain text written
    by many hands (headings, numbered clauses, indented lists, ASCII art), every 6th by name."""
    names = ("LICENSE", "LICENCE", "COPYING", "NOTICE", "AUTHORS")
    found = {
        Path(str(file.locate()))
        for dist in importlib.metadata.distributions()
        for file in dist.files or []
        if file.name.upper().startswith(names) and Path(file.name).suffix.lower() in ("", ".txt", ".md", ".rst")
    }
    return sorted(p for p in found if p.is_file())[::6]


def test_real_text_files_parse_to_the_former_elements(former: Callable[[str, int], Shape]) -> None:
    files = _package_text_files()
    files += sorted(CORPUS.joinpath("docs", "md").glob("*.md"))
    assert len(files) >= 60
    compared = 0
    for path in files:
        text = path.read_text(encoding="utf-8", errors="replace")
        if text.strip():
            assert _direct(text) == former(text, 0), path
            compared += 1
    assert compared >= 60


def test_random_documents_of_hostile_lines_parse_to_the_former_elements(former: Callable[[str, int], Shape]) -> None:
    """Seeded random documents of lines chosen where the types differ (bullets, numbered lines,
    e-mail and address lines, short headings with and without a verb, sentence ends, CJK, control
    characters) under every paragraph separator, at the heading levels of e-mail parts too."""
    rng = random.Random(28)
    for _ in range(200):
        text = "".join(rng.choice(LINES) + rng.choice(SEPARATORS) for _ in range(rng.randint(1, 25)))
        offset = rng.choice([0, 0, 1, 3])
        assert _direct(text, offset) == former(text, offset), repr(text)


def test_a_long_document_parses_to_the_former_elements_and_keeps_every_paragraph(
        former: Callable[[str, int], Shape]) -> None:
    rng = random.Random(4)
    words = "the report shows that revenue grew in each quarter while costs fell across all regions".split()
    blocks = [f"Section {i // 10} Overview" if i % 10 == 0 else
              " ".join(rng.choice(words) for _ in range(rng.randint(3, 40))) + rng.choice([".", "", "!", ":"])
              for i in range(2_000)]
    text = "\n\n".join(blocks)
    direct = _direct(text)
    assert direct == former(text, 0)
    assert len(direct) == 2_000
    assert sum(kind == "heading" for kind, _, _ in direct) >= 200


def test_headings_are_still_guessed_by_the_language_model_where_only_it_can_tell() -> None:
    """A short line without a verb is a heading, one with a verb is not; neither ends as a sentence,
    so only spaCy's tagger tells them apart (as it did before)."""
    elements = parse_document(b"Quarterly Results\n\nRevenue grew strongly\n\nThe board met on Monday and "
                              b"approved the plan for the next year.\n", "notes.txt", LIMITS).elements
    assert [(e.kind, e.text) for e in elements] == [
        ("heading", "Quarterly Results"), ("paragraph", "Revenue grew strongly"),
        ("paragraph", "The board met on Monday and approved the plan for the next year.")]


def test_text_without_possible_headings_loads_neither_spacy_nor_a_partitioner() -> None:
    """Lines that end as sentences, bullets and long paragraphs are typed without a language
    model: parsing them loads no spaCy, no torch and no unstructured partitioner."""
    kinds, modules = parsed_in_a_fresh_process(
        b"The plan was approved.\n\n- first item\n- second item\n\nCosts fell by 4 percent in the quarter, and the "
        b"board expects them to fall again next year.\n", "a.txt")
    assert kinds == ["paragraph", "list_item", "list_item", "paragraph"]
    partitioners = {f"unstructured.partition.{kind}" for kind in ("text", "html", "md", "docx", "pdf")}
    assert sorted(m for m in modules if m.split(".")[0] in ("spacy", "torch", "pymupdf") or m in partitioners) == []


def test_a_parser_that_met_only_text_has_not_loaded_pymupdf() -> None:
    """The parser process loads the text stack (spaCy) untimed before the first text file, and
    not PyMuPDF or the office partitioners: a sync of edited notes does not pay for them. A PDF
    after it still parses."""
    pdf = next(CORPUS.joinpath("docs", "pdf").glob("*.pdf"))
    with ParseWorker(ParseLimits(ocr=False)) as worker:
        parsed = worker.parse(b"Quarterly Results\n\nRevenue grew by four percent.\n", "notes.txt")
        assert [e["kind"] for e in parsed["elements"]] == ["heading", "paragraph"]
        maps = Path(f"/proc/{worker._proc.pid}/maps").read_text(encoding="utf-8")
        assert "mupdf" not in maps.lower()
        assert worker.parse(pdf.read_bytes(), pdf.name)["elements"]
        assert worker.starts == 1


@pytest.mark.parametrize("data, reason", [
    (b"\xff\xfe\x00\xd8", "UTF-16"),  # a lone surrogate after a UTF-16 byte-order mark
    (b"caf\xe9 " * 10, "UTF-8"),
    (b"\x00" * 64, "UTF-16 without a byte-order mark"),
])
def test_broken_text_is_refused_with_what_to_do(data: bytes, reason: str) -> None:
    with pytest.raises(ParseError, match=reason):
        parse_document(data, "broken.txt", LIMITS)


def test_a_huge_single_paragraph_is_one_paragraph_without_a_language_model() -> None:
    text = ("word " * 400_000).encode()  # 2 MB on one line
    [element] = parse_document(text, "huge.txt", LIMITS).elements
    assert element.kind == "paragraph" and len(element.text) == 2_000_000 - 1

"""DOCX, PPTX, HTML, Markdown, text and e-mail parsing on real documents from the shared corpus.

The assertions are about what the cleaner and chunker rely on: heading levels that rebuild the
real outline, tables as Markdown with a header row, running headers/footers typed as such,
slide numbers on slide content, and HTML pages reduced to their main content."""

from __future__ import annotations

import io
import re
from collections import Counter
from io import BytesIO
from pathlib import Path

import pytest
from lxml import html as lxml_html

from rag_pipeline.parsing import ParsedDocument, parse_document
from rag_pipeline.parsing.config import ParseLimits
from rag_pipeline.parsing.office import (
    html_table_to_markdown,
    normalize_md_table_delimiters,
    parse_with_unstructured,
)
from rag_pipeline.parsing.types import Element


def _parse(corpus_dir: Path, relative: str) -> ParsedDocument:
    return parse_document((corpus_dir / "docs" / relative).read_bytes(), Path(relative).name)


def _headings(doc: ParsedDocument) -> list[tuple[int | None, str]]:
    return [(e.level, e.text) for e in doc.elements if e.kind == "heading"]


def _texts(doc: ParsedDocument, kind: str) -> list[str]:
    return [e.text for e in doc.elements if e.kind == kind]


def _assert_contract(doc: ParsedDocument) -> None:
    """What every parsed document owes the rest of the pipeline."""
    assert doc.parser.startswith("unstructured-")
    for element in doc.elements:
        assert element.text.strip(), element
        assert (element.level is not None) == (element.kind == "heading"), element
        if element.kind == "heading":
            assert 1 <= element.level <= 6
        if element.kind == "table":
            _assert_markdown_table(element.text)


def _assert_markdown_table(text: str) -> None:
    lines = text.split("\n")
    assert len(lines) >= 2 and re.fullmatch(r"\|(---\|)+", lines[1]), text
    width = lines[1].count("---")
    for line in [lines[0], *lines[2:]]:
        assert line.startswith("| ") and line.endswith(" |"), line
        assert len(re.split(r"(?<!\\)\|", line)) - 2 == width, line


# --------------------------------------------------------------------------- DOCX


@pytest.fixture(scope="module")
def word_sample(corpus_dir: Path) -> ParsedDocument:
    return _parse(corpus_dir, "docx/docling_word_sample.docx")


def test_docx_heading_styles_become_levels(word_sample: ParsedDocument) -> None:
    _assert_contract(word_sample)
    headings = _headings(word_sample)
    assert (1, "Swimming in the lake") in headings  # Title style
    assert (2, "Summer activities") in headings  # Subtitle style
    assert (1, "Let’s swim!") in headings  # Heading 1
    assert (2, "Let’s eat") in headings  # Heading 2
    assert all(e.page is None for e in word_sample.elements)  # Word pages are not stable


def test_docx_lists_caption_and_paragraphs(word_sample: ParsedDocument) -> None:
    items = _texts(word_sample, "list_item")
    assert "Paddle about" in items and "Enjoy summer warmth" in items
    assert any(item.endswith("Use sun cream") for item in items)
    assert _texts(word_sample, "caption") == ["Figure 1: This is a cute duckling"]
    assert any(p.startswith("To get started with swimming") for p in _texts(word_sample, "paragraph"))


def test_docx_table_is_markdown_with_header_row(word_sample: ParsedDocument) -> None:
    (table,) = _texts(word_sample, "table")
    lines = table.split("\n")
    assert lines[0] == "|  | Food | Calories per portion |"
    assert lines[1] == "|---|---|---|"
    assert "| Leaves | Ash, Elm, Maple | 50 |" in lines
    assert "| Grain | Corn, Buckwheat, Barley | 200 |" in lines


def test_docx_header_and_footer_parts_are_typed(corpus_dir: Path) -> None:
    doc = _parse(corpus_dir, "docx/docling_header_footer_first_page.docx")
    _assert_contract(doc)
    assert sorted(_texts(doc, "page_header")) == ["FIRST PAGE HEADER (page 1 only)", "REGULAR HEADER (page 2 onward)"]
    assert sorted(_texts(doc, "page_footer")) == ["FIRST PAGE FOOTER (page 1 only)", "REGULAR FOOTER (page 2 onward)"]
    assert _headings(doc) == [(1, "Page header/footer regression fixture"), (2, "Page 2")]
    body = " ".join(_texts(doc, "paragraph"))
    assert "body text on page 1" in body and "HEADER" not in body and "FOOTER" not in body


def test_docx_870_page_handbook_parses_fast_with_its_outline(corpus_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """~2 s here (unstructured alone: ~18 s, almost all of it the part-of-speech tagger guessing
    NarrativeText vs Text, an answer this mapping throws away). What keeps it fast, counted
    rather than timed: the tagger never runs on the handbook's paragraphs."""
    from unstructured.partition import docx as unstructured_docx
    from unstructured.partition import text_type

    tagged: list[str] = []
    real_pos_tag = text_type.pos_tag
    monkeypatch.setattr(text_type, "pos_tag", lambda text: tagged.append(text) or real_pos_tag(text))
    doc = _parse(corpus_dir, "docx/doj_ust_chapter13_trustee_handbook_2012.docx")
    _assert_contract(doc)
    assert tagged == [], f"the tagger ran on {len(tagged)} paragraphs"
    # the count sees the slow path: outside our parse call unstructured's heuristic tags the text
    unstructured_docx.is_possible_narrative_text("Chapter thirteen trustee handbook")
    assert tagged == ["Chapter thirteen trustee handbook"]
    levels = Counter(level for level, _ in _headings(doc))
    assert levels[1] >= 10 and levels[2] >= 50 and levels[3] >= 100
    assert len(_texts(doc, "paragraph")) > 4000
    assert _texts(doc, "page_footer") and len(_texts(doc, "table")) >= 1


def test_docx_shortcut_does_not_change_the_result(corpus_dir: Path) -> None:
    """The spaCy shortcut must be invisible in the output: compare against unstructured's own
    partition_docx (outside our parse call the shortcut is inactive, so this is the slow path)."""
    from unstructured.partition.docx import partition_docx

    from rag_pipeline.parsing.office.docx_wrappers import read_as_shown
    from rag_pipeline.parsing.office.elements import map_docx_element

    for name in ("docling_word_sample.docx", "docling_header_footer_first_page.docx"):
        data = (corpus_dir / "docs" / "docx" / name).read_bytes()
        fast = parse_document(data, name)
        raw = partition_docx(file=io.BytesIO(read_as_shown(data)[0]), include_page_breaks=False)  # the same bytes
        slow = [el for item in raw for el in map_docx_element(item)]
        assert [(e.kind, e.text, e.level) for e in fast.elements] == [(e.kind, e.text, e.level) for e in slow]


# --------------------------------------------------------------------------- PPTX


def test_pptx_slide_titles_are_headings_with_slide_numbers(corpus_dir: Path) -> None:
    doc = _parse(corpus_dir, "pptx/unstructured_sample_presentation.pptx")
    _assert_contract(doc)
    assert doc.page_count == 4
    level_one = [(e.page, e.text) for e in doc.elements if e.kind == "heading" and e.level == 1]
    assert level_one == [
        (1, "Title Slide"),
        (2, "This is the first content slide"),
        (3, "This is the second content slide"),
        (4, "This is kinda backwards, huh?"),
    ]
    assert (2, "With a subtitle") in _headings(doc)
    assert all(e.page in (1, 2, 3, 4) for e in doc.elements)
    pages = [e.page for e in doc.elements]
    assert pages == sorted(pages)


def test_pptx_title_comes_before_content_placed_above_it(corpus_dir: Path) -> None:
    """Slide 4 has its table above the title; the heading must still open the slide."""
    doc = _parse(corpus_dir, "pptx/unstructured_sample_presentation.pptx")
    slide4 = [e for e in doc.elements if e.page == 4]
    assert [e.kind for e in slide4] == ["heading", "table"]
    assert slide4[1].text.split("\n")[0] == "| Table | A | B | C |"
    assert "| 2 | A2 | B2 | C2 |" in slide4[1].text


def test_pptx_table_and_numbered_lists(corpus_dir: Path) -> None:
    doc = _parse(corpus_dir, "pptx/docling_powerpoint_sample.pptx")
    _assert_contract(doc)
    assert doc.page_count == 3
    assert (1, 1, "Test Table Slide") in [(e.page, e.level, e.text) for e in doc.elements if e.kind == "heading"]
    assert (2, 1, "Second slide title") in [(e.page, e.level, e.text) for e in doc.elements if e.kind == "heading"]
    (table,) = [e for e in doc.elements if e.kind == "table"]
    assert table.page == 1
    assert table.text.startswith("|  | Class1 |")
    assert "| R1 | True | False |" in table.text
    # auto-numbered paragraphs are list items, not the short "titles" unstructured guesses
    items = [(e.page, e.text) for e in doc.elements if e.kind == "list_item"]
    assert (3, "List item4") in items and (3, "List1") in items and (3, "Item A") in items


def test_pptx_speaker_notes_are_read_after_their_slide_on_its_page() -> None:
    """Notes often hold what a slide only hints at; unstructured left them out unless asked, and
    yields them before the slide's shapes."""
    from pptx import Presentation

    deck = Presentation()
    slide = deck.slides.add_slide(deck.slide_layouts[1])
    slide.shapes.title.text = "Retention schedule"
    slide.placeholders[1].text = "Payroll records: 7 years"
    slide.notes_slide.notes_text_frame.text = ("The seven years start at the end of the tax year\n"
                                               "in which the payment was made.")
    emptied = deck.slides.add_slide(deck.slide_layouts[1])
    emptied.shapes.title.text = "Next steps"
    emptied.placeholders[1].text = "Review in Q3"
    emptied.notes_slide.notes_text_frame.text = "   "  # a notes page whose text was deleted
    buffer = BytesIO()
    deck.save(buffer)
    doc = parse_document(buffer.getvalue(), "deck.pptx")
    assert [(e.kind, e.page, e.text[:24]) for e in doc.elements] == [
        ("heading", 1, "Retention schedule"),
        ("paragraph", 1, "Payroll records: 7 years"),
        ("paragraph", 1, "The seven years start at"),
        ("heading", 2, "Next steps"),
        ("paragraph", 2, "Review in Q3"),
    ]
    assert "tax year in which the payment" in " ".join(doc.elements[2].text.split())


def test_pptx_slide_without_title_placeholder_gets_its_text_box_title(corpus_dir: Path) -> None:
    doc = _parse(corpus_dir, "pptx/nasa_gsfc_science_exploration_1slide.pptx")
    _assert_contract(doc)
    assert doc.elements[0] == Element("heading", "GSFC: Sciences and Exploration Directorate", page=1, level=1)
    assert "Code 610: Earth Sciences Division" in _texts(doc, "list_item")


# --------------------------------------------------------------------------- Markdown


@pytest.fixture(scope="module")
def openapi(corpus_dir: Path) -> ParsedDocument:
    return _parse(corpus_dir, "md/openapi_spec_3.0.3.md")


def test_markdown_deep_heading_hierarchy(openapi: ParsedDocument) -> None:
    _assert_contract(openapi)
    headings = _headings(openapi)
    assert headings[0] == (1, "OpenAPI Specification")
    assert (2, "Specification") in headings
    assert (3, "Schema") in headings
    assert (4, "OpenAPI Object") in headings
    assert (5, "Fixed Fields") in headings
    assert (6, "Composition and Inheritance (Polymorphism)") in headings
    assert {level for level, _ in headings} == {1, 2, 3, 4, 5, 6}


def test_markdown_tables_are_intact_rows(openapi: ParsedDocument, corpus_dir: Path) -> None:
    source = (corpus_dir / "docs" / "md" / "openapi_spec_3.0.3.md").read_text(encoding="utf-8")
    delimiter_rows = [line for line in source.splitlines() if re.match(r"^\|?\s*:?-{3,}:?\s*\|", line)]
    tables = _texts(openapi, "table")
    assert len(tables) == len(delimiter_rows) == 39
    formats = next(t for t in tables if t.startswith("| type | format | Comments |"))
    assert "| integer | int32 | signed 32 bits |" in formats.split("\n")
    # `a | b` over `---|:---|:---|`: GitHub renders it, python-markdown needs the row rewritten
    runtime = next(t for t in tables if t.startswith("| Source Location | example expression | notes |"))
    assert "| HTTP Method | $method |" in runtime
    # a pipe inside a cell stays escaped, so the row keeps its three columns
    assert any("Schema Object \\| Reference Object" in t for t in tables)


def test_markdown_code_blocks_are_code(openapi: ParsedDocument) -> None:
    code = _texts(openapi, "code")
    assert any('"title": "Sample Pet Store App"' in c for c in code)
    assert not any("Sample Pet Store App" in p for p in _texts(openapi, "paragraph"))


def test_md_delimiter_normalisation_leaves_code_fences_alone() -> None:
    text = "a | b\n---|---|\n\n```\nx | y\n---|---|\n```\n"
    assert normalize_md_table_delimiters(text) == "a | b\n--- | ---\n\n```\nx | y\n---|---|\n```\n"


# --------------------------------------------------------------------------- HTML

_BLOCK_TAGS = ("p", "li", "h1", "h2", "h3", "h4", "h5", "h6", "pre", "td", "dd", "blockquote")


def _words(text: str) -> str:
    return " ".join(re.findall(r"\w+", text.lower()))


def _html_blocks(data: bytes) -> list[str]:
    """Text blocks of a page, read independently of the code under test (plain lxml). A <pre>
    block's blocks are its paragraphs (text between blank lines): an Internet-Draft's <pre> is a
    printed page, whose running header and footer the parser leaves out (paginated_text.py)."""
    root = lxml_html.document_fromstring(data.decode("utf-8"))
    for node in root.xpath("//script | //style | //noscript"):
        node.drop_tree()
    texts = (re.split(r"\n\s*\n", node.text_content()) if node.tag == "pre" else [node.text_content()]
             for node in root.iter(*_BLOCK_TAGS))
    blocks = (_words(text) for group in texts for text in group)
    return [b for b in blocks if len(b) >= 30]


@pytest.mark.parametrize(
    "page",
    [
        "readability_aktualne_cz",
        "readability_heise_de",
        "readability_ietf_draft_remotestorage",
        "readability_wikipedia_mozilla_en",
    ],
)
def test_html_keeps_main_content_and_drops_boilerplate(corpus_dir: Path, page: str) -> None:
    source = (corpus_dir / "docs" / "html" / f"{page}.source.html").read_bytes()
    expected = (corpus_dir / "docs" / "html" / f"{page}.expected.html").read_bytes()
    doc = parse_document(source, f"{page}.html")
    _assert_contract(doc)
    output = _words(" ".join(e.text for e in doc.elements))
    expected_words = _words(lxml_html.document_fromstring(expected.decode("utf-8")).text_content())
    blocks = _html_blocks(expected)
    wanted = [b for b in blocks if blocks.count(b) < 3]  # a block printed on every page is a running header
    boilerplate = [b for b in _html_blocks(source) if b not in expected_words]
    kept = sum(b in output for b in wanted) / len(wanted)
    leaked = sum(b in output for b in boilerplate) / max(1, len(boilerplate))
    assert kept >= 0.9, f"only {kept:.0%} of the main content kept"
    assert leaked <= 0.15, f"{leaked:.0%} of the boilerplate blocks leaked"


def test_html_news_page_keeps_headline_and_figure_caption(corpus_dir: Path) -> None:
    doc = _parse(corpus_dir, "html/readability_heise_de.source.html")
    assert _headings(doc) == [(1, "1Password für Mac generiert Einmal-Passwörter")]
    assert doc.elements[1].kind == "heading"  # after the article's date line, before its body
    assert _texts(doc, "caption") == ["1Password scannt auch QR-Codes. (Bild: Hersteller)"]
    text = " ".join(e.text for e in doc.elements)
    assert "Meistgelesen" not in text and "Impressum" not in text and "doubleclick" not in text


def test_html_article_headline_outside_the_article_block_is_kept(corpus_dir: Path) -> None:
    doc = _parse(corpus_dir, "html/readability_aktualne_cz.source.html")
    assert doc.elements[0] == Element(
        "heading", "West Ham hrozí gigantům, okouzlil i Linekera. Součka je snadné přehlédnout", level=1
    )
    assert "Nejnovější zprávy do e-mailu" not in " ".join(e.text for e in doc.elements)


def test_html_wikipedia_heading_levels_and_no_language_menu(corpus_dir: Path) -> None:
    doc = _parse(corpus_dir, "html/wikipedia_de_deutschland.html")
    _assert_contract(doc)
    headings = _headings(doc)
    assert headings[0] == (1, "Deutschland")
    assert (2, "Geographie") in headings and (3, "Physische Geographie") in headings and (4, "Klima") in headings
    text = " ".join(e.text for e in doc.elements)
    assert "Alemannisch" not in text and "Afrikaans" not in text  # interlanguage links
    infobox = next(t for t in _texts(doc, "table") if "| Hauptstadt | Berlin |" in t)
    assert "| Amtssprache | Deutsch" in infobox


def test_sec_10k_tables_are_clean_markdown(corpus_dir: Path) -> None:
    doc = _parse(corpus_dir, "html/sec_10k_galaxy_gaming_2021.html")
    _assert_contract(doc)
    tables = _texts(doc, "table")
    assert len(tables) >= 40
    revenue = next(t for t in tables if "| North America and Caribbean |" in t)
    assert revenue.split("\n") == [
        "|  | 2021 | 2020 |",
        "|---|---|---|",
        "| North America and Caribbean | $ 10,024,537 | $ 5,757,143 |",
        "| Europe, Middle East and Africa | 9,959,841 | 4,473,173 |",
        "| Total revenue | $ 19,984,378 | $ 10,230,316 |",
    ]
    assert any(t.startswith("| Title of each class | Trading symbol |") for t in tables)
    # bullet lists laid out as two-column tables are list items, not tables
    assert "Expand the number of markets we serve;" in _texts(doc, "list_item")
    text = " ".join(e.text for e in doc.elements)
    assert "xbrli" not in text.lower() and "FORM 10-K" in text


def test_html_table_helper_escapes_pipes_and_expands_spans() -> None:
    markdown = html_table_to_markdown(
        "<table><tr><th>Name</th><th colspan='2'>Range</th></tr>"
        "<tr><td rowspan='2'>a|b</td><td>1</td><td>2</td></tr><tr><td>3</td><td>4</td></tr>"
        "<tr><td></td><td></td><td></td></tr></table>"
    )
    assert markdown.split("\n") == [
        "| Name | Range |  |",
        "|---|---|---|",
        "| a\\|b | 1 | 2 |",
        "| a\\|b | 3 | 4 |",  # a row label spanning rows says whose each row is
    ]
    assert html_table_to_markdown("<p>no table</p>") == ""


# --------------------------------------------------------------------------- text and e-mail


def test_plain_text_paragraphs_lists_and_headings(corpus_dir: Path) -> None:
    doc = _parse(corpus_dir, "scanned/linn_two_column_brochure_scan.groundtruth.txt")
    _assert_contract(doc)
    assert len(_texts(doc, "paragraph")) >= 3
    synthetic = parse_document(
        b"Travel Policy\n\nAll trips abroad must be approved by the head of department before booking.\n\n"
        b"- book economy class\n- keep all receipts\n",
        "policy.txt",
    )
    assert [(e.kind, e.text) for e in synthetic.elements] == [
        ("heading", "Travel Policy"),
        ("paragraph", "All trips abroad must be approved by the head of department before booking."),
        ("list_item", "book economy class"),
        ("list_item", "keep all receipts"),
    ]


_EML = b"""From: Alice Example <alice@example.com>
To: Bob <bob@example.com>
Subject: =?utf-8?q?Quarterly_report_=C3=BCber_Q3?=
Date: Mon, 3 Mar 2025 10:00:00 +0000
Message-ID: <1@example.com>
MIME-Version: 1.0
Content-Type: multipart/mixed; boundary="OUTER"

--OUTER
Content-Type: multipart/alternative; boundary="XX"

--XX
Content-Type: text/plain; charset=utf-8

Hi Bob,

Revenue grew by twelve percent compared with the last quarter, mostly from the new product line.

--XX
Content-Type: text/html; charset=utf-8

<html><body><h2>Summary</h2>
<p>Revenue grew by twelve percent compared with the last quarter, mostly from the new product line.</p>
<table><tr><th>Region</th><th>Growth</th></tr><tr><td>EMEA</td><td>14%</td></tr></table></body></html>
--XX--
--OUTER
Content-Type: text/plain; name="secret.txt"
Content-Disposition: attachment; filename="secret.txt"

ATTACHMENT_TEXT_MUST_NOT_BE_INDEXED_HERE
--OUTER--
"""


def test_email_subject_heading_body_and_no_attachments() -> None:
    doc = parse_document(_EML, "report.eml")
    _assert_contract(doc)
    assert doc.elements[0] == Element("heading", "Quarterly report über Q3", level=1)
    assert (3, "Summary") in _headings(doc)  # an <h2> in the body sits below the subject
    assert any("Revenue grew by twelve percent" in p for p in _texts(doc, "paragraph"))
    assert _texts(doc, "table") == ["| Region | Growth |\n|---|---|\n| EMEA | 14% |"]
    assert not any("ATTACHMENT_TEXT" in e.text for e in doc.elements)


def test_parse_with_unstructured_direct_call_wraps_library_errors() -> None:
    from rag_pipeline.parsing.types import ParseError

    with pytest.raises(ParseError, match=r"^could not read this PowerPoint \(\.pptx\) file: "):
        parse_with_unstructured(b"PK\x03\x04 not really", name="x.pptx", kind="pptx", limits=ParseLimits())

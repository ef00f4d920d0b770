"""Superscript digits against the figure or word before them (parsing/superscripts.py), in every
format that marks them: PDF (PyMuPDF's span flag), DOCX (`w:vertAlign`), HTML (`<sup>`). Before,
NIST's Cybersecurity Framework read "Cybersecurity Enhancement Act of 20141" and "ISO
31000:20096": figures the document never states, which search and the citation checker then
matched claims against."""

from __future__ import annotations

import io
import time
from pathlib import Path

import docx
import pymupdf
import pytest

from rag_pipeline.parsing import parse_document
from rag_pipeline.parsing.superscripts import marked


def _text(data: bytes, name: str) -> str:
    return "\n".join(e.text for e in parse_document(data, name).elements)


@pytest.mark.parametrize(("before", "superscript", "shown"), [
    ("USD 1,234", "1", "^1"),  # a footnote marker after an amount
    ("10", "6", "^6"),  # an exponent
    ("Commission", "3", "^3"),  # a note after a word
    ("postupem", "112)", "^112)"),  # a Czech law's note, with its parenthesis
    ("the 1", "st", "st"),  # an ordinal
    ("word ", "3", "3"),  # after a space: already apart
    ("US$500", "[29]", "[29]"),  # Wikipedia's bracketed reference
    ("", "2", "2"),  # at the start of a paragraph
    ("x", "", ""),
])
def test_a_superscript_is_marked_only_where_it_would_run_into_what_is_before_it(before: str, superscript: str, shown: str) -> None:
    assert marked(before, superscript) == shown


def test_nist_framework_years_and_standards_read_as_printed(corpus_dir: Path) -> None:
    path = corpus_dir / "docs" / "pdf" / "nist_csf_v1.1_2018-04-16.pdf"
    text = _text(path.read_bytes(), path.name)
    assert "Cybersecurity Enhancement Act of 2014^1" in text
    assert "issued in February 2013^3" in text
    assert "Act of 20141" not in text and "February 20133" not in text


def _pdf(pieces: list[tuple[str, bool]]) -> bytes:
    """One line of text; each (text, superscript) piece set 5 pt higher in a smaller size when
    raised, as a typesetter sets a footnote mark."""
    document = pymupdf.open()
    page = document.new_page()
    x = 72.0
    for text, raised in pieces:
        size = 7 if raised else 11
        page.insert_text((x, 95 if raised else 100), text, fontsize=size)
        x += pymupdf.get_text_length(text, fontsize=size)
    return document.tobytes()


def test_pdf_superscripts_keep_figures_apart_and_ordinals_whole() -> None:
    text = _text(_pdf([("Revenue reached USD 1,234", False), ("1", True), (" in 2021, at most 10", False),
                       ("12", True), (" units, the 1", False), ("st", True), (" quarter.", False)]), "f.pdf")
    assert text == "Revenue reached USD 1,234^1 in 2021, at most 10^12 units, the 1st quarter."


def _docx(paragraphs: list[list[tuple[str, str | None]]], header: list[tuple[str, str | None]] | None = None) -> bytes:
    """Paragraphs of (text, "superscript" | "subscript" | None) runs."""
    document = docx.Document()
    for runs in paragraphs:
        paragraph = document.add_paragraph()
        for text, align in runs:
            run = paragraph.add_run(text)
            run.font.superscript = align == "superscript"
            run.font.subscript = align == "subscript"
    if header:
        paragraph = document.sections[0].header.paragraphs[0]
        for text, align in header:
            paragraph.add_run(text).font.superscript = align == "superscript"
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()


def test_docx_superscripts_keep_figures_apart_and_ordinals_whole() -> None:
    data = _docx([
        [("Revenue reached USD 1,234", None), ("1", "superscript"), (" in 2021.", None)],
        # Word splits one superscript over runs at will (spell check, revisions): marked once
        [("At most 10", None), ("1", "superscript"), ("2", "superscript"), (" units in the 1", None), ("st", "superscript"),
         (" quarter, CO", None), ("2", "subscript"), (" included.", None)],
        [("1", "superscript"), (" A note that starts its paragraph.", None)],
    ], header=[("Policy 2026", None), ("4", "superscript")])
    text = _text(data, "f.docx")
    assert "Revenue reached USD 1,234^1 in 2021." in text
    assert "At most 10^12 units in the 1st quarter, CO2 included." in text
    assert "1 A note that starts its paragraph." in text
    assert "Policy 2026^4" in text


def test_docx_without_superscripts_is_read_byte_for_byte_as_before() -> None:
    data = _docx([[("Revenue reached USD 1,234 in 2021, CO", None), ("2", "subscript"), (" included.", None)]])
    from rag_pipeline.parsing.office.docx_wrappers import read_as_shown

    assert read_as_shown(data) == (data, 0, 0)


def test_pptx_superscripts_on_slides_and_in_notes_keep_figures_apart() -> None:
    from pptx import Presentation
    from pptx.util import Inches

    deck = Presentation()
    slide = deck.slides.add_slide(deck.slide_layouts[5])
    slide.shapes.title.text = "Results 2026"
    paragraph = slide.shapes.add_textbox(Inches(1), Inches(2), Inches(6), Inches(1)).text_frame.paragraphs[0]
    for text, baseline in [("Revenue USD 1,234", None), ("1", "30000"), (", at most 10", None), ("6", "30000"),
                           (" units, CO", None), ("2", "-25000"), (", the 1", None), ("st", "30000"), (" quarter", None)]:
        run = paragraph.add_run()
        run.text = text
        if baseline:
            run.font._rPr.set("baseline", baseline)
    notes = slide.notes_slide.notes_text_frame.paragraphs[0]
    for text, baseline in [("Source: Act of 2014", None), ("3", "30000")]:
        run = notes.add_run()
        run.text = text
        if baseline:
            run.font._rPr.set("baseline", baseline)
    out = io.BytesIO()
    deck.save(out)
    text = _text(out.getvalue(), "d.pptx")
    assert "Revenue USD 1,234^1, at most 10^6 units, CO2, the 1st quarter" in text
    assert "Source: Act of 2014^3" in text


def test_pptx_without_superscripts_passes_byte_for_byte_and_a_broken_slide_is_refused_by_name() -> None:
    import zipfile

    from pptx import Presentation

    from rag_pipeline.parsing.office.superscript_runs import pptx_marked
    from rag_pipeline.parsing.types import ParseError

    deck = Presentation()
    deck.slides.add_slide(deck.slide_layouts[5]).shapes.title.text = "Results 2026"
    plain = io.BytesIO()
    deck.save(plain)
    assert pptx_marked(plain.getvalue()) == plain.getvalue()
    broken = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(plain.getvalue())) as source, zipfile.ZipFile(broken, "w") as target:
        for info in source.infolist():
            data = source.read(info.filename)
            if info.filename == "ppt/slides/slide1.xml":  # a raised run, then the part cut off mid-tag
                data = data.replace(b"<a:t>", b'<a:rPr baseline="30000"/><a:t>', 1)[: len(data) // 2]
            target.writestr(info, data)
    with pytest.raises(ParseError, match="could not read this"):
        parse_document(broken.getvalue(), "broken.pptx")


def test_html_sup_keeps_figures_apart_and_references_as_they_are(corpus_dir: Path) -> None:
    page = ("<html><body><main><h1>Results</h1><p>Revenue of USD 1,234<sup>1</sup> in 2021; 10<sup>6</sup> units; "
            "the 1<sup>st</sup> quarter; <b>x</b><sup>2</sup>; Act of 2014<sup><a href='#n1'>1</a></sup>; "
            "H<sub>2</sub>O; a word <sup>3</sup>.</p></main></body></html>")
    assert _text(page.encode(), "p.html").splitlines()[1] == (
        "Revenue of USD 1,234^1 in 2021; 10^6 units; the 1st quarter; x^2; Act of 2014^1; H2O; a word 3.")
    wikipedia = corpus_dir / "docs" / "html" / "readability_wikipedia_mozilla_en.source.html"
    assert "donated US$1,000[23] in 2008" in _text(wikipedia.read_bytes(), wikipedia.name)


def test_raw_sup_in_markdown_keeps_figures_apart_and_code_as_written() -> None:
    markdown = ("# Results\n\nRevenue of USD 1,234<sup>1</sup> in 2021; 10<sup>6</sup> units; the 1<sup>st</sup> "
                "quarter; H<sub>2</sub>O.\n\n`x<sup>2</sup>` stays as written in code.\n")
    lines = _text(markdown.encode(), "results.md").splitlines()
    assert lines[1] == "Revenue of USD 1,234^1 in 2021; 10^6 units; the 1st quarter; H2O."
    assert lines[2] == "x<sup>2</sup> stays as written in code."


def test_a_markdown_file_of_a_hundred_thousand_sups_is_read_whole() -> None:
    # hostile size: every one of them marked, nothing dropped
    flood = "".join(f"a{i}<sup>{i % 10}</sup> " for i in range(100_000))
    text = _text(f"# T\n\n{flood}\n".encode(), "flood.md")
    assert text.count("^") == 100_000 and "a99999^9" in text


def test_an_html_mail_marks_its_sup_as_a_page_does() -> None:
    from email.message import EmailMessage

    message = EmailMessage()
    message["Subject"] = "Quarterly figures"
    message.set_content("Revenue reached USD 1,234 (note 1) in 2021.")
    message.add_alternative("<html><body><p>Revenue reached USD 1,234<sup>1</sup> in 2021, the 1<sup>st</sup> "
                            "quarter.</p></body></html>", subtype="html")
    text = _text(message.as_bytes(), "m.eml")
    assert "Revenue reached USD 1,234^1 in 2021, the 1st quarter." in text


def test_hostile_superscript_floods_parse_in_linear_time() -> None:
    """100,000 superscripts in one paragraph of each format, and <sup> nested 200 deep: read in
    full. The CPU limit is far above what they need (about ten seconds in all here)."""
    flood = "".join(f"a{i}<sup>{i % 10}</sup>" for i in range(100_000))
    nested = "x" + "<sup>" * 200 + "7" + "</sup>" * 200
    started = time.process_time()
    text = _text(f"<html><body><main><h1>T</h1><p>{flood}</p><p>{nested}</p></main></body></html>".encode(), "f.html")
    assert text.count("^") == 100_001 and "x^7" in text
    text = _text(_docx([[(f"a{i}", None), (str(i % 10), "superscript")] for i in range(0, 100_000, 1000)]
                       + [[piece for i in range(20_000) for piece in ((f"b{i}", None), ("9", "superscript"))]]), "f.docx")
    assert text.count("^") == 100 + 20_000
    assert time.process_time() - started < 300

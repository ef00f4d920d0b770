"""DOCX text inside tracked insertions, content controls, fields, text boxes and notes is
indexed, as Word shows the document with every change accepted; deleted text is not; a file
without such wrappers or notes reaches unstructured byte for byte (rag_pipeline/parsing/office/docx_wrappers.py)."""

from __future__ import annotations

from io import BytesIO
from pathlib import Path

import pytest
from docx import Document
from docx.oxml import parse_xml
from docx.oxml.ns import nsdecls

from rag_pipeline.parsing import ParseError, parse_document
from rag_pipeline.parsing.office import docx_wrappers
from rag_pipeline.parsing.office.docx_wrappers import read_as_shown

W = nsdecls("w")
VML = 'xmlns:v="urn:schemas-microsoft-com:vml"'
MC = 'xmlns:mc="http://schemas.openxmlformats.org/markup-compatibility/2006"'


def _saved(document) -> bytes:
    buffer = BytesIO()
    document.save(buffer)
    return buffer.getvalue()


def _text_box(text: str) -> str:
    return f"<w:pict><v:shape><v:textbox><w:txbxContent><w:p><w:r><w:t>{text}</w:t></w:r></w:p></w:txbxContent></v:textbox></v:shape></w:pict>"


def _wrapped_document() -> bytes:
    document = Document()
    document.add_heading("Contract terms", 1)
    revised = document.add_paragraph("The notice period is ")
    revised._p.append(parse_xml(f'<w:del {W} w:id="1" w:author="a"><w:r><w:delText>thirty</w:delText></w:r></w:del>'))
    revised._p.append(parse_xml(f'<w:ins {W} w:id="2" w:author="a"><w:r><w:t>ninety days</w:t></w:r></w:ins>'))
    moved = document.add_paragraph("Moved: ")
    moved._p.append(parse_xml(f'<w:moveFrom {W} w:id="3" w:author="a"><w:r><w:t>OLD PLACE</w:t></w:r></w:moveFrom>'))
    moved._p.append(parse_xml(f'<w:moveTo {W} w:id="4" w:author="a"><w:r><w:t>new place</w:t></w:r></w:moveTo>'))
    dated = document.add_paragraph("Signed on ")
    dated._p.append(parse_xml(f'<w:fldSimple {W} w:instr="DATE"><w:r><w:t>3 March 2025</w:t></w:r></w:fldSimple>'))
    owner = document.add_paragraph("Document owner: ")
    owner._p.append(parse_xml(f"<w:sdt {W}><w:sdtPr/><w:sdtContent><w:r><w:t>Legal department</w:t></w:r></w:sdtContent></w:sdt>"))
    body = document.element.body
    body.insert(len(body) - 1, parse_xml(
        f"<w:sdt {W}><w:sdtContent><w:p><w:r><w:t>The supplier keeps all records for seven years.</w:t></w:r></w:p>"
        f"<w:customXml w:element='clause'><w:p><w:r><w:t>Disputes go to the courts of Vienna.</w:t></w:r></w:p></w:customXml>"
        "</w:sdtContent></w:sdt>"))
    anchored = document.add_paragraph("See the box.")
    anchored._p.append(parse_xml(f"<w:r {W} {VML}>{_text_box('Boxed: penalties are capped at 10 percent.')}</w:r>"))
    # a DrawingML text box with its VML fallback copy: the text once
    anchored._p.append(parse_xml(
        f"<w:r {W} {VML} {MC}><mc:AlternateContent><mc:Choice Requires='wps'>{_text_box('Sidebar: renewal is automatic.')}"
        f"</mc:Choice><mc:Fallback>{_text_box('Sidebar: renewal is automatic.')}</mc:Fallback></mc:AlternateContent></w:r>"))
    table = document.add_table(rows=1, cols=2)
    table.cell(0, 0).text = "Term"
    cell = table.cell(0, 1)._tc
    cell.append(parse_xml(f"<w:sdt {W}><w:sdtContent><w:p><w:r><w:t>Five years</w:t></w:r></w:p></w:sdtContent></w:sdt>"))
    document.add_paragraph("Closing paragraph.")
    return _saved(document)


def test_wrapped_text_is_read_as_word_shows_it_with_changes_accepted() -> None:
    elements = parse_document(_wrapped_document(), "contract.docx").elements
    texts = [" ".join(e.text.split()) for e in elements]
    joined = " | ".join(texts)
    for shown in ("The notice period is ninety days", "Moved: new place", "Signed on 3 March 2025",
                  "Document owner: Legal department", "The supplier keeps all records for seven years.",
                  "Disputes go to the courts of Vienna.", "Boxed: penalties are capped at 10 percent.", "Five years"):
        assert shown in joined, shown
    assert "thirty" not in joined and "OLD PLACE" not in joined
    assert joined.count("Sidebar: renewal is automatic.") == 1
    order = [next(i for i, t in enumerate(texts) if part in t)
             for part in ("Document owner", "seven years", "Vienna", "See the box.", "Boxed:", "Sidebar:", "Closing")]
    assert order == sorted(order)


def test_footnotes_and_endnotes_follow_the_paragraph_that_refers_to_them() -> None:
    document = Document()
    document.add_paragraph("The notice period is ninety days.")._p.append(
        parse_xml(f'<w:r {W}><w:footnoteReference w:id="1"/></w:r>'))
    document.add_paragraph("Payment is due within thirty days.")._p.append(
        parse_xml(f'<w:r {W}><w:endnoteReference w:id="2"/></w:r>'))
    document.add_paragraph("Closing paragraph.")
    separator = '<w:footnote w:type="separator" w:id="-1"><w:p><w:r><w:separator/></w:r></w:p></w:footnote>'
    footnotes = (f'<w:footnotes {W}>{separator}<w:footnote w:id="1"><w:p><w:r><w:footnoteRef/></w:r>'
                 "<w:r><w:t>Counted from the day the notice is received.</w:t></w:r></w:p></w:footnote>"
                 '<w:footnote w:id="7"><w:p><w:r><w:t>UNREFERENCED_NOTE</w:t></w:r></w:p></w:footnote></w:footnotes>')
    endnotes = (f'<w:endnotes {W}><w:endnote w:id="2"><w:p><w:r><w:t>Late payment accrues interest at 4 percent.'
                "</w:t></w:r></w:p></w:endnote></w:endnotes>")
    data = _with_parts(_saved(document), {"word/footnotes.xml": footnotes, "word/endnotes.xml": endnotes})
    texts = [e.text.strip() for e in parse_document(data, "notes.docx").elements]
    assert texts == ["The notice period is ninety days.", "Counted from the day the notice is received.",
                     "Payment is due within thirty days.", "Late payment accrues interest at 4 percent.",
                     "Closing paragraph."]


def _with_parts(data: bytes, parts: dict[str, str]) -> bytes:
    """`data` with the XML parts added (python-docx writes no notes)."""
    import zipfile

    out = BytesIO()
    with zipfile.ZipFile(BytesIO(data)) as archive, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as rewritten:
        for info in archive.infolist():
            rewritten.writestr(info, archive.read(info.filename))
        for name, xml in parts.items():
            rewritten.writestr(name, '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>' + xml)
    return out.getvalue()


def test_without_wrappers_or_notes_the_file_is_passed_on_unchanged(corpus_dir: Path) -> None:
    """The corpus' first-page-header sample holds neither; the docling sample a content control
    (its footer's page number), the handbook (4,759 elements) three footnotes in each of its two
    copies of the rules: what was read before is all still there, in order, and the rest added."""
    plain = (corpus_dir / "docs" / "docx" / "docling_header_footer_first_page.docx").read_bytes()
    shown, hidden, _ = read_as_shown(plain)
    assert shown is plain and hidden == 0
    for name, added in (("docling_word_sample.docx", 1), ("doj_ust_chapter13_trustee_handbook_2012.docx", 6)):
        data = (corpus_dir / "docs" / "docx" / name).read_bytes()
        now = parse_document(data, name).elements
        former_read, docx_wrappers.read_as_shown = docx_wrappers.read_as_shown, lambda data: (data, 0, 0)
        try:
            former = parse_document(data, name).elements
        finally:
            docx_wrappers.read_as_shown = former_read
        kept = iter(now)
        assert all(any(e == n for n in kept) for e in former), name  # a subsequence: nothing lost or moved
        assert len(now) == len(former) + added, name
    assert sum("28 U.S.C. § 586(b), (c), d), (e)." in e.text for e in now) == 2  # footnote 1 of each copy


def test_hostile_wrappers_are_read_or_refused_clearly() -> None:
    document = Document()
    document.add_paragraph("Host of many boxes.")
    host = document.paragraphs[0]._p
    for n in range(3_000):
        host.append(parse_xml(f"<w:r {W} {VML}>{_text_box(f'box {n}')}</w:r>"))
    texts = [e.text for e in parse_document(_saved(document), "boxes.docx").elements]
    assert texts[0] == "Host of many boxes." and texts[1:] == [f"box {n}" for n in range(3_000)]
    deep = Document()
    deep.add_paragraph("DEEP_MARK")
    nested = "<w:r><w:t>inside</w:t></w:r>"
    for _ in range(5_000):  # content controls 5,000 deep: past the XML parser's depth limit
        nested = f"<w:sdt><w:sdtContent>{nested}</w:sdtContent></w:sdt>"
    with pytest.raises(ParseError, match=r"could not read this Word \(\.docx\) file"):
        parse_document(_with_document_xml(_saved(deep), "<w:t>DEEP_MARK</w:t></w:r>", f"<w:t>DEEP_MARK</w:t></w:r>{nested}"),
                       "deep.docx")


def _with_document_xml(data: bytes, old: str, new: str) -> bytes:
    """`data` with `old` replaced by `new` in word/document.xml (what python-docx cannot write)."""
    import zipfile

    out = BytesIO()
    with zipfile.ZipFile(BytesIO(data)) as archive, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as rewritten:
        for info in archive.infolist():
            content = archive.read(info.filename)
            if info.filename == "word/document.xml":
                assert old.encode() in content
                content = content.replace(old.encode(), new.encode())
            rewritten.writestr(info, content)
    return out.getvalue()


def _with_drop_cap(letter: str, rest: str, kind: str = "drop", follow: bool = True) -> bytes:
    document = Document()
    document.add_heading("Company History", 1)
    cap = document.add_paragraph()
    cap._p.get_or_add_pPr().append(parse_xml(f'<w:framePr {W} w:dropCap="{kind}" w:lines="3" w:wrap="around"/>'))
    cap.add_run(letter)
    if follow:
        document.add_paragraph(rest)
    return _saved(document)


@pytest.mark.parametrize(("letter", "rest", "kind", "reads"), [
    ("T", "he company was founded in 1902 by three brothers.", "drop", "The company was founded in 1902 by three brothers."),
    ("I", "n 1902 the company was founded.", "margin", "In 1902 the company was founded."),  # the letter in the margin
    ("A", " company of three brothers was founded.", "drop", "A company of three brothers was founded."),
])
def test_a_drop_cap_starts_the_paragraph_it_begins(letter: str, rest: str, kind: str, reads: str) -> None:
    elements = parse_document(_with_drop_cap(letter, rest, kind), "history.docx").elements
    assert [(e.kind, e.text) for e in elements] == [("heading", "Company History"), ("paragraph", reads)]


def test_a_framed_paragraph_that_is_no_drop_cap_and_a_last_drop_cap_stay_as_written() -> None:
    document = Document()
    framed = document.add_paragraph("Draft")
    framed._p.get_or_add_pPr().append(parse_xml(f'<w:framePr {W} w:w="2000" w:hAnchor="page" w:x="500" w:y="500"/>'))
    document.add_paragraph("The board approved the budget.")
    texts = [e.text for e in parse_document(_saved(document), "framed.docx").elements]
    assert texts == ["Draft", "The board approved the budget."]
    # a drop cap with no paragraph after it keeps its letter where it is
    assert [e.text for e in parse_document(_with_drop_cap("Z", "", follow=False), "last.docx").elements][-1] == "Z"


def test_ten_thousand_drop_caps_each_start_their_paragraph() -> None:
    # hostile size: a newsletter generator that opens every paragraph with a drop cap
    document = Document()
    for i in range(10_000):
        cap = document.add_paragraph()
        cap._p.get_or_add_pPr().append(parse_xml(f'<w:framePr {W} w:dropCap="drop" w:lines="2"/>'))
        cap.add_run("T")
        document.add_paragraph(f"he item number {i} ships today.")
    text = "\n".join(e.text for e in parse_document(_saved(document), "newsletter.docx").elements)
    assert text.count("The item number") == 10_000 and "\nT\n" not in text

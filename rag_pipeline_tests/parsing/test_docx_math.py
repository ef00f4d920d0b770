"""Word equations are indexed as linear text (parsing/office/docx_math.py). python-docx reads only
`w:r` runs, so every OMML equation (`m:oMath` in a sentence, `m:oMathPara` on its own line) was
missing, and a display equation's paragraph vanished with it: a rate sheet's "interest = P·r·t"
or a specification's limits could not be found or cited."""

from __future__ import annotations

from io import BytesIO

import pytest
from docx import Document
from docx.oxml import parse_xml

from rag_pipeline.parsing import parse_document

NS = ('xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main" '
      'xmlns:m="http://schemas.openxmlformats.org/officeDocument/2006/math"')


def _r(text: str) -> str:
    return f"<m:r><m:t>{text}</m:t></m:r>"


def _docx(*paragraphs: tuple[str, str]) -> bytes:
    """One paragraph per (text before, OMML inside <m:oMath>); text None: a display equation."""
    document = Document()
    document.add_paragraph("Interest on a loan is computed as follows.")
    for before, omml in paragraphs:
        if before is None:
            document.add_paragraph()._p.append(parse_xml(f"<m:oMathPara {NS}><m:oMath>{omml}</m:oMath></m:oMathPara>"))
        else:
            paragraph = document.add_paragraph(before)
            paragraph._p.append(parse_xml(f"<m:oMath {NS}>{omml}</m:oMath>"))
            paragraph.add_run(" for every loan.")
    document.add_paragraph("Payments are due monthly.")
    buffer = BytesIO()
    document.save(buffer)
    return buffer.getvalue()


def _texts(data: bytes) -> list[str]:
    return [e.text for e in parse_document(data, "rates.docx").elements]


def test_an_inline_equation_is_read_where_it_stands_in_its_sentence() -> None:
    omml = _r("I=P") + "<m:sSub><m:e>" + _r("r") + "</m:e><m:sub>" + _r("year") + "</m:sub></m:sSub>" + _r("t")
    assert _texts(_docx(("The interest is ", omml))) == [
        "Interest on a loan is computed as follows.", "The interest is I=Pr_year t for every loan.",
        "Payments are due monthly."]


def test_a_display_equation_keeps_its_own_paragraph() -> None:
    omml = _r("A=π") + "<m:sSup><m:e>" + _r("r") + "</m:e><m:sup>" + _r("2") + "</m:sup></m:sSup>"
    assert _texts(_docx((None, omml)))[1] == "A=πr^2"


@pytest.mark.parametrize(("omml", "linear"), [
    ("<m:f><m:num>" + _r("a+b") + "</m:num><m:den>" + _r("2") + "</m:den></m:f>", "(a+b)/2"),
    ("<m:rad><m:radPr><m:degHide m:val=\"1\"/></m:radPr><m:deg/><m:e>" + _r("x+1") + "</m:e></m:rad>", "√(x+1)"),
    ("<m:nary><m:naryPr><m:chr m:val=\"∑\"/></m:naryPr><m:sub>" + _r("i=1") + "</m:sub><m:sup>" + _r("n") + "</m:sup><m:e>"
     + _r("x") + "</m:e></m:nary>", "∑_(i=1)^n x"),
    ("<m:d><m:e>" + _r("a") + "</m:e><m:e>" + _r("b") + "</m:e></m:d>", "(a,b)"),
    ("<m:d><m:dPr><m:begChr m:val=\"[\"/><m:endChr m:val=\"]\"/></m:dPr><m:e>" + _r("0,1") + "</m:e></m:d>", "[0,1]"),
    ("<m:func><m:fName>" + _r("sin") + "</m:fName><m:e>" + _r("x") + "</m:e></m:func>", "sin x"),
    ("<m:m><m:mr><m:e>" + _r("a") + "</m:e><m:e>" + _r("b") + "</m:e></m:mr><m:mr><m:e>" + _r("c") + "</m:e><m:e>"
     + _r("d") + "</m:e></m:mr></m:m>", "[a, b; c, d]"),
], ids=["fraction", "root", "sum", "brackets", "interval", "function", "matrix"])
def test_equation_structures_read_as_words_linear_form(omml: str, linear: str) -> None:
    assert _texts(_docx((None, omml)))[1] == linear


def test_many_and_deeply_nested_equations_all_read() -> None:
    # hostile: 2,000 equations in one document, and a fraction nested 60 levels deep
    nested = _r("1")
    for _ in range(60):
        nested = f"<m:f><m:num>{_r('1')}</m:num><m:den>{nested}</m:den></m:f>"
    texts = _texts(_docx(*[(f"Rate {i} is ", _r(f"r{i}=0.0{i % 10}")) for i in range(2_000)], (None, nested)))
    assert sum(text.startswith("Rate ") and "=0.0" in text for text in texts) == 2_000
    assert texts[-2].count("1/") == 60


def test_a_document_without_equations_is_passed_on_byte_for_byte() -> None:
    from rag_pipeline.parsing.office.docx_wrappers import read_as_shown

    document = Document()
    document.add_paragraph("No formula here.")
    buffer = BytesIO()
    document.save(buffer)
    assert read_as_shown(buffer.getvalue()) == (buffer.getvalue(), 0, 0)

"""Formulas and ruby in HTML read as a reader reads them (parsing/office/html_tree.math_and_ruby_as_read).
unstructured reads <math> only through a TeX annotation or `alttext`, so a presentation-only
formula ("E = mc²" as <mi>/<msup>) vanished from its sentence; ruby's pronunciation (<rt>) ran
into the words it annotates."""

from __future__ import annotations

import pytest
from helpers import html_mail

from rag_pipeline.parsing import parse_document

INTRO = ("Physics notes for the training course: each formula below is used in the exercises, and each symbol is "
         "explained in the glossary at the end of the handbook.")


def _texts(inner: str) -> list[str]:
    page = f"<html><body><main><h1>Notes</h1><p>{INTRO}</p>{inner}</main></body></html>"
    return [e.text for e in parse_document(page.encode(), "notes.html").elements][2:]


@pytest.mark.parametrize(("math", "linear"), [
    ("<mi>E</mi><mo>=</mo><mi>m</mi><msup><mi>c</mi><mn>2</mn></msup>", "E=mc^2"),
    ("<mfrac><mrow><mi>a</mi><mo>+</mo><mi>b</mi></mrow><mn>2</mn></mfrac>", "(a+b)/2"),
    ("<msqrt><mi>x</mi><mo>+</mo><mn>1</mn></msqrt>", "√(x+1)"),
    ("<msub><mi>v</mi><mi>max</mi></msub><mo>=</mo><mn>30</mn>", "v_max =30"),
], ids=["power", "fraction", "root", "subscript"])
def test_a_presentation_formula_is_read_in_its_sentence(math: str, linear: str) -> None:
    assert _texts(f"<p>The rule <math>{math}</math> holds.</p>") == [f"The rule {linear} holds."]


def test_a_formulas_own_alttext_or_tex_is_kept() -> None:
    texts = _texts('<p>By <math alttext="E=mc^{2}"><mi>E</mi></math> and '
                   '<math><semantics><mi>x</mi><annotation encoding="application/x-tex">x^{3}</annotation></semantics></math>.</p>')
    assert texts == ["By E=mc^{2} and x^{3}."]


def test_ruby_pronunciation_does_not_run_into_its_words() -> None:
    assert _texts("<p>The word <ruby>漢<rp>(</rp><rt>kan</rt><rp>)</rp>字<rt>ji</rt></ruby> means characters.</p>") == [
        "The word 漢字 means characters."]


def test_an_e_mails_formula_is_read() -> None:
    mail = html_mail("Rates", "Plain version.",
                     "<html><body><p>Interest is <math><mi>P</mi><mo>·</mo><mi>r</mi></math> per year.</p></body></html>")
    assert "Interest is P·r per year." in [e.text for e in parse_document(mail, "rates.eml").elements]


def test_many_and_deeply_nested_formulas_read_without_failing() -> None:
    # hostile: 2,000 formulas, and one nested 1,500 levels deep (deeper than Python's recursion limit)
    many = "".join(f"<p>Item {i}: <math><mi>x</mi><mo>=</mo><mn>{i}</mn></math>.</p>" for i in range(2_000))
    deep = "<p>Deep: <math>" + "<mrow>" * 1_500 + "<mi>y</mi>" + "</mrow>" * 1_500 + "</math> end.</p>"
    texts = _texts(many + deep)
    assert sum(f"Item {i}: x=" in t for i, t in enumerate(texts[:2_000])) == 2_000
    assert texts[-1].startswith("Deep:") and "y" in texts[-1] and texts[-1].endswith("end.")

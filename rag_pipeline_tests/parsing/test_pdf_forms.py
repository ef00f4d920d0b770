"""Filled-in PDF forms and key-value pages read label by value (parsing/pdf/reading_order.py,
font_headings.py). The column finder took a column of labels ("Employee name:", "Amount:") and
the values beside them for two text columns, so every label was read before every value, and a
value set larger than the form's text (form fields often are) became a heading that filed the
rest of the form under a person's name. (Real two-column pages still read column by column:
test_pdf_parsing.py's DPR and Linn cases.)"""

from __future__ import annotations

import pymupdf
import pytest

from rag_pipeline.parsing import parse_document

FIELDS = [("Employee name:", "Johanna Schmidt"), ("Department:", "Procurement"), ("Amount:", "EUR 1,234.50"),
          ("Purpose:", "Conference travel to Lisbon")]


def _form(values_as: str, rows: list[tuple[str, str]] = FIELDS) -> bytes:
    """A one-page form: a title, one label per row at the left margin, its value 108 pt to the right
    (a filled widget, a typewriter annotation or plain text in a larger size), a closing line."""
    doc = pymupdf.open()
    page = doc.new_page()
    page.insert_text((72, 60), "Expense claim form", fontsize=16)
    for i, (label, value) in enumerate(rows):
        y = 100 + 26 * (i % 26)
        page.insert_text((72, y), label, fontsize=10)
        box = pymupdf.Rect(180, y - 13, 420, y + 5)
        if values_as == "widget":
            widget = pymupdf.Widget()
            widget.field_type, widget.field_name, widget.rect = pymupdf.PDF_WIDGET_TYPE_TEXT, f"field{i}", box
            widget.field_value, widget.text_fontsize = value, 13
            page.add_widget(widget)
        elif values_as == "annotation":
            page.add_freetext_annot(box, value, fontsize=12)
        else:
            page.insert_text((180, y), value, fontsize=13)
    page.insert_text((72, 100 + 26 * min(len(rows), 26) + 20), "Signed by the line manager after review.", fontsize=10)
    return doc.tobytes()


def _in_order(text: str, parts: list[str]) -> bool:
    at = -1
    for part in parts:
        at = text.find(part, at + 1)
        if at < 0:
            return False
    return True


@pytest.mark.parametrize("values_as", ["widget", "annotation", "text"])
def test_a_forms_values_follow_their_labels_and_are_not_headings(values_as: str) -> None:
    elements = parse_document(_form(values_as), "claim.pdf").elements
    assert _in_order("\n".join(e.text for e in elements), [text for row in FIELDS for text in row])
    assert [e.text for e in elements if e.kind == "heading"] == ["Expense claim form"]


def test_a_long_form_keeps_every_label_with_its_value() -> None:
    # 26 filled fields down the page (values carry the row number to be told apart)
    rows = [(f"Item {i} description:", f"Value number {i}") for i in range(26)]
    elements = parse_document(_form("widget", rows), "long.pdf").elements
    assert _in_order("\n".join(e.text for e in elements), [text for row in rows for text in row])
    assert [e.text for e in elements if e.kind == "heading"] == ["Expense claim form"]

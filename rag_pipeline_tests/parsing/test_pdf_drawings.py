"""PDF pages of many vector drawings (parsing/pdf/tables.py): a plan, a map or a dense plot is
read without PyMuPDF's table finder, whose time grows faster than the drawings (a set of plan
sheets went past the parse time limit and lost all its text), and a shape drawn over and over is
one rule. The pages come from bench/bench_pdf_drawings.py, which times them."""

from __future__ import annotations

from rag_pipeline.parsing import parse_document
from rag_pipeline.parsing.config import ParseLimits
from rag_pipeline.parsing.pdf.tables import MAX_RULES
from rag_pipeline_tests.helpers import bench_module

PAGES = bench_module("bench_pdf_drawings")
LIMITS = ParseLimits(ocr=False)


def test_a_plan_sheet_of_more_rules_than_a_table_holds_is_read_with_a_warning() -> None:
    doc = parse_document(PAGES.plan_pdf(MAX_RULES + 2_000), "plan.pdf", LIMITS)
    text = " ".join(e.text for e in doc.elements)
    assert all(f"Room 0-{i} storage" in text for i in range(30))
    assert not any(e.kind == "table" for e in doc.elements)
    [warning] = [w for w in doc.warnings if "ruled lines" in w]
    assert warning.startswith("page 1: 1") and "no tables were looked for" in warning


def test_a_shape_drawn_eighty_thousand_times_is_one_rule_not_a_plan() -> None:
    doc = parse_document(PAGES.repeated_square_pdf(80_000), "square.pdf", LIMITS)
    assert [e.text for e in doc.elements] == ["A page with one square drawn over and over."]
    assert not any("ruled lines" in w for w in doc.warnings)


def test_a_ruled_table_is_still_found_and_read_cell_by_cell() -> None:
    doc = parse_document(PAGES.table_pdf(), "table.pdf", LIMITS)
    [table] = [e for e in doc.elements if e.kind == "table"]
    rows = [line for line in table.text.splitlines() if line.startswith("|") and "---" not in line]
    assert len(rows) == 30
    assert rows[0].split("|")[1:-1] == [" Room ", " Floor ", " Area ", " Use ", " Doors ", " Windows "]
    assert rows[-1].split("|")[1:-1] == [f" cell 29-{col} " for col in range(6)]
    assert not doc.warnings


def test_a_box_drawn_eighty_thousand_times_over_a_word_hides_it_once() -> None:
    doc = parse_document(PAGES.boxed_over_pdf(80_000), "boxed.pdf", LIMITS)
    assert [e.text for e in doc.elements] == ["Kept words here then", "The line below stays readable."]
    assert [w for w in doc.warnings if "under a box" in w] == [
        "page 1: 10 characters under a box drawn over them (a redaction?) were left out; "
        "if they should be indexed, remove the box from the file"]


def test_a_scatter_plot_of_eighty_thousand_squares_drawn_after_text_hides_nothing() -> None:
    doc = parse_document(PAGES.scatter_pdf(80_000), "scatter.pdf", LIMITS)
    text = " ".join(e.text for e in doc.elements)
    assert "Figure 3: measured load per hour" in text and "The plot shows every sample." in text
    assert not doc.warnings

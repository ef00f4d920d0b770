"""Tables whose cells span rows or columns (office/tables.py): every value stays under its own
header in every format that carries HTML tables (an HTML page, an e-mail's HTML part, raw HTML
in Markdown, a DOCX with merged cells), a short row label spanning rows repeats in each of them,
and hostile spans are clamped. Before, unstructured rebuilt HTML tables without their spans: in
a table whose "City" header spans two rows, "Hotel" landed under "City", and the second row of a
city spanning two rows put its hotel rate there too."""

from __future__ import annotations

import io
from email.message import EmailMessage
from pathlib import Path

import pytest

from rag_pipeline.parsing.config import ParseLimits
from rag_pipeline.parsing.markdown_direct import parse_markdown_file
from rag_pipeline.parsing.office import parse_with_unstructured

RATES = ("<table><tr><th rowspan=2>City</th><th colspan=2>Cap (EUR)</th></tr>"
         "<tr><th>Hotel</th><th>Meals</th></tr>"
         "<tr><td>Berlin</td><td>140</td><td>42</td></tr>"
         "<tr><td rowspan=2>Hamburg</td><td>135</td><td>40</td></tr>"
         "<tr><td>150</td><td>45</td></tr>"
         "<tr><td>Munich</td><td colspan=2>160</td></tr></table>")
ALIGNED = ["| City | Cap (EUR) |  |", "|---|---|---|", "|  | Hotel | Meals |", "| Berlin | 140 | 42 |",
           "| Hamburg | 135 | 40 |", "| Hamburg | 150 | 45 |", "| Munich | 160 |  |"]


def _tables(data: bytes, name: str, kind: str) -> list[str]:
    parse = parse_markdown_file if kind == "markdown" else parse_with_unstructured
    extra = {} if kind == "markdown" else {"kind": kind}
    return [e.text for e in parse(data, name=name, limits=ParseLimits(), **extra).elements if e.kind == "table"]


def _email(html: str) -> bytes:
    message = EmailMessage()
    message["Subject"], message["From"], message["To"] = "Rates", "hr@example.com", "all@example.com"
    message.set_content("The rates are in the HTML part.")
    message.add_alternative(f"<html><body><p>Rates below.</p>{html}</body></html>", subtype="html")
    return message.as_bytes()


@pytest.mark.parametrize(("name", "kind", "data"), [
    ("rates.html", "html", f"<html><body><h1>Rates</h1>{RATES}</body></html>".encode()),
    ("rates.eml", "email", _email(RATES)),
    ("rates.md", "markdown", f"# Rates\n\n{RATES}\n".encode()),
])
def test_every_value_stays_under_its_header(name: str, kind: str, data: bytes) -> None:
    tables = _tables(data, name, kind)
    assert tables and tables[-1].split("\n") == ALIGNED


def test_merged_cells_of_a_docx_table_repeat_their_row_label() -> None:
    import docx

    document = docx.Document()
    table = document.add_table(rows=5, cols=3)
    for r, row in enumerate([["City", "Cap (EUR)", ""], ["", "Hotel", "Meals"], ["Berlin", "140", "42"],
                             ["Hamburg", "135", "40"], ["", "150", "45"]]):
        for c, value in enumerate(row):
            table.cell(r, c).text = value
    table.cell(0, 1).merge(table.cell(0, 2))
    table.cell(0, 0).merge(table.cell(1, 0))
    table.cell(3, 0).merge(table.cell(4, 0))
    buffer = io.BytesIO()
    document.save(buffer)
    assert _tables(buffer.getvalue(), "rates.docx", "docx")[0].split("\n")[-2:] == [
        "| Hamburg | 135 | 40 |", "| Hamburg | 150 | 45 |"]


def test_a_cell_of_the_first_row_spanning_down_is_not_repeated() -> None:
    """A picture or a header beside the whole table (Wikipedia's city tables) is no row label."""
    html = ("<table><tr><td rowspan=3>Map of the cities</td><th>City</th><th>People</th></tr>"
            "<tr><td>Berlin</td><td>3,685,265</td></tr><tr><td>Hamburg</td><td>1,862,565</td></tr></table>")
    table = _tables(f"<html><body>{html}</body></html>".encode(), "cities.html", "html")[0]
    assert "| Berlin | 3,685,265 |" in table and table.count("Map of the cities") == 1


def test_a_real_page_keeps_its_numbers_under_their_headers(corpus_dir: Path) -> None:
    """Wikipedia's German city table: pictures span the body on both sides of the figures."""
    data = (corpus_dir / "docs/html/wikipedia_de_deutschland.html").read_bytes()
    table = next(t for t in _tables(data, "wikipedia_de_deutschland.html", "html") if "Siedlungsgebiet" in t)
    header = [c.strip() for c in table.split("\n")[0].strip("|").split("|")]
    berlin = next(r for r in table.split("\n") if "| Berlin |" in r)
    cells = [c.strip() for c in berlin.strip("|").split("|")]
    assert header[cells.index("3.685.265")] == "Stadt *"  # was under "Siedlungsgebiet", a column left
    assert header[cells.index("Berlin")] == "Siedlungsgebiet"


@pytest.mark.parametrize("span", ["100000", "0", "-3", "x", "2.5", "9" * 400])
def test_hostile_spans_are_clamped(span: str) -> None:
    html = (f"<table><tr><th>A</th><th>B</th></tr><tr><td rowspan='{span}' colspan='{span}'>a</td><td>b</td></tr>"
            "<tr><td>c</td><td>d</td></tr></table>")
    table = _tables(f"<html><body>{html}</body></html>".encode(), "h.html", "html")[0]
    rows = table.split("\n")
    assert len(table) < 2000 and "| a |" in table and "d |" in table  # a span of 100,000 is read as 50
    assert len({row.count(" | ") for row in rows if not row.startswith("|---")}) == 1  # a grid


def test_a_huge_spanned_table_is_read_whole() -> None:
    rows = "".join(f"<tr><td rowspan=2>Group {i}</td><td>{2 * i}</td></tr><tr><td>{2 * i + 1}</td></tr>"
                   for i in range(2000))
    table = _tables(f"<html><body><table><tr><th>Group</th><th>Value</th></tr>{rows}</table></body></html>".encode(),
                    "big.html", "html")[0]
    assert "| Group 1999 | 3998 |" in table and "| Group 1999 | 3999 |" in table


DATA = "<table><tr><th>City</th><th>Hotel cap</th></tr><tr><td>Berlin</td><td>140</td></tr></table>"
OTHER = "<table><tr><th>Meal</th><th>Allowance</th></tr><tr><td>Lunch</td><td>14</td></tr></table>"


@pytest.mark.parametrize(("name", "kind", "data"), [
    # Wikipedia's side by side: one row of cells, each holding a table
    ("side.html", "html", f"<html><body><p>Rates.</p><table><tr><td>{DATA}</td><td>{OTHER}</td></tr></table></body></html>".encode()),
    # a mail's single column of blocks
    ("mail.eml", "email", _email(f"<table><tr><td><p>Dear all,</p></td></tr><tr><td>{DATA}</td></tr>"
                                 f"<tr><td>{OTHER}</td></tr></table>")),
])
def test_tables_inside_a_layout_table_stay_tables(name: str, kind: str, data: bytes) -> None:
    """Before, the layout table was one row (or one column) of cells, so it was read as a line
    of text, and the tables in it with it: "City Hotel cap Berlin 140 Meal Allowance Lunch 14"."""
    tables = _tables(data, name, kind)
    assert "| Berlin | 140 |" in "\n".join(tables) and "| Lunch | 14 |" in "\n".join(tables), tables


def test_a_data_table_with_a_table_in_one_cell_stays_one_table() -> None:
    html = ("<table><tr><th>Plan</th><th>Terms</th></tr><tr><td>Basic</td><td>10 days</td></tr>"
            f"<tr><td>Plus</td><td>{OTHER}</td></tr></table>")
    tables = _tables(f"<html><body>{html}</body></html>".encode(), "plans.html", "html")
    assert any("| Basic | 10 days |" in t for t in tables), tables


def test_the_states_of_a_real_page_are_a_table(corpus_dir: Path) -> None:
    """Wikipedia's table of German states sits in a one-cell layout table: it was a paragraph."""
    data = (corpus_dir / "docs/html/wikipedia_de_deutschland.html").read_bytes()
    assert any("| Baden-Württemberg | Stuttgart | 35.748 |" in t
               for t in _tables(data, "wikipedia_de_deutschland.html", "html"))


def test_layout_tables_nested_deep_are_unwrapped_to_their_data_table() -> None:
    """40 layout tables deep (160 elements; past 250 the page's nesting is flattened to text)."""
    html = "<table><tr><td>" * 40 + DATA + "</td></tr></table>" * 40
    tables = _tables(f"<html><body>{html}</body></html>".encode(), "deep.html", "html")
    assert tables == ["| City | Hotel cap |\n|---|---|\n| Berlin | 140 |"]

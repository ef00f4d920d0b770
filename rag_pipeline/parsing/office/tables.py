"""HTML table -> GitHub Markdown, with the clean-up that real exported tables need.

Tables become Markdown with a header row so that a table stays one readable chunk; spans are
expanded so columns line up, and the spacer rows/columns and split "$" / ")" cells of financial
filings are folded away because in Markdown they are only noise."""

from __future__ import annotations

from typing import Any

from lxml import etree
from lxml import html as lxml_html

from rag_pipeline.parsing.office.text import normalize_whitespace

# The maximum colspan/rowspan honoured; see `clamped_span`.
_MAX_SPAN = 50
MAX_REPEATED_CHARS = 100  # a rowspan's text repeated in each row it covers up to this length
_LEADING_UNITS = {"$", "€", "£", "¥", "US$", "CHF", "(", "($", "$("}
_TRAILING_UNITS = {")", "%", ")%", "%)"}


def html_table_to_markdown(table_html: str) -> str:
    """Convenience for callers holding raw table HTML; empty string when there is no table."""
    rows = html_table_rows(table_html)
    return rows_to_markdown(rows) if rows else ""


def html_table_rows(table_html: str) -> list[list[str]]:
    """The cell texts of the first <table> in `table_html`, one list per row, with colspans and
    rowspans expanded so columns line up (`_expand_spans`), and all-empty rows and columns removed
    (financial filings use them as spacers, and in Markdown they are only noise)."""
    try:
        root = lxml_html.fragment_fromstring(table_html, create_parent="div")
    except (etree.ParserError, ValueError):
        return []
    tables = root.xpath(".//table")
    if not tables:
        return []
    grid = [_merge_unit_cells(row) for row in _expand_spans(tables[0])]
    rows = _drop_empty_rows_and_columns(grid)
    return _drop_empty_rows_and_columns(_shift_orphan_headers(rows)) if len(rows) > 1 else rows


def rows_to_markdown(rows: list[list[str]]) -> str:
    """GitHub-flavoured Markdown with the first row as the header row."""
    width = max(len(row) for row in rows)
    padded = [[_escape_cell(c) for c in row] + [""] * (width - len(row)) for row in rows]
    lines = ["| " + " | ".join(padded[0]) + " |", "|" + "|".join(["---"] * width) + "|"]
    lines.extend("| " + " | ".join(row) + " |" for row in padded[1:])
    return "\n".join(lines)


def clamped_span(cell: Any, attribute: str) -> int:
    """colspan/rowspan, clamped: a hostile colspan="100000" must not allocate a huge grid."""
    try:
        return max(1, min(int(cell.get(attribute, "1")), _MAX_SPAN))
    except ValueError:
        return 1


def tables_as_read(root: Any) -> bool:
    """Every table under an lxml `root` as unstructured should read it: a layout table holding
    tables unwrapped (`_unwrap_layout`), then each table's spans written out (`write_out_spans`).
    Whether anything changed."""
    changed = False
    for table in list(root.iter("table")):  # document order: an outer table before the tables in it
        if _is_layout(table):
            _unwrap_layout(table)
            changed = True
    for table in list(root.iter("table")):
        changed |= write_out_spans(table)
    return changed


def _is_layout(table: Any) -> bool:
    """A table that only places tables: it holds one, and is a single row or a single column
    (Wikipedia sets tables side by side in one; mails stack their blocks in one column). Its
    data tables must not be read as one cell of text."""
    rows = _table_rows(table)
    return (bool(table.xpath(".//table")) and table.getparent() is not None
            and (len(rows) <= 1 or all(len(row.xpath("./td | ./th")) <= 1 for row in rows)))


def _unwrap_layout(table: Any) -> None:
    """Replace a layout table by a <div> per cell, holding the cell's content in order."""
    holder = etree.Element("div")
    for row in _table_rows(table):
        for cell in row.xpath("./td | ./th"):
            block = etree.SubElement(holder, "div")
            block.text = cell.text
            for child in list(cell):
                block.append(child)
    caption = table.find("caption")
    if caption is not None:
        holder.insert(0, caption)
        caption.tag = "p"
    holder.tail = table.tail
    table.getparent().replace(table, holder)


def write_out_spans(table: Any) -> bool:
    """Rewrite an lxml <table> so no cell spans, each covered slot a cell of its own: the slots
    a colspan covers empty, the rows a rowspan covers repeating a short text in its first column
    (`_cover`). unstructured rebuilds a table without its spans, which moved every cell after a
    spanning one a column left: under a two-row "City" header, "Hotel" landed in the City column,
    and the second row of a city spanning two rows put its hotel rate under "City". Whether the
    table had a span."""
    covered: dict[int, dict[int, str]] = {}  # row -> {column: text} a rowspan above covers
    spanned = False
    for r, row in enumerate(_table_rows(table)):
        col = 0
        for cell in row.xpath("./td | ./th"):
            while col in covered.get(r, {}):
                cell.addprevious(_cell(cell.tag, covered[r][col]))
                col += 1
            width = clamped_span(cell, "colspan")
            _cover(covered, r, col, width, clamped_span(cell, "rowspan"), normalize_whitespace("".join(cell.itertext())))
            spanned |= cell.attrib.pop("colspan", None) is not None
            spanned |= cell.attrib.pop("rowspan", None) is not None
            for _ in range(width - 1):
                cell.addnext(etree.Element(cell.tag))
            col += width
        while col in covered.get(r, {}):
            row.append(_cell("td", covered[r][col]))
            col += 1
    return spanned


def _cover(covered: dict[int, dict[int, str]], row: int, col: int, width: int, height: int, text: str) -> None:
    """Mark the slots a cell's rowspan covers below it. A body cell's short text repeats in its
    first column (a row label spanning rows: "Hamburg" holds for each of its rows, and a row read
    alone still says whose figures they are); the other columns, a long text and a cell of the
    first row stay empty (a colspan is a spacer or a group header; a first-row cell spanning down
    is a header, or a picture beside the whole table, as Wikipedia's city tables have)."""
    repeated = text if row > 0 and len(text) <= MAX_REPEATED_CHARS else ""
    for below in range(row + 1, row + height):
        slots = covered.setdefault(below, {})
        for c in range(col, col + width):
            slots[c] = repeated if c == col else ""


def _cell(tag: str, text: str) -> Any:
    cell = etree.Element(tag)
    cell.text = text or None
    return cell


def _table_rows(table: Any) -> list[Any]:
    """Rows of this table only, not of tables nested inside its cells."""
    return table.xpath("./tr | ./thead/tr | ./tbody/tr | ./tfoot/tr")


def _expand_spans(table: Any) -> list[list[str]]:
    """The table as a grid of cell texts, its spans written out (`write_out_spans`), so that
    every column index means the same column."""
    write_out_spans(table)
    return [[normalize_whitespace("".join(cell.itertext())) for cell in row.xpath("./td | ./th")]
            for row in _table_rows(table)]


def _merge_unit_cells(row: list[str]) -> list[str]:
    """Financial tables put "$" and ")" / "%" in cells of their own; glue them to the number
    they belong to ("$ 1,234" / "(56)" / "7 %") so a row reads as values, not fragments."""
    row = list(row)
    for i, cell in enumerate(row):
        if cell in _LEADING_UNITS:
            nxt = next((j for j in range(i + 1, len(row)) if row[j]), None)
            if nxt is not None and row[nxt] not in _LEADING_UNITS | _TRAILING_UNITS:
                row[nxt] = f"{cell}{row[nxt]}" if cell.endswith("(") else f"{cell} {row[nxt]}"
                row[i] = ""
        elif cell in _TRAILING_UNITS:
            prev = next((j for j in range(i - 1, -1, -1) if row[j]), None)
            if prev is not None:
                row[prev] = f"{row[prev]}{cell}"
                row[i] = ""
    return row


def _shift_orphan_headers(rows: list[list[str]]) -> list[list[str]]:
    """A header over a column that is empty in every body row (its values moved one cell right,
    e.g. after a "$" column) belongs to the next column that has values but no header."""
    header, body = list(rows[0]), rows[1:]
    width = len(header)
    has_values = [any(row[c] for row in body) for c in range(width)]
    for c in range(width):
        if header[c] and not has_values[c]:
            for target in range(c + 1, width):
                if header[target]:
                    break
                if has_values[target]:
                    header[target], header[c] = header[c], ""
                    break
    return [header, *body]


def _drop_empty_rows_and_columns(grid: list[list[str]]) -> list[list[str]]:
    """Spacer rows and columns go; ragged rows are padded so every row has the same width."""
    rows = [row for row in grid if any(cell for cell in row)]
    if not rows:
        return []
    width = max(len(row) for row in rows)
    rows = [row + [""] * (width - len(row)) for row in rows]
    keep = [c for c in range(width) if any(row[c] for row in rows)]
    return [[row[c] for c in keep] for row in rows]


def _escape_cell(text: str) -> str:
    """A pipe would end the cell; a backslash before it would un-escape our escape."""
    return text.replace("\\", "\\\\").replace("|", "\\|")

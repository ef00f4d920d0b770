"""Page units to the flat list of Elements the rest of the pipeline sees; a table continued on
the next page is kept as one table, so it stays one readable chunk.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from rag_pipeline.parsing.pdf.model import Box, Page, Unit
from rag_pipeline.parsing.pdf.tables import markdown_table
from rag_pipeline.parsing.pdf.text import BULLET_RE, norm_key
from rag_pipeline.parsing.types import Element


@dataclass
class _OpenTable:
    """The last table emitted, while it may still continue on the next page."""

    element: Element
    rows: list[list[str]]
    page: int
    bottom: float  # y1 of its last part
    between: list[tuple[int, Element]] = field(default_factory=list)  # elements emitted after it


def to_elements(pages: list[Page]) -> list[Element]:
    """Units to Elements; a table continued on the next page (same column count, only short
    margin lines such as running footers and headers in between) is appended to its first part,
    the repeated header row skipped."""
    elements: list[Element] = []
    open_table: _OpenTable | None = None
    for page in pages:
        for unit in page.units:
            if unit.kind == "table" and unit.rows:
                if open_table and _continues(open_table, unit, page.number):
                    rows = unit.rows[1:] if _same_cells(open_table.rows[0], unit.rows[0]) else unit.rows
                    open_table.rows.extend(rows)
                    open_table.element.text = markdown_table(open_table.rows)
                    open_table.element.page_end = page.number
                    open_table.page, open_table.bottom, open_table.between = page.number, unit.bbox[3], []
                    continue
                rows = [list(r) for r in unit.rows]
                element = Element("table", markdown_table(rows), page.number, None, _round(unit.bbox), page.height)
                elements.append(element)
                open_table = _OpenTable(element, rows, page.number, unit.bbox[3])
                continue
            element = _unit_element(unit, page)
            if element is None:
                continue
            elements.append(element)
            if open_table:
                open_table.between.append((page.number, element))
    return elements


def _continues(table: _OpenTable, unit: Unit, page_number: int) -> bool:
    """True when `unit` (first on its page) carries on `table` from the page before."""
    if table.page != page_number - 1 or len(table.rows[0]) != len(unit.rows[0]):
        return False
    for page, element in table.between:
        if element.kind in ("heading", "caption", "table") or len(element.text) > 200:
            return False
        if page == table.page and element.bbox[1] < table.bottom - 2:
            return False
        if page == page_number and element.bbox[3] > unit.bbox[1] + 2:
            return False
    return True


def _same_cells(a: list[str], b: list[str]) -> bool:
    """True when two table rows hold the same texts: a header row repeated on the next page."""
    return [norm_key(x) for x in a] == [norm_key(x) for x in b]


def _unit_element(unit: Unit, page: Page) -> Element | None:
    """The Element for a non-table unit (outline headings keep the outline title, list items lose
    their bullet); None when no text is left."""
    text = unit.heading_text if unit.kind == "heading" and unit.heading_text else unit.text
    if unit.kind == "list_item":
        text = BULLET_RE.sub("", text, count=1)
    text = text.strip()
    if not text:
        return None
    level = unit.level if unit.kind == "heading" else None
    bold = True if unit.kind == "paragraph" and unit.lines and all(line.bold for line in unit.lines) else None
    return Element(unit.kind, text, page.number, level, _round(unit.bbox), page.height, bold=bold)  # type: ignore[arg-type]


def _round(box: Box) -> Box:
    """Coordinates to 0.01 pt: stable output, and no float noise in the stored bbox."""
    return tuple(round(v, 2) for v in box)  # type: ignore[return-value]

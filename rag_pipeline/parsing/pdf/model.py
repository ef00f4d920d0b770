"""The intermediate page model between PyMuPDF's text dictionary and the final Elements.

Pages are held in this form until the whole document has been read, because two decisions need
more than one page: headings use font statistics of the whole document, and a table may continue
on the next page.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from rag_pipeline.parsing.pdf.text import join_lines

Box = tuple[float, float, float, float]


@dataclass
class Line:
    """One visual text row (PyMuPDF lines on the same baseline merged, left to right)."""

    text: str
    bbox: Box
    size: float  # dominant font size by character count, rounded to 0.5 pt
    bold: bool  # most characters bold
    horizontal: bool = True
    mono: bool = False  # most characters in a monospaced font (code, screen captures)
    tabular: bool = False  # merged from pieces with wide gaps: a table row or a running header


@dataclass
class Unit:
    """A paragraph candidate, heading, list item or table on one page, before it becomes an Element."""

    kind: str  # paragraph | list_item | heading | caption | table
    bbox: Box
    lines: list[Line] = field(default_factory=list)
    level: int | None = None
    rows: list[list[str]] | None = None  # tables only
    heading_text: str | None = None  # outline title, when the heading came from the outline

    @property
    def text(self) -> str:
        return join_lines([line.text for line in self.lines])


@dataclass
class Page:
    """One page's units, plus what the document-wide heading rules need to know about the page."""

    number: int  # 1-based
    height: float
    units: list[Unit]  # in reading order
    ocr: bool = False
    gutters: list[tuple[float, float]] = field(default_factory=list)  # column gutters found on the page


def union(boxes: Iterable[Box]) -> Box:
    """The smallest box holding all `boxes`."""
    boxes = list(boxes)
    return (
        min(b[0] for b in boxes),
        min(b[1] for b in boxes),
        max(b[2] for b in boxes),
        max(b[3] for b in boxes),
    )

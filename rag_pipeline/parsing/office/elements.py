"""unstructured element -> the project's `Element` kinds (see types.py).

Heading levels come from real structure only (DOCX heading styles, HTML h1..h6, Markdown #),
never from "this line looks short" guesses, because a false heading splits chunks and puts a
wrong breadcrumb on everything below it. PPTX slides have their own mapping in slides.py, built
from the helpers here."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from rag_pipeline.parsing.office.tables import html_table_rows, rows_to_markdown
from rag_pipeline.parsing.types import Element

_PLAIN_TEXT_TYPES = {"NarrativeText", "Text", "UncategorizedText", "Address", "EmailAddress", "Formula"}
_DROPPED_TYPES = {"PageBreak", "Image", "PageNumber"}
# Characters that, alone in a table's first column, make that table a bulleted list.
_BULLETS = {"•", "·", "◦", "○", "●", "▪", "■", "-", "–", "—", "*", "o", "\uf0b7", "\uf0a7"}


def map_markup_elements(raw: Iterable[Any], heading_offset: int = 0) -> list[Element]:
    """`map_markup_element` over a whole partition result, flattened."""
    return [el for item in raw for el in map_markup_element(item, heading_offset)]


def map_markup_element(item: Any, heading_offset: int = 0) -> list[Element]:
    """HTML, Markdown, text and e-mail bodies: headings come from h1..h6 / # levels."""
    category = type(item).__name__
    text = clean_text(item.text)
    if is_dropped(category, text):
        return []
    if category == "Title":
        return [Element(kind="heading", text=text, level=_heading_level(item.metadata.category_depth, heading_offset))]
    if category == "Table":
        return table_elements(item)
    mapped = map_common(item, text)
    return [mapped] if mapped else []


def map_docx_element(item: Any) -> list[Element]:
    """DOCX: a Title is always a real heading/title style; a Caption-styled paragraph is a
    caption (unstructured reports it as plain Text)."""
    category = type(item).__name__
    text = clean_text(item.text)
    if is_dropped(category, text):
        return []
    if category == "Title":
        return [Element(kind="heading", text=text, level=_heading_level(item.metadata.category_depth))]
    if category == "Table":
        return table_elements(item)
    if getattr(item.metadata, "style_name", None) == "Caption":
        return [Element(kind="caption", text=text)]
    mapped = map_common(item, text)
    if mapped and mapped.kind == "paragraph" and _wholly_bold(item, text):
        mapped.bold = True
    return [mapped] if mapped else []


def _wholly_bold(item: Any, text: str) -> bool:
    """True when bold runs (unstructured's emphasis tag "b") cover every character of `text`:
    the way headings are typed in Word files without heading styles."""
    contents = getattr(item.metadata, "emphasized_text_contents", None) or []
    tags = getattr(item.metadata, "emphasized_text_tags", None) or []
    bold = "".join(c for c, t in zip(contents, tags) if "b" in t)
    return bool(text) and len("".join(bold.split())) >= len("".join(text.split()))


def map_common(item: Any, text: str) -> Element | None:
    """Mapping shared by every format for the types whose meaning does not depend on it
    (tables are handled by `table_elements`, as one table may become several elements)."""
    category = type(item).__name__
    if category == "ListItem":
        return Element(kind="list_item", text=text)
    if category == "CodeSnippet":
        return Element(kind="code", text=(item.text or "").strip("\n"))
    if category == "FigureCaption":
        return Element(kind="caption", text=text)
    if category == "Header":
        return Element(kind="page_header", text=text)
    if category == "Footer":
        return Element(kind="page_footer", text=text)
    if category in _PLAIN_TEXT_TYPES:
        return Element(kind="paragraph", text=text)
    return None


def table_elements(item: Any, page: int | None = None) -> list[Element]:
    """A table becomes GitHub Markdown -- unless it is layout rather than data, which HTML
    exports (SEC filings especially) use a lot: a single row or a single cell is a line of text,
    and a bullet-character column is a list. A table without structure info falls back to its
    flat text rather than being lost."""
    html_text = getattr(item.metadata, "text_as_html", None)
    rows = html_table_rows(html_text) if html_text else []
    if not rows:
        text = clean_text(item.text)
        return [Element(kind="paragraph", text=text, page=page)] if text else []
    if all(len(row) >= 2 and row[0] in _BULLETS for row in rows):
        return [Element(kind="list_item", text=" ".join(c for c in row[1:] if c), page=page) for row in rows]
    if len(rows) == 1:
        return [Element(kind="paragraph", text=" ".join(c for c in rows[0] if c), page=page)]
    return [Element(kind="table", text=rows_to_markdown(rows), page=page)]


def is_dropped(category: str, text: str) -> bool:
    """Page breaks, images and page numbers carry no indexable text; neither does an empty
    element, except a table, whose text may only be in its HTML."""
    return category in _DROPPED_TYPES or (not text and category != "Table")


def clean_text(text: str | None) -> str:
    """unstructured leaves trailing spaces and tab runs from DOCX tab stops; trim the ends only
    (inner whitespace is the cleaner's job, and control characters are handled there too)."""
    return (text or "").strip()


def _heading_level(depth: int | None, offset: int = 0) -> int:
    """category_depth is 0-based (h1 / Heading 1 / Title -> 0); Element levels are 1..6."""
    return max(1, min(6, (depth or 0) + 1 + offset))

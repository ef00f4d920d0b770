"""PPTX: slide structure that unstructured's element stream does not carry.

Slides are the pages of a deck, so every element carries its slide number. Headings come from
the title placeholders (read with python-pptx), not from unstructured's short-line guesses."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from io import BytesIO
from typing import Any

from rag_pipeline.parsing.office.elements import clean_text, is_dropped, map_common, table_elements
from rag_pipeline.parsing.office.text import normalize_whitespace
from rag_pipeline.parsing.types import Element

_TITLE_PLACEHOLDERS = {"TITLE", "CENTER_TITLE", "VERTICAL_TITLE"}
_SUBTITLE_PLACEHOLDERS = {"SUBTITLE"}
_GROUP_SHAPE = 6  # MSO_SHAPE_TYPE.GROUP


@dataclass
class SlideHints:
    """What unstructured's element stream does not say about a slide: which texts are in the
    title/subtitle placeholders, and which paragraphs are auto-numbered list items (unstructured
    only recognises bullet characters, so "1. 2. 3." lists come out as short "titles")."""

    titles: list[str] = field(default_factory=list)
    subtitles: list[str] = field(default_factory=list)
    numbered: set[str] = field(default_factory=set)
    notes: bool = False  # the slide has speaker notes: unstructured yields them first, they are read last


def pptx_as_shown(data: bytes) -> tuple[bytes, int, list[SlideHints]]:
    """`data` with the text PowerPoint does not show taken out (pptx_shown.py) and SmartArt and
    charts made shapes unstructured reads (pptx_graphics.py; `data` itself when neither
    applies), the characters taken out, and one `SlideHints` per slide in deck order. The deck
    is loaded once for all three."""
    import pptx

    from rag_pipeline.parsing.office.archive_parts import without_dangling_relationships
    from rag_pipeline.parsing.office.pptx_graphics import graphics_as_shapes
    from rag_pipeline.parsing.office.pptx_shown import unseen_removed

    data = without_dangling_relationships(data)
    presentation = pptx.Presentation(BytesIO(data))
    hidden = unseen_removed(presentation)
    graphics = graphics_as_shapes(presentation)  # after: a hidden chart stays out
    hints = [_slide_hints(slide) for slide in presentation.slides]
    if hidden or graphics:
        shown = BytesIO()
        presentation.save(shown)
        data = shown.getvalue()
    return data, hidden, hints


def map_slide(items: list[Any], slide_no: int, hints: SlideHints) -> list[Element]:
    """One slide: its title first (unstructured orders shapes top-to-bottom, so a table placed
    above the title would otherwise be filed under the previous slide's heading), then the
    rest in reading order, the speaker notes last. A slide without a title placeholder promotes
    its first short non-list line (a text box used as title) unless it ends with ':' (a lead-in,
    not a title)."""
    if hints.notes and items:
        items = [*items[1:], items[0]]
    title_set, subtitle_set = set(hints.titles), set(hints.subtitles)
    headings: list[Element] = []
    body: list[Element] = []
    promote = not title_set
    for item in items:
        category = type(item).__name__
        text = clean_text(item.text)
        if is_dropped(category, text):
            continue
        key = normalize_whitespace(text)
        if category == "Title" and key in title_set:
            headings.append(Element(kind="heading", text=text, page=slide_no, level=1 if not headings else 2))
        elif category == "Title" and key in subtitle_set:
            body.append(Element(kind="heading", text=text, page=slide_no, level=2))
        elif key in hints.numbered and category != "Table":
            body.append(Element(kind="list_item", text=text, page=slide_no))
        elif category == "Title" and promote and not text.endswith(":"):
            headings.insert(0, Element(kind="heading", text=text, page=slide_no, level=1))
            promote = False
        elif category == "Title":
            body.append(Element(kind="paragraph", text=text, page=slide_no))
        elif category == "Table":
            body.extend(table_elements(item, page=slide_no))
        else:
            mapped = map_common(item, text)
            if mapped:
                mapped.page = slide_no
                body.append(mapped)
    return headings + body


def _slide_hints(slide: Any) -> SlideHints:
    """Placeholder titles/subtitles and auto-numbered paragraphs of one slide, whitespace-
    normalised so they match unstructured's texts."""
    hints = SlideHints()
    for shape in _iter_shapes(slide.shapes):
        if not getattr(shape, "has_text_frame", False):
            continue
        kind = _placeholder_kind(shape)
        for paragraph in shape.text_frame.paragraphs:
            text = normalize_whitespace(paragraph.text)
            if not text:
                continue
            if kind in _TITLE_PLACEHOLDERS:
                hints.titles.append(text)
            elif kind in _SUBTITLE_PLACEHOLDERS:
                hints.subtitles.append(text)
            if paragraph._p.xpath("./a:pPr/a:buAutoNum"):
                hints.numbered.add(text)
    if slide.has_notes_slide:
        frame = slide.notes_slide.notes_text_frame
        hints.notes = bool(frame is not None and frame.text.strip())
    return hints


def _iter_shapes(shapes: Any) -> Iterable[Any]:
    """Every shape, with group shapes replaced by their members (recursively)."""
    for shape in shapes:
        if getattr(shape, "shapes", None) is not None and shape.shape_type == _GROUP_SHAPE:
            yield from _iter_shapes(shape.shapes)
        else:
            yield shape


def _placeholder_kind(shape: Any) -> str:
    """The placeholder type name ("TITLE", "SUBTITLE", ...), or "" for any other shape."""
    if not getattr(shape, "is_placeholder", False):
        return ""
    try:
        return shape.placeholder_format.type.name or ""
    except (AttributeError, ValueError):
        return ""

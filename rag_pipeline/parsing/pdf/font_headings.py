"""Headings from font size / bold statistics of the whole document, for PDFs without a usable
outline. A false heading puts a wrong breadcrumb on every chunk below it, so the rules are
conservative: short lines only, never repeated margin lines, never table cells or labels with
text beside them.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable

from rag_pipeline.parsing.pdf.model import Page, Unit
from rag_pipeline.parsing.pdf.reading_order import column_index, in_margin
from rag_pipeline.parsing.pdf.text import BULLET_RE, SECTION_NO_RE, norm_key


def apply_font_headings(pages: list[Page]) -> None:
    """Headings from font statistics: body size = most common size by characters; short units
    set larger than body, or wholly bold at body size, are headings. Levels come from section
    numbers ("2.1 Scope" = level 2) when the document numbers its headings, else from the
    distinct heading sizes (largest = 1); at most 4 levels."""
    body = _body_size(pages)
    if body is None:
        return
    repeated = _repeated_texts(pages)
    candidates: list[tuple[Unit, float]] = []
    for page in pages:
        for unit in page.units:
            kind = _heading_signal(unit, page, body, repeated)
            if kind:
                candidates.append((unit, unit.lines[0].size if kind == "size" else body))
    numbered = [(size, depth) for unit, size in candidates if (depth := _heading_depth(unit.text))]
    level_of = _levels_by_number(numbered) if len(numbered) >= 3 else _levels_by_rank([s for _, s in candidates])
    for unit, size in candidates:
        unit.kind = "heading"
        unit.level = min(_heading_depth(unit.text) or level_of(size), 4)


_LABEL_GAP = 150  # pt between a form label's end and its value's field: forms align fields in a column


def _has_side_text(unit: Unit, page: Page) -> bool:
    """A label with text right next to it on the same rows (glossary term, form field name) is
    not a heading, nor is the value right of a label ending in ":" (a filled-in form field,
    often set larger than the form's text; its box may start well right of a short label). A
    column gutter is wider than the 45 pt looked at for labels."""
    y0, y1 = unit.bbox[1], unit.bbox[3]
    column = column_index(unit.bbox, page.gutters)
    for other in page.units:
        if other is unit or column_index(other.bbox, page.gutters) != column:
            continue
        if min(y1, other.bbox[3]) - max(y0, other.bbox[1]) <= 2:
            continue
        if unit.bbox[2] <= other.bbox[0] <= unit.bbox[2] + 45:
            return True
        if unit.bbox[0] - _LABEL_GAP <= other.bbox[2] <= unit.bbox[0] and other.text.rstrip().endswith(":"):
            return True
    return False


def _heading_depth(text: str) -> int | None:
    """Depth of a heading's section number: "3" / "Chapter 2" = 1, "2.1" = 2, "A.1.2" = 3."""
    if re.match(r"^(?:chapter|kapitel|chapitre|part|teil|partie|appendix|anhang|annexe)\s+(?:\d+|[IVXLC]+|[A-Z])\b", text, re.I):
        return 1
    match = re.match(r"^((?:\d{1,2}|[A-Z])(?:\.\d{1,3})*)\.?\s+\w", text)
    if not match or (match.group(1).isalpha() and "." not in match.group(1)):
        return None
    number = re.sub(r"(?:\.0)+$", "", match.group(1))  # "2.0 Framework Basics" is a chapter
    return number.count(".") + 1


def _levels_by_number(numbered: list[tuple[float, int]]) -> Callable[[float], int]:
    """Level for a font size, learnt from the numbered headings set in it; an unnumbered heading
    takes the level of the nearest numbered size at or above its own."""
    depths: dict[float, Counter] = {}
    for size, depth in numbered:
        depths.setdefault(size, Counter())[depth] += 1
    levels = {size: c.most_common(1)[0][0] for size, c in depths.items()}

    def level_of(size: float) -> int:
        if size > max(levels):
            return 1
        if size < min(levels):
            return max(levels.values()) + 1
        return levels[min(s for s in levels if s >= size)]

    return level_of


def _levels_by_rank(sizes: list[float]) -> Callable[[float], int]:
    """Level = rank of the size among the distinct heading sizes, largest first."""
    ranked = sorted(set(sizes), reverse=True)
    return lambda size: ranked.index(size) + 1


def _body_size(pages: list[Page]) -> float | None:
    """The most common font size, by characters: the size of the running text."""
    sizes: Counter = Counter()
    for page in pages:
        for unit in page.units:
            for line in unit.lines:
                sizes[line.size] += len(line.text)
    return sizes.most_common(1)[0][0] if sizes else None


def _repeated_texts(pages: list[Page]) -> set[str]:
    """Texts (digits ignored) found on 3+ pages: running headers, footers, form labels."""
    seen: Counter = Counter()
    for page in pages:
        keys = {_repeat_key(u.text) for u in page.units if u.lines}
        seen.update(keys)
    return {key for key, n in seen.items() if n >= 3}


def _repeat_key(text: str) -> str:
    """Comparison key that ignores numbers, so "Page 3" and "Page 4" count as the same text."""
    return re.sub(r"\d+", "#", norm_key(text))


def _heading_signal(unit: Unit, page: Page, body: float, repeated: set[str]) -> str | None:
    """'size' or 'bold' when the unit looks like a heading, else None."""
    if unit.kind not in ("paragraph", "list_item") or not unit.lines or len(unit.lines) > 3:
        return None
    text = unit.text
    letters = sum(ch.isalpha() for ch in text)
    if letters < 2 or len(text) > 150 or in_margin(unit.bbox, page.height):
        return None
    if _repeat_key(text) in repeated:
        return None
    if not (text[0].isalnum() or text[0] in "\"'(\u201c\u00ab") or "@" in text or "http" in text:
        return None
    if text[-1] in ".,;" and not SECTION_NO_RE.match(text.rstrip(".")):
        return None
    sizes = {line.size for line in unit.lines}
    if len(sizes) > 1 or any(line.mono or line.tabular for line in unit.lines):
        return None
    if _has_side_text(unit, page):
        return None
    if page.ocr:
        # OCR sizes are estimates and there is no bold: only clearly larger single lines count
        return "size" if len(unit.lines) == 1 and unit.lines[0].size >= 1.3 * body and letters >= 4 else None
    size = unit.lines[0].size
    if size >= body + 1.0 and letters >= 0.4 * len(text.replace(" ", "")):
        return "size"
    if (
        size >= body - 0.5
        and all(line.bold for line in unit.lines)
        and len(text) <= 100
        and not BULLET_RE.match(text)
        and letters >= 0.5 * len(text.replace(" ", ""))
    ):
        return "bold"
    return None

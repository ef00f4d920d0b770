"""Headings for documents that have no outline: paragraphs that are headings by their form.

SEC filings, government reports and Word files typed without heading styles mark their headings
as bold, numbered ("1.2 Scope", "Item 7.", "PART II", "§ 3", "Article 5") or ALL-CAPS short
paragraphs. Without them every chunk of such a document has an empty section path. This pass
turns those paragraphs into headings, but only in documents whose parser found fewer than
three headings: where real structure exists it is trusted, because a false heading puts a wrong
breadcrumb on every chunk below it.

What is never a heading: table cells and list items (only paragraphs are considered), sentences
(lower-case continuation, a final period or comma), long or huge paragraphs, texts repeated
on several pages (running headers, form labels), and runs of three or more look-alike
candidates with no body between them (a numbered list, a column of ALL-CAPS words, a table of
contents set as paragraphs).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import replace

from rag_pipeline.parsing.types import Element

MAX_HEADING_CHARS = 120
MAX_HEADING_WORDS = 14
MIN_OWN_HEADINGS = 3  # a document with this many headings of its own has an outline: trust it
_RUN_LIMIT = 3  # this many look-alike candidates in a row, with no body between, are a list

# Keyword headings, outermost first: (style, pattern). The label may stand alone ("PART I",
# "§ 3") or be followed by a title; a lower-case word after it makes it a sentence instead.
_KEYWORD_STYLES: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("part", re.compile(r"^(?:PART|Part|TEIL|Teil|PARTIE|Partie|ČÁST|Část|TITLE|Title)\s+(?:[IVXLC]+|\d{1,3}|[A-Z])\b")),
    ("chapter", re.compile(r"^(?:CHAPTER|Chapter|KAPITEL|Kapitel|CHAPITRE|Chapitre|HLAVA|Hlava|DÍL|Díl)\s+(?:[IVXLC]+|\d{1,3}|[A-Z])\b")),
    ("item", re.compile(r"^(?:ITEM|Item)\s+\d{1,2}[A-C]?\b\.?")),
    ("article", re.compile(r"^(?:ARTICLE|Article|ARTIKEL|Artikel|Článek|ČLÁNEK|Čl\.|Art\.)\s*\d{1,4}[a-z]?\b\.?")),
    ("section", re.compile(r"^(?:SECTION|Section|Sec\.|Abschnitt)\s+\d{1,3}(?:\.\d{1,3})*\b\.?")),
    ("paragraph_sign", re.compile(r"^§\s*\d{1,4}[a-z]?\b\.?")),
)
# "1. Scope" or "2.1 Scope": a lone number without its period ("24 Agent ID") is a table row.
_KEYWORD_START = re.compile("|".join(p.pattern for _, p in _KEYWORD_STYLES))
_NUMBERED = re.compile(r"^(\d{1,2}\.|\d{1,2}(?:\.\d{1,3}){1,4}\.?)\s+(?=\S)")
_LETTERED = re.compile(r"^([A-Z])\.\s+(?=\S)")
_ROMAN = re.compile(r"^([IVX]{1,5})\.\s+(?=\S)")
# Order of the styles from outermost to innermost; a document's own styles keep this order.
_RANK = ["part", "chapter", "item", "article", "section", "paragraph_sign", "roman", "caps",
         "numbered1", "lettered", "numbered2", "numbered3", "numbered4", "bold"]


def promote_paragraph_headings(elements: Sequence[Element]) -> list[Element]:
    """`elements` with heading-like paragraphs turned into headings, when the document has too
    few headings of its own; otherwise unchanged. Texts are never altered, so offsets into the
    cleaned text stay valid."""
    headings = [e for e in elements if e.kind == "heading"]
    if len(headings) >= MIN_OWN_HEADINGS:
        return list(elements)
    repeated = _repeated(elements)
    styles = [_style(e, repeated) for e in elements]
    _drop_runs(styles)
    _drop_without_body(styles, elements)
    used = sorted({s for s in styles if s}, key=_RANK.index)
    if not used:
        return list(elements)
    base = max((e.level or 1 for e in headings), default=0)
    level_of = {s: min(6, base + i + 1) for i, s in enumerate(used)}
    return [replace(e, kind="heading", level=level_of[s]) if s else e for e, s in zip(elements, styles)]


def heading_style(text: str, bold: bool = False) -> str | None:
    """The heading style a paragraph's text has ("item", "numbered2", "caps", "bold", ...), or
    None when it reads as body text."""
    text = " ".join(text.split())
    words = text.split()
    if not words or len(text) > MAX_HEADING_CHARS or len(words) > MAX_HEADING_WORDS:
        return None
    if sum(ch.isalpha() for ch in text) < 2 and not text.startswith("§"):
        return None
    if text[-1] in ",;" or "http" in text or "@" in text or any(ch in text for ch in "=|<>{}[]*"):
        return None
    if sum(ch.isalpha() for ch in text) < 0.5 * len(text.replace(" ", "")) and not _KEYWORD_START.match(text):
        return None  # mostly figures: a table row or a form line
    for style, pattern in _KEYWORD_STYLES:
        match = pattern.match(text)
        if match:
            rest = text[match.end():].lstrip(" .:-\u2013\u2014")
            return style if not rest or not rest[0].islower() else None
    if text[-1] in ".:!?" or not (text[0].isupper() or text[0].isdigit()):
        return None
    for style, pattern in (("numbered", _NUMBERED), ("lettered", _LETTERED), ("roman", _ROMAN)):
        match = pattern.match(text)
        if match:
            rest = text[match.end():]
            if not rest[0].isupper() or len(rest.split()) > 10:
                return None
            if style == "numbered":
                return f"numbered{min(4, match.group(1).rstrip('.').count('.') + 1)}"
            return style
    cased = [ch for ch in text if ch.isalpha() and ch.lower() != ch.upper()]
    if len(cased) >= 4 and all(ch.isupper() for ch in cased) and len(words) <= 10:
        return "caps"
    if bold and len(words) <= 12 and not text[0].isdigit():
        return "bold"
    return None


def _style(element: Element, repeated: set[str]) -> str | None:
    if element.kind != "paragraph" or _key(element.text) in repeated:
        return None
    return heading_style(element.text, bool(element.bold))


def _key(text: str) -> str:
    """Comparison key ignoring case, spacing and numbers: "Page 3" and "Page 4" are one text."""
    return re.sub(r"\d+", "#", " ".join(text.split()).casefold())


def _repeated(elements: Sequence[Element]) -> set[str]:
    """Short texts found three or more times: running headers, footers and form labels."""
    counts = Counter(_key(e.text) for e in elements if e.kind == "paragraph" and len(e.text) <= MAX_HEADING_CHARS)
    return {key for key, n in counts.items() if n >= 3}


def _drop_runs(styles: list[str | None]) -> None:
    """Three or more candidates of one style in a row, nothing between: a list, not headings."""
    i = 0
    while i < len(styles):
        j = i
        while styles[i] and j < len(styles) and styles[j] == styles[i]:
            j += 1
        if j - i >= _RUN_LIMIT:
            styles[i:j] = [None] * (j - i)
        i = max(j, i + 1)


def _drop_without_body(styles: list[str | None], elements: Sequence[Element]) -> None:
    """A heading introduces something: a candidate that ends the document, or that only other
    candidates follow, is left as text (a closing line, a signature block)."""
    has_body_after = False
    for i in range(len(styles) - 1, -1, -1):
        if styles[i] is None:
            has_body_after = has_body_after or elements[i].kind != "heading"
        elif not has_body_after:
            styles[i] = None

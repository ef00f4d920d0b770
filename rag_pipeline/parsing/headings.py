"""Heading text as a reader would quote it, whatever the publishing tool added to it.

A heading's text becomes a section path, which is shown in citations, matched by section
references ("section 10.8") and embedded into every chunk's identity line. Documentation tools
decorate headings with things that are not part of the title: Sphinx and MkDocs append a "¶"
permalink, Docusaurus a zero-width "hash link", Hugo and rustdoc a "#" or "§" anchor, MediaWiki
an "[edit]" link, and Pandoc/kramdown Markdown an attribute list "{#id .class}". The HTML side
removes those links structurally (`html_chrome.strip_heading_anchors`); this module tidies the
text of every heading of every format, for what survives as plain characters (a Markdown file
pasted from a Sphinx page still ends its headings with "¶").
"""

from __future__ import annotations

import re
import unicodedata

from rag_pipeline.parsing.types import ParsedDocument

# Characters that are never part of a heading's words but mark a permalink when they end it.
# '#' and '§' are not here: "C#" and "Article 5 §" are words; only the HTML pass, which sees the
# link, removes them.
_PERMALINK_GLYPHS = "\u00b6\U0001f517\u2693\u26d3"  # pilcrow, link symbol, anchor, chains
_TRAILING = " \t\n\r\f\v\u00a0" + _PERMALINK_GLYPHS
# Pandoc / kramdown / PHP Markdown Extra heading attributes: "## Refunds {#refunds .policy}".
_ATTRIBUTE_LIST_RE = re.compile(r"\{\s*[#.][^{}]*\}")
_KEPT_FORMAT_CHARS = "\u200c\u200d"  # zero-width (non-)joiners shape Persian, Indic and emoji text


def tidy_heading(text: str) -> str:
    """The heading without invisible format characters, a trailing attribute list or a
    trailing permalink glyph; inner text is left exactly as written. Linear in the text's
    length (a hostile file can hold a megabyte-long heading)."""
    visible = "".join(ch for ch in text if ch in _KEPT_FORMAT_CHARS or unicodedata.category(ch) != "Cf")
    for _ in range(2):  # "Title {#id} ¶" and "Title ¶ {#id}" both occur in pasted text
        visible = _strip_attribute_list(visible.rstrip(_TRAILING))
    return visible.strip()


def _strip_attribute_list(text: str) -> str:
    if not text.endswith("}"):
        return text
    start = text.rfind("{")
    if start <= 0 or not _ATTRIBUTE_LIST_RE.fullmatch(text, start):
        return text  # a heading that is only "{#x}" keeps it: it is then the title
    return text[:start]


def tidy_headings(document: ParsedDocument) -> ParsedDocument:
    """Tidy every heading in place; a heading that was nothing but decoration is dropped (an
    empty heading would open an unnamed section)."""
    kept = []
    for element in document.elements:
        if element.kind == "heading":
            element.text = tidy_heading(element.text)
            if not element.text:
                continue
        kept.append(element)
    document.elements = kept
    return document

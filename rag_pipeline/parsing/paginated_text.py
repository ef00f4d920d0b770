"""Text printed in pages, read as its reader reads it: RFCs and Internet-Drafts, line-printer
reports, manuals saved from a terminal, as a .txt file or as the <pre> pages of an HTML rendering.

Such text repeats a running header and footer on every page ("RFC 9110   HTTP Semantics   June
2022", "Fielding, et al.   Standards Track   [Page 12]") and marks its sections with unindented
lines ("4.2.  Folders") above an indented body. Read as ordinary paragraphs, the furniture lands
inside the chunk at every page break, a paragraph the break cuts becomes two, and no line is a
heading: no chunk had a section path, and "section 4.2 of the draft" found nothing by its
number. This module rebuilds what the pages show:

- pages are split at form feeds, or, where a copy lost them, after each "[Page N]" footer;
- a running header or footer is a short line among the first or last EDGE_LINES non-blank lines
  of a page whose text recurs there on at least MIN_PAGES pages (and on a share of them), the
  same or but for a number that goes up with the page; once one is found, a line on every page
  but one is too (the first page of an RFC has no running header). Found by repetition, never
  by wording, so any language and house style is read. A text without such lines is not
  paginated and is left to the caller's reading (None);
- a paragraph the page break cut is one paragraph again (the next page goes on in lower case,
  or the last line ended in a comma, hyphen or open parenthesis), recorded with both pages;
- where the body is indented (RFC style), an unindented single line that does not end as a
  sentence and is no table-of-contents line is a heading; its number says its level ("4" is 1,
  "4.2.1" is 3, "Appendix A" 1, "A.2" 2), an unnumbered one ("Abstract", "Security
  Considerations") is level 1. Where the body is not indented nothing is guessed a heading:
  an unindented line means nothing there;
- a block of columns or drawings (runs of spaces inside most of its lines, box rules), or a
  multi-line block set in from the body (a message or code example), keeps its lines as code; a bulleted block is a list item; any other block is one paragraph, its lines
  joined. Every element carries its page.
"""

from __future__ import annotations

import math
import re
import statistics
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from rag_pipeline.parsing.types import Element

FORM_FEED = "\f"
MIN_PAGES = 3  # a running header or footer recurs on at least this many pages
MIN_SHARE = 0.3  # ... and on this share of them
EDGE_LINES = 2  # non-blank lines at each end of a page that may be a running header or footer
MAX_FURNITURE_CHARS = 120  # longer lines are text, however often they recur
MAX_HEADING_CHARS = 100
MIN_PRE_PAGE_LINES = 15  # an HTML <pre> is a printed page only if it is as long as one (RFC pages are ~56 lines)
_PAGE_FOOTER = re.compile(r"\[\s*page\s+\d{1,5}\s*\]\s*$", re.IGNORECASE)  # "de Jong   [Page 1]"
_ANY_PAGE_FOOTER = re.compile(_PAGE_FOOTER.pattern, re.IGNORECASE | re.MULTILINE)  # any line of a text
_DIGITS = re.compile(r"\d+")
_DOT_LEADERS = re.compile(r"(?:\.\s?){4,}\s*\d*\s*$")  # "1. Introduction ........ 2", "1. Intro . . . . 2"
_NUMBERED = re.compile(r"^(?:(?:appendix|annex)\s+)?(?P<number>[0-9]{1,3}|[A-Z])(?P<sub>(?:\.[0-9]{1,3})*)\.?\s+\S",
                       re.IGNORECASE)
_BULLET = re.compile(r"^[*o+\-\u2022\u25e6\u00b7]\s+")
_INNER_GAP = re.compile(r"\S {3,}\S")  # columns: a run of spaces inside a line
_RULE = re.compile(r"^[+|]?[-=+|_ ]{6,}[+|]?$")  # box drawings and table rules of ASCII art


@dataclass
class _Block:
    lines: list[str]  # as printed, furniture left out
    page: int
    page_end: int


def read_text(text: str) -> list[Element] | None:
    """The elements of paginated `text`; None when it shows no running header or footer on
    MIN_PAGES pages (not paginated: the caller reads it as plain text)."""
    return read_pages(split_pages(text))


def read_pages(pages: Sequence[str]) -> list[Element] | None:
    """The elements of text already split into its pages (an HTML rendering's <pre> pages)."""
    if len(pages) < MIN_PAGES:
        return None
    page_lines = [page.replace("\r\n", "\n").replace("\r", "\n").split("\n") for page in pages]
    furniture = _furniture(page_lines)
    if not furniture:
        return None
    blocks = _joined_across_pages(_blocks(page_lines, furniture))
    indent = _body_indent(blocks)
    return [element for block in blocks for element in _elements(block, indent)]


def split_pages(text: str) -> list[str]:
    """Pages at form feeds; where there are none, after each "[Page N]" footer line."""
    if FORM_FEED in text:
        return text.split(FORM_FEED)
    if not _ANY_PAGE_FOOTER.search(text):
        return [text]  # most text: one scan in C, no loop over its lines
    pages, start = [], 0
    for match in re.finditer(r"[^\n]*\n?", text):
        if _PAGE_FOOTER.search(match.group().rstrip("\n")):
            pages.append(text[start:match.end()])
            start = match.end()
    if text[start:].strip() or not pages:
        pages.append(text[start:])
    return pages


def read_pre_pages(elements: list[Element]) -> list[Element] | None:
    """An HTML rendering of paginated text (a <pre> per page, as the IETF's renderings of RFCs
    and drafts print it, or one <pre> holding every page): the elements before its first page
    as they were, then its pages read; None when the elements are no such rendering."""
    first = next((i for i, element in enumerate(elements) if element.kind == "code"), None)
    if first is None or any(element.kind != "code" for element in elements[first:]):
        return None
    pages = [page for element in elements[first:] for page in split_pages(element.text)]
    if statistics.median(page.count("\n") + 1 for page in pages) < MIN_PRE_PAGE_LINES:
        return None  # short listings, each opening "#!/bin/sh": code, not printed pages
    read = read_pages(pages)
    return None if read is None else list(elements[:first]) + read


def _key(line: str) -> str:
    """A line as furniture is compared: digits aside, spaces collapsed, case folded."""
    return _DIGITS.sub("#", " ".join(line.split())).casefold()


def _edges(lines: list[str]) -> list[int]:
    """Indexes of the first and last EDGE_LINES non-blank lines of a page."""
    filled = [i for i, line in enumerate(lines) if line.strip()]
    return sorted(set(filled[:EDGE_LINES] + filled[-EDGE_LINES:]))


def _furniture(page_lines: list[list[str]]) -> set[str]:
    """The keys of running headers and footers: edge lines recurring on enough pages, the same
    text on each or the same text but for a number that goes up with the page ("[Page 7]",
    "Page 7 of 40"; "Chapter 2" opening page 9 after "Chapter 1" on page 2 is a heading, not
    furniture). Empty when fewer than MIN_PAGES pages hold one."""
    seen: dict[str, dict[int, str]] = {}
    for number, lines in enumerate(page_lines):
        for i in _edges(lines):
            if len(lines[i].strip()) <= MAX_FURNITURE_CHARS:
                seen.setdefault(_key(lines[i]), {}).setdefault(number, " ".join(lines[i].split()))
    needed = max(MIN_PAGES, math.ceil(MIN_SHARE * len(page_lines)))
    keys = {key for key, found in seen.items() if len(found) >= needed and _running(found, needed)}
    if not keys:
        return set()
    # a paginated text's other running line may start on page 2 of 3 (a first page has no header)
    nearly_all = max(2, len(page_lines) - 1)
    keys |= {key for key, found in seen.items() if len(found) >= nearly_all and _running(found, nearly_all)}
    marked = sum(any(_key(lines[i]) in keys for i in _edges(lines)) for lines in page_lines)
    return keys if marked >= MIN_PAGES else set()


def _running(found: dict[int, str], needed: int) -> bool:
    """Whether a line's occurrences (page index -> text) are one running line: the same text on
    `needed` pages, or a number at one place in it that keeps its distance to the page index."""
    if not any(ch.isalnum() for ch in next(iter(found.values()))):
        return False  # rules and dashes ("-----") are drawn, not run
    if max(Counter(found.values()).values()) >= needed:
        return True
    numbers = {page: [int(n) for n in _DIGITS.findall(text)] for page, text in found.items()}
    places = min(map(len, numbers.values()))
    return any(max(Counter(n[k] - page for page, n in numbers.items()).values()) >= needed for k in range(places))


def _blocks(page_lines: list[list[str]], furniture: set[str]) -> list[_Block]:
    """Runs of non-blank lines, furniture left out; a page break ends a block."""
    blocks: list[_Block] = []
    for number, lines in enumerate(page_lines, 1):
        edges = set(_edges(lines))
        current: list[str] = []
        for i, line in enumerate(lines):
            line = line.rstrip()
            if i in edges and _key(line) in furniture:
                line = ""
            if line.strip():
                current.append(line.replace("\t", "    "))
            elif current:
                blocks.append(_Block(current, number, number))
                current = []
        if current:
            blocks.append(_Block(current, number, number))
    return blocks


def _joined_across_pages(blocks: list[_Block]) -> list[_Block]:
    """A paragraph the page break cut, whole again: the next page goes on in lower case, or the
    page's last line ended in a comma, hyphen or open parenthesis."""
    joined: list[_Block] = []
    for block in blocks:
        if joined and block.page == joined[-1].page_end + 1 and _continues(joined[-1].lines[-1], block.lines[0]):
            joined[-1].lines.extend(block.lines)
            joined[-1].page_end = block.page_end
        else:
            joined.append(block)
    return joined


def _continues(last: str, first: str) -> bool:
    head = first.lstrip()
    return bool(head) and (head[0].islower() or last.rstrip().endswith((",", "-", "(")))


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def _body_indent(blocks: list[_Block]) -> int:
    """The indentation most lines of multi-line blocks have: the body's left margin."""
    margins = Counter(_indent(line) for block in blocks if len(block.lines) > 1 for line in block.lines)
    return margins.most_common(1)[0][0] if margins else 0


def _elements(block: _Block, body_indent: int) -> list[Element]:
    lines = block.lines
    first = lines[0].strip()
    pages = {"page": block.page, "page_end": block.page_end if block.page_end != block.page else None}
    if body_indent >= 2 and _indent(lines[0]) < body_indent and _is_heading(first) and (
            len(lines) == 1 or min(map(_indent, lines[1:])) >= body_indent):  # a heading with its body right under it
        heading = Element(kind="heading", text=" ".join(first.split()), level=_level(first), page=block.page)
        return [heading] + (_elements(_Block(lines[1:], block.page, block.page_end), body_indent) if len(lines) > 1 else [])
    if _preformatted(lines, body_indent) or any(_DOT_LEADERS.search(line) for line in lines):
        margin = min(_indent(line) for line in lines)
        return [Element(kind="code", text="\n".join(line[margin:] for line in lines), **pages)]
    if _BULLET.match(first):
        return [Element(kind="list_item", text=_BULLET.sub("", _joined(item), count=1), **pages) for item in _items(lines)]
    return [Element(kind="paragraph", text=_joined(line.strip() for line in lines), **pages)]


def _items(lines: list[str]) -> list[list[str]]:
    """A bulleted block's items: a new one at each line opening with a bullet, its wrapped lines after it."""
    items: list[list[str]] = []
    for line in lines:
        if _BULLET.match(line.strip()) or not items:
            items.append([])
        items[-1].append(line.strip())
    return items


def _is_heading(line: str) -> bool:
    """An unindented line that reads as a title: short, not a sentence, no contents line."""
    return (len(line) <= MAX_HEADING_CHARS and any(ch.isalpha() for ch in line) and not line.endswith((".", ",", ";"))
            and not _DOT_LEADERS.search(line) and not _INNER_GAP.search(line.split("  ", 1)[-1] if _NUMBERED.match(line) else line))


def _level(heading: str) -> int:
    """1 + the dots of its number ("4.2.1" is 3); an unnumbered heading is 1."""
    numbered = _NUMBERED.match(heading)
    return min(6, 1 + numbered.group("sub").count(".")) if numbered else 1


def _preformatted(lines: list[str], body_indent: int) -> bool:
    """Columns or a drawing (most lines hold a run of spaces inside them, or a box rule), or an
    example set in from the body (every line of a multi-line block indented past its margin, as
    RFCs print messages and code), except a bulleted one."""
    inner = sum(bool(_INNER_GAP.search(line.strip()) or _RULE.match(line.strip())) for line in lines)
    set_in = len(lines) > 1 and not _BULLET.match(lines[0].strip()) and min(map(_indent, lines)) >= body_indent + 3
    return inner * 2 > len(lines) or set_in


def _joined(lines: Iterable[str]) -> str:
    """Lines of one paragraph as one line; a line ending in a hyphen ("Internet-" / "Drafts")
    joins the next without a space."""
    parts: list[str] = []
    for line in lines:
        if parts and not parts[-1].endswith("-"):
            parts.append(" ")
        parts.append(line)
    return "".join(parts)  # one join: a block of 100,000 lines is not copied 100,000 times

"""Headings from the document outline (bookmarks), when it matches the page text.

The outline is the author's own heading structure, so it is preferred over font guesses; but
outlines are often wrong (paragraphs pasted in, links to other files, flat levels), so it is used
only when enough of its titles are found, in order, in the text of their pages.
"""

from __future__ import annotations

import re

import pymupdf

from rag_pipeline.parsing.pdf.model import Page, Unit, union
from rag_pipeline.parsing.pdf.paragraphs import make_unit, split_block
from rag_pipeline.parsing.pdf.text import SECTION_NO_RE, norm_key


def _strip_number(title: str) -> str:
    """The title without its section number ("2.1 Scope" -> "Scope")."""
    match = SECTION_NO_RE.match(title)
    return title[match.end():].strip() if match else title.strip()


def _outline_entries(doc: pymupdf.Document) -> list[tuple[int, str, int]]:
    """(level, title, page) from the outline, without entries that are not headings (paragraphs
    pasted into the outline, links to other files) and with levels rebuilt from section numbers
    when the outline is flat."""
    try:
        toc = doc.get_toc(simple=True)
    except Exception:  # noqa: BLE001 -- a broken outline falls back to font headings
        return []
    entries = []
    for level, title, page in toc:
        title = re.sub(r"\s+", " ", title or "").strip()
        if page < 1 or page > doc.page_count or not title or len(title) > 120 or len(title.split()) > 16:
            continue
        if title.lower().endswith(".pdf"):
            continue
        entries.append((level, title, page))
    if entries and len({e[0] for e in entries}) == 1:
        entries = _levels_from_numbers(entries)
    return [(min(max(level, 1), 6), title, page) for level, title, page in entries]


def _levels_from_numbers(entries: list[tuple[int, str, int]]) -> list[tuple[int, str, int]]:
    """A flat outline whose titles are numbered ("2.3.59.1", "2.3.59.1.1") gets its levels from the
    numbering depth; exhibits like "2.3.59-1" count one deeper than their parent."""
    depths = []
    for _, title, _ in entries:
        match = SECTION_NO_RE.match(title)
        has_number = match is not None and any(c.isdigit() for c in match.group(1))
        depths.append(len(re.split(r"[.\-]", match.group(1))) if has_number else None)
    numbered = [d for d in depths if d]
    if len(numbered) < len(entries) / 2:
        return entries
    base = min(numbered)
    return [(1 if d is None else d - base + 1, title, page) for d, (_, title, page) in zip(depths, entries)]


def apply_outline_headings(doc: pymupdf.Document, pages: list[Page]) -> bool:
    """Mark outline titles found in the page text as headings. Returns False (and changes
    nothing) when the outline does not match the text well enough to be trusted."""
    entries = _outline_entries(doc)
    if len(entries) < 2:
        return False
    by_number = {p.number: p for p in pages}
    matches = []
    cursors: dict[int, tuple[int, int]] = {}
    for level, title, page_no in entries:
        for candidate in (page_no, page_no + 1):
            page = by_number.get(candidate)
            hit = page and _find_title(page, title, cursors.get(candidate, (0, 0)))
            if hit:
                matches.append((page, hit, level, title))
                cursors[candidate] = (hit[0], hit[2])
                break
    if len(matches) < 3 or len(matches) < 0.4 * len(entries):
        return False
    for page in {id(m[0]): m[0] for m in matches}.values():
        hits = [(hit, level, title) for p, hit, level, title in matches if p is page]
        page.units = _split_out_headings(page.units, hits)
    return True


def _find_title(page: Page, title: str, start: tuple[int, int]) -> tuple[int, int, int, int] | None:
    """(unit index, first line, end line, number line or -1) of the rows spelling `title`."""
    key, rest = norm_key(title), norm_key(_strip_number(title))
    number = SECTION_NO_RE.match(title)
    number_key = norm_key(number.group(1)) if number else ""
    truncated = title.endswith("...") or title.endswith("\u2026")
    if truncated:
        key = norm_key(title.rstrip(".\u2026"))
    for u in range(start[0], len(page.units)):
        unit = page.units[u]
        if unit.kind == "table" or unit.kind == "heading":
            continue
        first = start[1] if u == start[0] else 0
        for i in range(first, len(unit.lines)):
            acc = ""
            for j in range(i, min(i + 6, len(unit.lines))):
                acc += norm_key(unit.lines[j].text)
                if acc == key or (truncated and acc.startswith(key) and len(key) >= 20):
                    return (u, i, j + 1, -1)
                if rest and len(rest) >= 3 and acc == rest:
                    num_line = _number_line(unit, i, number_key)
                    return (u, i, j + 1, num_line)
                if len(acc) >= len(key) and len(acc) >= len(rest):
                    break
    return None


def _number_line(unit: Unit, i: int, number_key: str) -> int:
    """The row holding just the section number, shortly above the title rows (side headings)."""
    if not number_key:
        return -1
    for k in range(max(0, i - 2), i):
        if norm_key(unit.lines[k].text) == number_key:
            return k
    return -1


def _split_out_headings(units: list[Unit], hits: list[tuple[tuple[int, int, int, int], int, str]]) -> list[Unit]:
    """Cut each matched title out of its unit as a heading; what was before and after it in the
    unit stays as paragraphs (the heading first, so a side heading precedes its date line)."""
    by_unit: dict[int, list] = {}
    for hit, level, title in hits:
        by_unit.setdefault(hit[0], []).append((hit, level, title))
    out: list[Unit] = []
    for u, unit in enumerate(units):
        if u not in by_unit:
            out.append(unit)
            continue
        pos = 0
        for (_, i, j, num), level, title in sorted(by_unit[u], key=lambda h: h[0][1]):
            if i < pos:
                continue
            before = [line for k, line in enumerate(unit.lines[pos:i], start=pos) if k != num]
            heading_lines = unit.lines[i:j]
            if num >= 0:
                heading_lines = [unit.lines[num]] + heading_lines
            out.append(Unit("heading", union(line.bbox for line in heading_lines), heading_lines, level, heading_text=title))
            if before:
                out.append(make_unit(before))
            pos = j
        if unit.lines[pos:]:
            out.extend(split_block(unit.lines[pos:]) if pos else [unit])
    return out

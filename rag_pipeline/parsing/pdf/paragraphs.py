"""Rows to paragraph units: paragraphs, list items and captions.

PyMuPDF's blocks do not match paragraphs: one block often holds a heading and its paragraph, or
several bullets, and one paragraph is sometimes split over two blocks mid-sentence. The rules here
split and re-join blocks on cheap signals (bullets, numbering, font changes, vertical gaps).
"""

from __future__ import annotations

import re

from rag_pipeline.parsing.pdf.model import Line, Unit, union
from rag_pipeline.parsing.pdf.text import BULLET_RE

_NUMBERED_RE = re.compile(r"^(?:\(?\d{1,3}[.)]|\(\d{1,3}\)|\(?[a-z][.)]|\([a-z]\)|\(?[ivxl]{1,5}[.)]|\([ivxl]{1,5}\))\s+\S", re.I)
_CAPTION_RE = re.compile(r"^(?:Figure|Fig\.|Table|Tab\.|Exhibit|Abbildung|Abb\.|Tabelle|Tableau|Graphique)\s*[\dIVX]+(?:[.\-]\d+)*\s*[.:\u2013\u2014]", re.I)
_SENTENCE_END = ".:;!?"


def split_block(rows: list[Line]) -> list[Unit]:
    """Split one PyMuPDF block into paragraphs / list items: PyMuPDF often puts a heading and its
    paragraph, or several bullets, into one block."""
    units: list[list[Line]] = []
    for i, row in enumerate(rows):
        if not units or _starts_new_unit(rows, i, units[-1]):
            units.append([row])
        else:
            units[-1].append(row)
    return [make_unit(lines) for lines in units]


def _starts_new_unit(rows: list[Line], i: int, current: list[Line]) -> bool:
    """True when row `i` starts a new unit: a bullet, a numbered item after a sentence end, a font
    change, a bold run-in heading, or a vertical gap."""
    row, prev = rows[i], rows[i - 1]
    if not row.horizontal or not prev.horizontal:
        return True
    if BULLET_RE.match(row.text):
        return True
    if _NUMBERED_RE.match(row.text) and (prev.text[-1] in _SENTENCE_END or _is_list_start(current[0].text)):
        return True
    if abs(row.size - prev.size) >= 1.5:
        return True
    if row.bold != prev.bold and (len(prev.text) < 120 if prev.bold else len(row.text) < 120):
        # a bold line on its own (a run-in heading) next to regular text
        if (prev.bold and len(current) <= 3) or (row.bold and i + 1 < len(rows) and not rows[i + 1].bold):
            return True
    line_height = max(prev.bbox[3] - prev.bbox[1], 1.0)
    gap = row.bbox[1] - prev.bbox[3]
    return gap > 0.9 * line_height


def _is_list_start(text: str) -> bool:
    """True when the text starts with a bullet or an item number."""
    return bool(BULLET_RE.match(text) or _NUMBERED_RE.match(text))


def make_unit(lines: list[Line]) -> Unit:
    """A unit of these rows, its kind told by how the first row starts."""
    first = lines[0].text
    if BULLET_RE.match(first) or _NUMBERED_RE.match(first):
        kind = "list_item"
    elif _CAPTION_RE.match(first):
        kind = "caption"
    else:
        kind = "paragraph"
    return Unit(kind=kind, bbox=union(line.bbox for line in lines), lines=lines)


def merge_broken_paragraphs(units: list[Unit]) -> list[Unit]:
    """Re-join a paragraph that PyMuPDF split into two blocks mid-sentence ("improv-" / "ing the
    retrieval ..."): the next unit starts right below, in the same font, with a lower-case word."""
    out: list[Unit] = []
    for unit in units:
        prev = out[-1] if out else None
        if prev is not None and _continues_paragraph(prev, unit):
            prev.lines.extend(unit.lines)
            prev.bbox = union([prev.bbox, unit.bbox])
            continue
        out.append(unit)
    return out


def _continues_paragraph(prev: Unit, unit: Unit) -> bool:
    """True when `unit` carries on the sentence of `prev`: same font, right below it, within its
    left and right edges, starting lower-case or after a hyphen or comma."""
    if prev.kind not in ("paragraph", "list_item") or unit.kind != "paragraph":
        return False
    last, first = prev.lines[-1], unit.lines[0]
    if not (last.horizontal and first.horizontal) or last.size != first.size or last.bold != first.bold:
        return False
    gap = first.bbox[1] - last.bbox[3]
    height = last.bbox[3] - last.bbox[1]
    if not -0.5 * height <= gap <= height:
        return False
    if not prev.bbox[0] - 5 <= first.bbox[0] <= prev.bbox[2]:
        return False
    return first.text[:1].islower() or last.text[-1:] in "-,"

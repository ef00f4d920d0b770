"""Visual text rows from PyMuPDF's text dictionary.

PyMuPDF's "lines" are runs of spans, not what a reader sees as a line: one visual row can come
as several lines (a section number and its title, a superscript), and an OCR block can hold two
columns side by side. This module rebuilds the rows a reader sees, with the font facts (size,
bold, monospace) that the paragraph and heading rules rely on.
"""

from __future__ import annotations

import re
from collections import Counter

from rag_pipeline.parsing.pdf.model import Box, Line, union
from rag_pipeline.parsing.pdf.text import SYMBOL_FONT_BULLETS
from rag_pipeline.parsing.superscripts import marked


def text_rows(text_dict: dict, table_boxes: list[Box]) -> list[list[Line]]:
    """Per PyMuPDF block (split where it holds two columns), its visual rows; text inside a
    table area is left to the table."""
    blocks: list[list[Line]] = []
    for block in text_dict["blocks"]:
        if block["type"] != 0:
            continue
        for column in _split_columns(block["lines"]):
            pieces = [
                piece
                for line in column
                if (piece := _line_piece(line)) is not None and not _inside_any(piece.bbox, table_boxes)
            ]
            rows = _merge_rows(pieces)
            if rows:
                blocks.append(rows)
    return blocks


def _split_columns(lines: list[dict]) -> list[list[dict]]:
    """Split a block that holds two text columns side by side. OCR output does this: Tesseract's
    lines of both columns end up in one block, a few lines even run across the gutter. A gutter
    counts when at least three rows have text on both sides of it, so a table row or a running
    header line stays whole."""
    if len(lines) < 6 or _same_row_pairs(lines) < 3:
        return [lines]
    x0 = int(min(line["bbox"][0] for line in lines))
    x1 = int(max(line["bbox"][2] for line in lines)) + 1
    width = x1 - x0
    if width < 150:
        return [lines]
    delta = [0] * (width + 1)
    for line in lines:
        delta[int(line["bbox"][0]) - x0] += 1
        delta[int(line["bbox"][2]) - x0] -= 1
    cover, running = [], 0
    for d in delta:
        running += d
        cover.append(running)
    best = min(range(int(width * 0.25), int(width * 0.75)), key=cover.__getitem__)
    if cover[best] > 0.2 * len(lines):
        return [lines]
    gutter = x0 + best
    left = [ln for ln in lines if ln["bbox"][2] <= gutter]
    right = [ln for ln in lines if ln["bbox"][0] >= gutter]
    if _same_row_pairs(left + right) - _same_row_pairs(left) - _same_row_pairs(right) < 3:
        return [lines]
    for line in lines:
        if line["bbox"][0] < gutter < line["bbox"][2]:
            a, b = _cut_line(line, gutter)
            left += a
            right += b
    by_y = lambda ln: ln["bbox"][1]  # noqa: E731
    return _split_columns(sorted(left, key=by_y)) + _split_columns(sorted(right, key=by_y))


def _same_row_pairs(lines: list[dict]) -> int:
    """How many consecutive lines (by vertical centre) share a row."""
    ordered = sorted(lines, key=lambda ln: (ln["bbox"][1] + ln["bbox"][3]) / 2)
    pairs = 0
    for a, b in zip(ordered, ordered[1:]):
        overlap = min(a["bbox"][3], b["bbox"][3]) - max(a["bbox"][1], b["bbox"][1])
        if overlap > 0.5 * min(a["bbox"][3] - a["bbox"][1], b["bbox"][3] - b["bbox"][1]):
            pairs += 1
    return pairs


def _cut_line(line: dict, gutter: float) -> tuple[list[dict], list[dict]]:
    """Split a line's spans at the gutter (by span centre) into a left and a right line."""
    parts: tuple[list[dict], list[dict]] = ([], [])
    for span in line["spans"]:
        parts[0 if (span["bbox"][0] + span["bbox"][2]) / 2 < gutter else 1].append(span)
    out: tuple[list[dict], list[dict]] = ([], [])
    for side, spans in enumerate(parts):
        if spans:
            bbox = union(sp["bbox"] for sp in spans)
            out[side].append({"bbox": bbox, "spans": spans, "dir": line["dir"]})
    return out


def _line_piece(line: dict) -> Line | None:
    """One PyMuPDF line as a row piece, with the font facts of most of its characters (a single
    bold or monospaced word does not make the line bold or code); None when it holds no text."""
    spans = [s for s in line["spans"] if s["text"]]
    text = re.sub(r"\s+", " ", _joined(spans)).strip()
    if not text:
        return None
    sizes: Counter = Counter()
    bold_chars = mono_chars = total = 0
    for span in spans:
        n = len(span["text"].strip())
        sizes[round(span["size"] * 2) / 2] += n
        total += n
        if span["flags"] & 16 or re.search(r"bold|black|heavy|semibold|-medi", span["font"], re.I):
            bold_chars += n
        if span["flags"] & 8 or re.search(r"mono|courier|consol", span["font"], re.I):
            mono_chars += n
    dx, dy = line["dir"]
    return Line(
        text=text,
        bbox=tuple(line["bbox"]),
        size=sizes.most_common(1)[0][0] if sizes else 0.0,
        bold=total > 0 and bold_chars / total >= 0.8,
        horizontal=abs(dy) < 0.1 and dx > 0,
        mono=total > 0 and mono_chars / total >= 0.8,
    )


def _joined(spans: list[dict]) -> str:
    """The spans' text, a superscript (PyMuPDF's span flag 1) marked where it would run into the
    figure or word before it (parsing/superscripts.py), Symbol-font bullets as the bullets they are."""
    text, raised = "", False
    for span in spans:
        superscript = bool(span["flags"] & 1)
        text += marked(text, span["text"]) if superscript and not raised else span["text"]
        raised = superscript
    return text.translate(SYMBOL_FONT_BULLETS)


def _inside_any(box: Box, areas: list[Box]) -> bool:
    """True when the centre of `box` lies in one of `areas` (1 pt tolerance)."""
    cx, cy = (box[0] + box[2]) / 2, (box[1] + box[3]) / 2
    return any(a[0] - 1 <= cx <= a[2] + 1 and a[1] - 1 <= cy <= a[3] + 1 for a in areas)


def _merge_rows(pieces: list[Line]) -> list[Line]:
    """Merge PyMuPDF lines that sit on one visual row ("2.1" + "Framework Core", superscripts)."""
    rows: list[list[Line]] = []
    for piece in sorted(pieces, key=lambda p: (p.bbox[1] + p.bbox[3]) / 2):
        if rows and piece.horizontal and _same_row(rows[-1], piece):
            rows[-1].append(piece)
        else:
            rows.append([piece])
    return [_combine(row) for row in rows]


def _same_row(row: list[Line], piece: Line) -> bool:
    """True when `piece` overlaps the row vertically by half a line and sits beside its pieces, not
    on top of them."""
    if not all(p.horizontal for p in row):
        return False
    y0 = min(p.bbox[1] for p in row)
    y1 = max(p.bbox[3] for p in row)
    overlap = min(y1, piece.bbox[3]) - max(y0, piece.bbox[1])
    height = min(y1 - y0, piece.bbox[3] - piece.bbox[1]) or 1.0
    no_x_overlap = all(piece.bbox[0] >= p.bbox[2] - 2 or piece.bbox[2] <= p.bbox[0] + 2 for p in row)
    return overlap / height >= 0.5 and no_x_overlap


def _combine(row: list[Line]) -> Line:
    """One Line from the pieces of a visual row, left to right; wide gaps between pieces mark the
    row as tabular, which keeps table rows and running headers out of the heading rules."""
    if len(row) == 1:
        return row[0]
    row = sorted(row, key=lambda p: p.bbox[0])
    sizes: Counter = Counter()
    for p in row:
        sizes[p.size] += len(p.text)
    chars = sum(len(p.text) for p in row)
    bold = sum(len(p.text) for p in row if p.bold) / chars >= 0.8
    mono = sum(len(p.text) for p in row if p.mono) / chars >= 0.8
    gaps = [b.bbox[0] - a.bbox[2] for a, b in zip(row, row[1:])]
    tabular = max(gaps) > 2 * max(p.size for p in row)
    return Line(
        text=" ".join(p.text for p in row),
        bbox=union(p.bbox for p in row),
        size=sizes.most_common(1)[0][0],
        bold=bold,
        mono=mono,
        tabular=tabular,
    )

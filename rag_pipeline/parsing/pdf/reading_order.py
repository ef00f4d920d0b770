"""Reading order: column gutters are found per page from where the text lines lie; columns are
read one after the other, while units that cross a gutter (titles, full-width figures) and margin
lines stay in their vertical place and separate "bands" of columns.

The margin and gutter helpers are also used by the font-heading rules, which must not take a
running header, or a label with text beside it in the same column, for a heading.
"""

from __future__ import annotations

from rag_pipeline.parsing.pdf.model import Box, Unit

_MARGIN_BAND = 0.07  # top/bottom share of the page height where running headers/footers live


def reading_order(units: list[Unit], height: float) -> tuple[list[Unit], list[tuple[float, float]]]:
    """Order units column by column; units crossing a column gutter (titles, wide figures and
    tables) and margin lines keep their vertical place and separate bands of columns.
    Returns the ordered units and the gutters found."""
    flowing = [u for u in units if not u.lines or u.lines[0].horizontal]
    rotated = [u for u in units if u.lines and not u.lines[0].horizontal]
    margin = [u for u in flowing if in_margin(u.bbox, height)]
    body = [u for u in flowing if not in_margin(u.bbox, height)]
    gutters = _find_gutters(body)
    if not gutters:
        return _top_down(flowing) + rotated, []
    anchors = [u for u in body if _crosses(u.bbox, gutters)] + margin
    columns = [u for u in body if not _crosses(u.bbox, gutters)]
    bands = _bands(anchors, columns)
    loose = [u for band, _ in bands for u in band if _outside_other_columns(u, band, gutters)]
    if loose:  # e.g. a section heading below both columns: it starts a new band
        anchors += loose
        bands = _bands(anchors, [u for u in columns if u not in loose])
    ordered: list[Unit] = []
    for band, anchor in bands:
        ordered.extend(sorted(band, key=lambda u: (column_index(u.bbox, gutters), u.bbox[1], u.bbox[0])))
        if anchor is not None:
            ordered.append(anchor)
    return ordered + rotated, gutters


def _bands(anchors: list[Unit], columns: list[Unit]) -> list[tuple[list[Unit], Unit | None]]:
    """Column units grouped into the bands between consecutive anchors (top to bottom); each
    band paired with the anchor that closes it."""
    out: list[tuple[list[Unit], Unit | None]] = []
    remaining = columns
    for anchor in sorted(anchors, key=lambda u: u.bbox[1]) + [None]:
        limit = anchor.bbox[1] if anchor else float("inf")
        out.append(([u for u in remaining if (u.bbox[1] + u.bbox[3]) / 2 < limit], anchor))
        remaining = [u for u in remaining if (u.bbox[1] + u.bbox[3]) / 2 >= limit]
    return out


def _outside_other_columns(unit: Unit, band: list[Unit], gutters: list[tuple[float, float]]) -> bool:
    """True when every unit of the other columns in the band lies wholly above, or wholly below,
    this one: then it is not part of a column but a line across the page."""
    column = column_index(unit.bbox, gutters)
    others = [u for u in band if column_index(u.bbox, gutters) != column]
    if not others:
        return False
    return all(o.bbox[3] <= unit.bbox[1] + 2 for o in others) or all(o.bbox[1] >= unit.bbox[3] - 2 for o in others)


def in_margin(box: Box, height: float) -> bool:
    """True when the box lies in the top or bottom band where running headers and footers live."""
    return box[3] <= height * _MARGIN_BAND or box[1] >= height * (1 - _MARGIN_BAND)


def _top_down(units: list[Unit]) -> list[Unit]:
    """Single-column order: by top edge, units starting on the same row left to right (keeps a
    side heading before the paragraph next to it, and a form's label before its value, whose
    field box is taller than the label's line)."""
    ordered = sorted(units, key=lambda u: u.bbox[1])
    rows: list[list[Unit]] = []
    for unit in ordered:
        if rows and _same_row(rows[-1][0], unit):
            rows[-1].append(unit)
        else:
            rows.append([unit])
    return [u for row in rows for u in sorted(row, key=lambda u: u.bbox[0])]


def _same_row(first: Unit, unit: Unit) -> bool:
    """Whether `unit` starts on the row `first` starts: tops within 3 pt, or a label (a unit of
    one or two lines ending in ":") and the text right of it whose first lines hold each other's middle (a form field's box
    is taller than its label's line, so their tops differ)."""
    if unit.bbox[1] - first.bbox[1] < 3:
        return True
    label, value = (first, unit) if first.bbox[0] < unit.bbox[0] else (unit, first)
    if not (0 < len(label.lines) <= 2 and label.text.rstrip().endswith(":")) or value.bbox[0] < label.bbox[2]:
        return False
    a, b = _first_line(first), _first_line(unit)
    return a[1] <= (b[1] + b[3]) / 2 <= a[3] or b[1] <= (a[1] + a[3]) / 2 <= b[3]


def _first_line(unit: Unit) -> Box:
    return unit.lines[0].bbox if unit.lines else unit.bbox


def _find_gutters(units: list[Unit]) -> list[tuple[float, float]]:
    """Vertical white strips separating text columns of similar width, found from how much of
    the page height text lines cover at each x (lines, not blocks, so one stray OCR glyph does
    not close a gutter). A narrow side-heading column (as in manuals with headings in the left
    margin) is not a text column: those pages read top-down."""
    texts = [u for u in units if u.lines]
    if len(texts) < 3:
        return []
    x0 = int(min(u.bbox[0] for u in texts))
    x1 = int(max(u.bbox[2] for u in texts)) + 1
    span = x1 - x0
    if span < 200:
        return []
    full = [u for u in texts if (u.bbox[2] - u.bbox[0]) > 0.6 * span]
    narrow = [u for u in texts if (u.bbox[2] - u.bbox[0]) <= 0.6 * span]
    parts = [u for u in narrow if _has_neighbour_beside(u, narrow)]  # columns come in pairs
    lines = [line.bbox for u in parts for line in u.lines]
    total = sum(b[3] - b[1] for b in lines)
    if total <= 0 or len(parts) < 2:
        return []
    delta = [0.0] * (span + 2)
    for b in lines:
        delta[max(int(b[0]) - x0, 0)] += b[3] - b[1]
        delta[min(int(b[2]) - x0 + 1, span + 1)] -= b[3] - b[1]
    cover, running = [], 0.0
    for d in delta[:span]:
        running += d
        cover.append(running)
    gutters = _low_runs(cover, x0, total * 0.03, min_width=5, edge=int(span * 0.15))
    return _valid_columns(gutters, parts, full, x0, x1, total)


def _has_neighbour_beside(unit: Unit, others: list[Unit]) -> bool:
    """True when another unit sits left or right of this one on the same rows."""
    x0, y0, x1, y1 = unit.bbox
    return any(
        o is not unit and min(y1, o.bbox[3]) - max(y0, o.bbox[1]) > 0 and (o.bbox[0] >= x1 or o.bbox[2] <= x0)
        for o in others
    )


def _low_runs(cover: list[float], x0: int, threshold: float, *, min_width: int, edge: int) -> list[tuple[float, float]]:
    """Runs of x (page coordinates) at least `min_width` wide where the cover stays at or under
    `threshold`; the outer `edge` of the span is ignored, as a gutter lies between columns."""
    runs = []
    start = None
    for x in range(edge, len(cover) - edge):
        if cover[x] <= threshold:
            start = x if start is None else start
        elif start is not None:
            if x - start >= min_width:
                runs.append((x0 + start, x0 + x))
            start = None
    if start is not None and len(cover) - edge - start >= min_width:
        runs.append((x0 + start, x0 + len(cover) - edge))
    return runs


def _valid_columns(
    gutters: list[tuple[float, float]], parts: list[Unit], full: list[Unit], x0: int, x1: int, total: float
) -> list[tuple[float, float]]:
    """Keep the gutters only when the columns they make look like text columns: each holds a fair
    share of the text and none is much narrower than the widest."""
    if not gutters:
        return []
    edges = [x0] + [g for gap in gutters for g in gap] + [x1]
    widths = [edges[i + 1] - edges[i] for i in range(0, len(edges), 2)]
    if min(widths) < 0.55 * max(widths):
        return []
    heights = [0.0] * len(widths)
    for u in parts:
        heights[column_index(u.bbox, gutters)] += sum(line.bbox[3] - line.bbox[1] for line in u.lines)
    if min(heights) < 0.12 * total or _label_column(parts, gutters):
        return []
    return gutters


def _label_column(parts: list[Unit], gutters: list[tuple[float, float]]) -> bool:
    """True when a column left of a gutter is mostly labels ("Employee name:", "Amount:"): a form
    or a key-value list, whose values beside them are read row by row, not as a second column
    after all the labels."""
    for column in range(len(gutters)):
        lines = [line.text.rstrip() for u in parts if column_index(u.bbox, gutters) == column for line in u.lines]
        if len(lines) >= 2 and sum(text.endswith(":") for text in lines) >= 0.6 * len(lines):
            return True
    return False


def _crosses(box: Box, gutters: list[tuple[float, float]]) -> bool:
    """True when the box reaches well into the columns on both sides of a gutter."""
    return any(box[0] < g0 - 10 and box[2] > g1 + 10 for g0, g1 in gutters)


def column_index(box: Box, gutters: list[tuple[float, float]]) -> int:
    """The column (0 = leftmost) holding the centre of the box."""
    cx = (box[0] + box[2]) / 2
    return sum(1 for g0, g1 in gutters if cx > (g0 + g1) / 2)

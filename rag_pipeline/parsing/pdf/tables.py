"""Ruled tables: PyMuPDF's ruling-line table finder, run only on pages whose vector graphics
could form a grid (the finder is the slowest step per page), with cell text rebuilt from words
because the finder's own cell text drops spaces. Grids that are not tables (framed text boxes,
plot frames) are rejected, and real tables become GitHub Markdown.
"""

from __future__ import annotations

import re

import pymupdf

from rag_pipeline.parsing.pdf.model import Box, Unit
from rag_pipeline.parsing.pdf.text import SYMBOL_FONT_BULLETS, TEXT_FLAGS, join_lines

MAX_RULES = 10_000  # distinct horizontal and vertical rules: a ruled table of about 5,000 cells
Rule = tuple[float, float, float]  # (y, x0, x1) of a horizontal rule, (x, y0, y1) of a vertical one


def find_tables(page: pymupdf.Page, warnings: list[str], number: int) -> list[Unit]:
    """Ruled tables on the page. PyMuPDF's layout-model table finder is skipped (use_layout=False):
    it runs an ONNX model at ~0.1 s per page, too slow for long manuals. A page of more rules than
    a table holds (a plan, a map, a dense plot) is not searched: the finder's time grows faster
    than its drawings (a plan sheet of 50,000 wall segments took 12 s, so a set of such sheets
    went past the parse time limit and lost all its text)."""
    horizontal, vertical = _rules(page)
    if len(horizontal) + len(vertical) > MAX_RULES:
        warnings.append(f"page {number}: {len(horizontal) + len(vertical):,} ruled lines, more than a table holds "
                        "(a drawing or plan?); no tables were looked for there, its text is read as text")
        return []
    if not _may_hold_ruled_table(horizontal, vertical):
        return []
    try:
        found = page.find_tables(use_layout=False).tables
    except Exception as exc:  # noqa: BLE001 -- tables are then read as text, with a warning
        warnings.append(f"page {number}: table detection failed ({type(exc).__name__}); tables read as text")
        return []
    if not found:
        return []
    words = page.get_text("words", flags=TEXT_FLAGS)
    units = []
    for table in found:
        rows = _table_rows(table, words)
        if rows is not None:
            units.append(Unit(kind="table", bbox=tuple(table.bbox), rows=rows))
    return units


def _rules(page: pymupdf.Page) -> tuple[list[Rule], list[Rule]]:
    """The page's horizontal and vertical rules (lines, and the sides of rectangles), each once:
    get_cdrawings costs a fraction of find_tables, and a shape drawn many times over is one rule."""
    horizontal: list[Rule] = []
    vertical: list[Rule] = []
    seen: set[tuple] = set()
    for path in page.get_cdrawings():
        for item in path["items"]:
            if item[:3] in seen:  # the same line or rectangle again
                continue
            seen.add(item[:3])
            if item[0] == "l":
                _add_edge(item[1][0], item[1][1], item[2][0], item[2][1], horizontal, vertical)
            elif item[0] in ("re", "qu"):
                r = pymupdf.Rect(item[1]) if item[0] == "re" else pymupdf.Quad(item[1]).rect
                _add_edge(r.x0, r.y0, r.x1, r.y0, horizontal, vertical)  # the four sides
                _add_edge(r.x0, r.y1, r.x1, r.y1, horizontal, vertical)
                _add_edge(r.x0, r.y0, r.x0, r.y1, horizontal, vertical)
                _add_edge(r.x1, r.y0, r.x1, r.y1, horizontal, vertical)
    return _once(horizontal), _once(vertical)


def _once(rules: list[Rule]) -> list[Rule]:
    """Each rule once, to a tenth of a point: the same line drawn twice, or a shared cell side,
    is one rule to count against MAX_RULES."""
    return list(dict.fromkeys((round(a, 1), round(b, 1), round(c, 1)) for a, b, c in rules))


def _may_hold_ruled_table(horizontal: list[Rule], vertical: list[Rule]) -> bool:
    """Cheap pre-check: a ruled table is a grid, so its horizontal and vertical rules cross in at
    least six distinct points. Plots, underlines and framed text boxes do not."""
    if len(horizontal) < 2 or len(vertical) < 2:
        return False
    if len(horizontal) * len(vertical) > 40_000:
        return True  # a dense grid of rules: let the table finder decide
    crossings = {
        (round(x), round(y))
        for y, hx0, hx1 in horizontal
        for x, vy0, vy1 in vertical
        if hx0 - 2 <= x <= hx1 + 2 and vy0 - 2 <= y <= vy1 + 2
    }
    return len(crossings) >= 6


def _add_edge(
    ax: float,
    ay: float,
    bx: float,
    by: float,
    horizontal: list[tuple[float, float, float]],
    vertical: list[tuple[float, float, float]],
) -> None:
    """Record the segment a-b as a horizontal or vertical rule; slanted and tiny ones are no rules."""
    if abs(ay - by) < 2 and abs(ax - bx) >= 5:
        horizontal.append(((ay + by) / 2, min(ax, bx), max(ax, bx)))
    elif abs(ax - bx) < 2 and abs(ay - by) >= 5:
        vertical.append(((ax + bx) / 2, min(ay, by), max(ay, by)))


def _table_rows(table: pymupdf.table.Table, words: list[tuple]) -> list[list[str]] | None:
    """Cell texts rebuilt from the page's words (the finder's own cell text loses spaces), with
    split columns and continuation rows folded back. None when the grid is not a real table (a
    ruled box, a diagram, a one-row strip)."""
    grid = [list(row.cells) for row in table.rows]
    if not grid:
        return None
    texts = _fold_rows(_fold_columns(_fill_cells(grid, words, table.bbox)))
    keep = [c for c in range(len(texts[0])) if any(row[c] for row in texts)]
    rows = [[row[c] or "" for c in keep] for row in texts]
    rows = [row for row in rows if any(row)]
    if len(rows) < 2 or len(keep) < 2:
        return None
    real = [cell for src in texts for c, cell in enumerate(src) if c in keep and cell is not None]
    if not real or sum(1 for c in real if c) / len(real) < 0.4 or sum(len(c) for c in real) < 10:
        return None
    if not _has_words(rows[0]) and not _has_words([row[0] for row in rows]):
        return None  # no header text anywhere: the grid and tick labels of a plot
    longest, total = max(len(c) for c in real), sum(len(c) for c in real)
    if (len(rows) <= 2 and longest > 300) or (longest > 200 and longest > 0.6 * total):
        return None  # a framed text box (or a plot frame over running text), not a table
    return rows


def _has_words(cells: list[str]) -> bool:
    """True when a cell holds a word of three or more letters (not just numbers)."""
    return any(re.search(r"[^\W\d_]{3,}", cell) for cell in cells)


def _fold_columns(texts: list[list[str | None]]) -> list[list[str | None]]:
    """Merge a column into its left neighbour when its header cell is empty or spanned and no row
    has text in both (ruling lines that split one logical column, e.g. a references column)."""
    for c in range(len(texts[0]) - 1, 0, -1):
        if texts[0][c] and texts[0][c - 1] is not None:
            continue
        if any(row[c] and row[c - 1] for row in texts):
            continue
        for row in texts:
            left, right = row[c - 1], row[c]
            row[c - 1] = left or right if (left is not None or right is not None) else None
            del row[c]
    return texts


def _fold_rows(texts: list[list[str | None]]) -> list[list[str | None]]:
    """A row with a single real cell below spanned cells continues the row above (one logical
    cell broken by ruling lines): append its text there."""
    out: list[list[str | None]] = []
    for row in texts:
        real = [c for c, cell in enumerate(row) if cell is not None]
        if len(out) > 1 and len(real) == 1 and row[real[0]]:
            c = real[0]
            above = out[-1][c]
            out[-1][c] = f"{above} {row[c]}".strip() if above else row[c]
            continue
        out.append(row)
    return out


def _fill_cells(grid: list[list[Box | None]], words: list[tuple], bbox: Box) -> list[list[str | None]]:
    """Assign each word (by its centre) to the cell containing it; words keep their line order.
    Spanned cells (None in the grid) stay None."""
    placed: list[list[list[tuple]]] = [[[] for _ in row] for row in grid]
    for word in words:
        cx, cy = (word[0] + word[2]) / 2, (word[1] + word[3]) / 2
        if not (bbox[0] <= cx <= bbox[2] and bbox[1] <= cy <= bbox[3]):
            continue
        for r, row in enumerate(grid):
            hit = next(
                (c for c, cell in enumerate(row) if cell and cell[0] <= cx <= cell[2] and cell[1] <= cy <= cell[3]),
                None,
            )
            if hit is not None:
                placed[r][hit].append(word)
                break
    return [[None if cell is None else _cell_text(ws) for cell, ws in zip(row, prow)] for row, prow in zip(grid, placed)]


def _cell_text(words: list[tuple]) -> str:
    """A cell's words, grouped by PyMuPDF line and read top to bottom, joined like paragraph rows."""
    lines: dict[tuple[int, int], list[tuple]] = {}
    for w in words:
        lines.setdefault((w[5], w[6]), []).append(w)
    ordered = sorted(lines.values(), key=lambda ws: (min(w[1] for w in ws), min(w[0] for w in ws)))
    texts = [" ".join(w[4] for w in sorted(ws, key=lambda w: w[7])) for ws in ordered]
    return join_lines(texts).translate(SYMBOL_FONT_BULLETS)


def markdown_table(rows: list[list[str]]) -> str:
    """GitHub Markdown: first row as header, pipes escaped, cell line breaks as spaces."""
    def cell(text: str) -> str:
        return re.sub(r"\s+", " ", text or "").replace("|", "\\|").strip()

    width = max(len(r) for r in rows)
    padded = [list(r) + [""] * (width - len(r)) for r in rows]
    lines = ["| " + " | ".join(cell(c) for c in padded[0]) + " |", "|" + " --- |" * width]
    lines += ["| " + " | ".join(cell(c) for c in r) + " |" for r in padded[1:]]
    return "\n".join(lines)

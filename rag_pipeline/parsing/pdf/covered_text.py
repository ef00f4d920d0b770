"""Text under an opaque box drawn over it: left out of the index, with a warning.

A redaction done by drawing a black (or white) box over a passage leaves the passage in the PDF's
text layer: every extractor reads it, so the index would hand out what the document's author
blacked out, and a reviewer looking at the page sees only the box. A character counts as
covered when an opaque filled shape drawn after it (later in the page's drawing order) holds at
least COVERED of its box: a strikethrough or an underline covers a sliver and leaves it; a
background panel drawn before the text, or a highlight with transparency, leaves it; text
drawn on top of a box (a white label on a banner) comes after the box and stays.

Cheap where nothing is drawn over text: the page's bounding-box log (drawing order, no paths)
says whether any large filled shape comes after text it overlaps; only then are the drawings,
the text trace (each span's place in the drawing order) and the characters read.
"""

from __future__ import annotations

import numpy as np
import pymupdf

COVERED = 0.8  # share of a character's box under the shape
MIN_SIDE = 3.0  # points: a filled shape thinner than this is a rule, an underline or a strikethrough
OPAQUE = 0.99  # fill opacity from which a shape hides what is under it


def hide_covered(page: pymupdf.Page, textpage: pymupdf.TextPage, text_dict: dict, flags: int) -> int:
    """Take the characters under a box drawn over them out of `text_dict` (read from `textpage`,
    in place); returns how many were taken out."""
    if not _drawn_over_text(page.get_bboxlog()):
        return 0
    covers = [(path["seqno"], tuple(path["rect"])) for path in page.get_cdrawings() if _box(path)]
    hidden = _covered_origins(page.get_texttrace(), covers)
    if not hidden:
        return 0
    raw = page.get_text("rawdict", flags=flags, textpage=textpage)
    removed = 0
    for raw_block, block in zip(raw["blocks"], text_dict["blocks"]):
        for raw_line, line in zip(raw_block.get("lines", ()), block.get("lines", ())):
            if len(raw_line["spans"]) != len(line["spans"]):
                continue
            for raw_span, span in zip(raw_line["spans"], line["spans"]):
                kept = [c["c"] for c in raw_span["chars"] if c["c"].isspace() or _key(c["origin"]) not in hidden]
                gone = len(raw_span["chars"]) - len(kept)
                if gone:
                    span["text"] = "".join(kept)
                    removed += gone
    return removed


def warning(page: int, characters: int) -> str:
    return (f"page {page}: {characters:,} characters under a box drawn over them (a redaction?) were left out; "
            "if they should be indexed, remove the box from the file")


def _drawn_over_text(log: list) -> bool:
    """Whether a large filled shape comes after text it overlaps, in the page's drawing order:
    all shapes against all texts before them, a block of shapes at a time (one shape at a time,
    a scatter plot or a box repeated 80,000 times took seconds)."""
    kinds = [kind for kind, _ in log]
    is_text = np.array([kind.endswith("-text") for kind in kinds], dtype=bool)
    if not is_text.any():
        return False
    boxes = np.array([box for _, box in log], dtype=np.float64).reshape(-1, 4)
    seen = np.cumsum(is_text)  # texts drawn up to each entry
    large = (boxes[:, 2] - boxes[:, 0] >= MIN_SIDE) & (boxes[:, 3] - boxes[:, 1] >= MIN_SIDE)
    shapes = np.flatnonzero(np.array([kind == "fill-path" for kind in kinds]) & large & (seen > 0))
    texts, order = boxes[is_text], np.arange(int(is_text.sum()))
    for block in _blocks(shapes, len(texts)):
        box, before = boxes[block][:, None, :], seen[block][:, None]
        overlap = ((np.minimum(texts[:, 2], box[..., 2]) - np.maximum(texts[:, 0], box[..., 0]) > 0)
                   & (np.minimum(texts[:, 3], box[..., 3]) - np.maximum(texts[:, 1], box[..., 1]) > 0))
        if (overlap & (order < before)).any():
            return True
    return False


def _blocks(indexes: np.ndarray, width: int) -> list[np.ndarray]:
    """`indexes` in blocks whose rows times `width` stay near a million array cells."""
    size = max(1, 1_000_000 // max(width, 1))
    return [indexes[start:start + size] for start in range(0, len(indexes), size)]


def _box(path: dict) -> bool:
    """Whether a drawing is an opaque filled rectangle of some size: what a redaction box is. A
    path of any other shape says little by its bounding box (a frame drawn as a filled outline
    has the box of what it frames)."""
    items = path.get("items") or []
    return (path.get("fill") is not None and (path.get("fill_opacity") or 1.0) >= OPAQUE
            and len(items) == 1 and items[0][0] in ("re", "qu") and _large(pymupdf.Rect(path["rect"])))


def _large(rect: pymupdf.Rect) -> bool:
    return rect.width >= MIN_SIDE and rect.height >= MIN_SIDE


def _covered_origins(trace: list[dict], covers: list[tuple[int, tuple]]) -> set[tuple[int, int]]:
    """The origins (`_key`) of the characters that a box drawn after them covers by COVERED of
    their box. A box drawn many times counts once, at its last drawing; the boxes are checked
    against all the page's characters a block at a time."""
    chars = [(span["seqno"], *char[3], *char[2]) for span in trace for char in span["chars"]]
    if not chars or not covers:
        return set()
    last = {}
    for seqno, rect in covers:
        last[rect] = max(seqno, last.get(rect, seqno))
    boxes = np.array([(seqno, *rect) for rect, seqno in last.items()], dtype=np.float64)
    table = np.array(chars, dtype=np.float64)  # seqno, x0, y0, x1, y1, origin x, origin y
    area = np.clip(table[:, 3] - table[:, 1], 0, None) * np.clip(table[:, 4] - table[:, 2], 0, None)
    hidden = np.zeros(len(table), dtype=bool)
    for block in _blocks(np.arange(len(boxes)), len(table)):
        box = boxes[block][:, None, :]
        width = np.clip(np.minimum(table[:, 3], box[..., 3]) - np.maximum(table[:, 1], box[..., 1]), 0, None)
        height = np.clip(np.minimum(table[:, 4], box[..., 4]) - np.maximum(table[:, 2], box[..., 2]), 0, None)
        hidden |= ((table[:, 0] < box[..., 0]) & (area > 0) & (width * height >= COVERED * area)).any(axis=0)
    return {_key(origin) for origin in table[hidden][:, 5:7]}


def _key(origin) -> tuple[int, int]:  # noqa: ANN001 -- a PyMuPDF point (tuple or Point)
    """A character's origin rounded to half points: the text trace and the rawdict place a
    character at the same origin, where their boxes differ (glyph against line height)."""
    return round(origin[0] * 2), round(origin[1] * 2)

"""Text a reader of the page cannot see: left out of the index, with a warning.

A PDF can carry text that is extracted like any other but never shown: drawn in the invisible
render mode (Tr 3), filled white on a white page, or set below a point in size. People put
instructions for a model there ("ignore previous instructions ..."), and a reviewer reading the
page never sees what the index would answer from, the same concern as the invisible characters
of cleaning/safety/controls.py one level up. Such spans are taken out of the page's text:
- invisible (PyMuPDF's span alpha 0) and not over an image: a scanned page's OCR layer is
  invisible text over the picture of the same words and stays;
- white (or nearly) where no image and no filled shape of another colour lies under it: white
  headings on a coloured banner stay;
- under MIN_SIZE points.
The images and drawings of a page are read only when it holds invisible or white text.
"""

from __future__ import annotations

import pymupdf

MIN_SIZE = 1.0  # points: smaller text is no text a reader sees
NEAR_WHITE = 0xF0  # each of R, G and B at least this: white to the eye on a white page


def hide_unseen(page: pymupdf.Page, text_dict: dict) -> int:
    """Take the spans a reader cannot see out of `text_dict` (in place); the characters removed."""
    spans = [s for block in text_dict["blocks"] if block["type"] == 0 for line in block["lines"] for s in line["spans"]]
    invisible = any(s["alpha"] == 0 for s in spans if s["text"].strip())
    white = any(_white(s["color"]) for s in spans if s["text"].strip())
    images = _image_boxes(page) if invisible or white else []
    fills = _fills(page) if white else []
    removed = 0
    for block in text_dict["blocks"]:
        if block["type"] != 0:
            continue
        for line in block["lines"]:
            kept = []
            for span in line["spans"]:
                if span["text"].strip() and _unseen(span, images, fills):
                    removed += len(span["text"].strip())
                else:
                    kept.append(span)
            line["spans"] = kept
    return removed


def warning(page: int, characters: int) -> str:
    return (f"page {page}: {characters:,} characters of text a reader cannot see (invisible, white on white or "
            f"under {MIN_SIZE:g} pt) were left out; if the page should show them, fix the file's text colour or size")


def _unseen(span: dict, images: list[pymupdf.Rect], fills: list[tuple[pymupdf.Rect, int]]) -> bool:
    if span["size"] < MIN_SIZE:
        return True
    box = pymupdf.Rect(span["bbox"])
    if span["alpha"] == 0:
        return not any(_covers(image, box) for image in images)
    if _white(span["color"]):
        return not (any(_covers(image, box) for image in images)
                    or any(_covers(rect, box) and not _white(colour) for rect, colour in fills))
    return False


def _white(colour: int) -> bool:
    return all((colour >> shift) & 0xFF >= NEAR_WHITE for shift in (16, 8, 0))


def _covers(area: pymupdf.Rect, box: pymupdf.Rect) -> bool:
    """Whether the area lies under the box's centre."""
    return area.contains(pymupdf.Point((box.x0 + box.x1) / 2, (box.y0 + box.y1) / 2))


def _image_boxes(page: pymupdf.Page) -> list[pymupdf.Rect]:
    return [pymupdf.Rect(info["bbox"]) for info in page.get_image_info()]


def _fills(page: pymupdf.Page) -> list[tuple[pymupdf.Rect, int]]:
    """Filled shapes of the page with their fill colour (as PyMuPDF's span colours: 0xRRGGBB)."""
    found = []
    for path in page.get_drawings():
        fill = path.get("fill")
        if fill is None or path.get("fill_opacity", 1) == 0:
            continue
        r, g, b = (round(255 * c) for c in (list(fill) + [0, 0, 0])[:3])
        found.append((pymupdf.Rect(path["rect"]), (r << 16) | (g << 8) | b))
    return found

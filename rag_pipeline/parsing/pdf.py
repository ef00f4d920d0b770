"""Layout-aware PDF parser built on PyMuPDF's fast text dictionary (`page.get_text("dict")`).

Why not a ready-made PDF-to-Markdown converter: the layout-model converters run at a few pages
per second, which puts a 400-page manual past the per-file time limit. Instead this module reads
the text dictionary (hundreds of pages per second) and rebuilds structure with cheap geometry:

* reading order: column gutters are found per page from block x-positions; columns are read one
  after the other, while blocks that cross a gutter (titles, full-width figures) stay in their
  vertical place and separate "bands" of columns;
* headings: the document outline when it matches the page text, else font size / bold statistics
  of the whole document (a false heading puts a wrong breadcrumb on every chunk below it, so the
  rules are conservative: short lines only, never repeated margin lines, never table cells);
* tables: PyMuPDF's ruling-line table finder, only on pages whose vector graphics could form a
  grid, with cell text rebuilt from words (the finder's own cell text drops spaces); a table
  continued on the next page with the same column count stays one table;
* OCR: only for pages without a text layer, through Tesseract, and never silently skipped.

Page headers and footers are kept here (with their bbox and the page height) and removed by the
format-agnostic cleaner (rag_pipeline.cleaning.boilerplate), which sees the whole document.
"""

from __future__ import annotations

import functools
import re
import shutil
import subprocess
import unicodedata
from collections import Counter
from dataclasses import dataclass, field
from typing import Iterable

import pymupdf

from rag_pipeline.parsing.types import Element, ParsedDocument, ParseError, ParseLimits

# Bump "+layoutN" whenever a rule below changes what a document parses to: the version is stored
# with each parsed document so a rule change triggers a re-parse.
PARSER_VERSION = f"pymupdf-{pymupdf.__version__}+layout1"

Box = tuple[float, float, float, float]

# Ligatures are expanded ("ﬁ" -> "fi") because search queries never contain them; images are
# left out of the text dictionary because decoding them costs up to a second per scanned page.
_TEXT_FLAGS = pymupdf.TEXT_PRESERVE_WHITESPACE | pymupdf.TEXT_MEDIABOX_CLIP
_MIN_TEXT_LAYER_CHARS = 20  # fewer visible characters than this on an image page = scanned page
_MIN_IMAGE_COVER = 0.25  # share of the page an image must cover before the page counts as a scan
_OCR_DPI = 300
_OCR_MAX_PIXELS = 16_000_000  # oversized pages (posters) are rendered at a lower dpi to stay bounded
_MARGIN_BAND = 0.07  # top/bottom share of the page height where running headers/footers live

_BULLET_RE = re.compile(r"^[\u2022\u2023\u25e6\u2043\u2219\u25aa\u25ab\u25cf\u25cb\u25a0\u25a1\u27a2\u25b8\u25ba\u2713\u2714\uf0b7\uf0a7\uf0d8\uf076\uf0fc]\s*|^[-\u2013\u2014*]\s+")
_NUMBERED_RE = re.compile(r"^(?:\(?\d{1,3}[.)]|\(\d{1,3}\)|\(?[a-z][.)]|\([a-z]\)|\(?[ivxl]{1,5}[.)]|\([ivxl]{1,5}\))\s+\S", re.I)
_SECTION_NO_RE = re.compile(r"^\s*((?:\d+|[A-Z])(?:[.\-]\d+)*)\.?(?=\s|$)")
_CAPTION_RE = re.compile(r"^(?:Figure|Fig\.|Table|Tab\.|Exhibit|Abbildung|Abb\.|Tabelle|Tableau|Graphique)\s*[\dIVX]+(?:[.\-]\d+)*\s*[.:\u2013\u2014]", re.I)
_SENTENCE_END = ".:;!?"


# ------------------------------------------------------------------------------------------------
# Intermediate page model
# ------------------------------------------------------------------------------------------------


@dataclass
class _Line:
    """One visual text row (PyMuPDF lines on the same baseline merged, left to right)."""

    text: str
    bbox: Box
    size: float  # dominant font size by character count, rounded to 0.5 pt
    bold: bool  # most characters bold
    horizontal: bool = True
    mono: bool = False  # most characters in a monospaced font (code, screen captures)
    tabular: bool = False  # merged from pieces with wide gaps: a table row or a running header


@dataclass
class _Unit:
    """A paragraph candidate, heading, list item or table on one page, before it becomes an Element."""

    kind: str  # paragraph | list_item | heading | caption | table
    bbox: Box
    lines: list[_Line] = field(default_factory=list)
    level: int | None = None
    rows: list[list[str]] | None = None  # tables only
    heading_text: str | None = None  # outline title, when the heading came from the outline

    @property
    def text(self) -> str:
        return _join_lines([line.text for line in self.lines])


@dataclass
class _Page:
    number: int  # 1-based
    width: float
    height: float
    units: list[_Unit]  # in reading order
    ocr: bool = False
    gutters: list[tuple[float, float]] = field(default_factory=list)  # column gutters found on the page


# ------------------------------------------------------------------------------------------------
# Entry point
# ------------------------------------------------------------------------------------------------


def parse_pdf(data: bytes, *, name: str, limits: ParseLimits = ParseLimits()) -> ParsedDocument:
    """Parse PDF bytes into Elements in reading order.

    Raises ParseError (never a raw PyMuPDF exception) for files that cannot yield text: not a PDF,
    damaged beyond repair, truncated, password-protected, empty, over the page limit, or with no
    extractable text even after OCR.
    """
    doc = _open_document(data, name, limits)
    try:
        return _parse_open_document(doc, name, limits)
    except ParseError:
        raise
    except Exception as exc:  # a PyMuPDF/MuPDF failure deep inside a damaged file
        raise ParseError(
            f"{name}: PDF could not be read ({type(exc).__name__}: {exc}); the file is probably "
            "damaged: re-export or re-download it, or add it to the deny list"
        ) from exc
    finally:
        doc.close()


def _parse_open_document(doc: pymupdf.Document, name: str, limits: ParseLimits) -> ParsedDocument:
    warnings: list[str] = []
    ocr = _OcrEngine(limits)
    pages: list[_Page] = []
    for index in range(doc.page_count):
        page = _read_page(doc, index, ocr, warnings)
        if page is not None:
            pages.append(page)
    if not any(unit.lines or unit.rows for page in pages for unit in page.units):
        raise ParseError(_no_text_message(name, doc.page_count, warnings))
    if not _apply_outline_headings(doc, pages):
        _apply_font_headings(pages)
    elements = _to_elements(pages)
    return ParsedDocument(
        elements=elements,
        parser=PARSER_VERSION,
        page_count=doc.page_count,
        warnings=warnings,
        ocr_pages=[page.number for page in pages if page.ocr],
    )


def _no_text_message(name: str, page_count: int, warnings: list[str]) -> str:
    """The message for a PDF without any text, saying why (scan without OCR, blank pages)."""
    if any("OCR" in w for w in warnings):
        detail = "; ".join(w for w in warnings if "OCR" in w)[:500]
        return f"{name}: no extractable text in {page_count} page(s): {detail}"
    return (
        f"{name}: no extractable text in {page_count} page(s): the pages are blank or hold only "
        "graphics; check the file, or exclude it from indexing"
    )


# ------------------------------------------------------------------------------------------------
# Opening and validation
# ------------------------------------------------------------------------------------------------


def _open_document(data: bytes, name: str, limits: ParseLimits) -> pymupdf.Document:
    """Open and validate, turning every way a file can be unusable into a ParseError that says
    what is wrong and what an operator can do about it."""
    if len(data) > limits.max_bytes:
        raise ParseError(
            f"{name}: PDF is {len(data) / 1e6:.1f} MB, over the {limits.max_bytes / 1e6:.0f} MB limit; "
            "split the file or raise max_bytes for this source"
        )
    if b"%PDF-" not in data[:1024]:
        raise ParseError(
            f"{name}: not a PDF (no %PDF- header; starts with {data[:16]!r}); it is probably another "
            "format saved with a .pdf name: convert it or fix the file extension"
        )
    try:
        doc = pymupdf.open(stream=data, filetype="pdf")
    except Exception as exc:
        raise ParseError(
            f"{name}: PDF is damaged and cannot be opened ({exc}); re-export or re-download it"
        ) from exc
    try:
        _check_document(doc, data, name, limits)
    except BaseException:
        doc.close()
        raise
    return doc


def _check_document(doc: pymupdf.Document, data: bytes, name: str, limits: ParseLimits) -> None:
    if doc.needs_pass:
        raise ParseError(
            f"{name}: PDF is encrypted and needs a password; remove the protection or add the "
            "file to the deny list"
        )
    if getattr(doc, "is_repaired", False) and b"%%EOF" not in data[-2048:]:
        raise ParseError(
            f"{name}: PDF is truncated (damaged cross-reference table and no end-of-file marker); "
            "the file was cut off during transfer: download or export it again"
        )
    if doc.page_count == 0:
        raise ParseError(f"{name}: PDF has no pages; check the source file")
    if doc.page_count > limits.max_pages:
        raise ParseError(
            f"{name}: PDF has {doc.page_count} pages, over the {limits.max_pages}-page limit; "
            "split the document or raise max_pages for this source"
        )


# ------------------------------------------------------------------------------------------------
# One page: text rows, tables, OCR
# ------------------------------------------------------------------------------------------------


def _read_page(doc: pymupdf.Document, index: int, ocr: "_OcrEngine", warnings: list[str]) -> _Page | None:
    """Text units of one page in reading order; a page that fails is reported, not fatal."""
    number = index + 1
    try:
        page = doc.load_page(index)
        if page.rotation:
            page.remove_rotation()  # text coordinates as displayed (in memory only; bytes untouched)
        rect = page.rect
        textpage = None
        used_ocr = False
        text_dict = page.get_text("dict", flags=_TEXT_FLAGS)
        if _visible_chars(text_dict) < _MIN_TEXT_LAYER_CHARS and _is_image_page(page):
            textpage = ocr.textpage(page, number, warnings)
            if textpage is not None:
                text_dict = page.get_text("dict", flags=_TEXT_FLAGS, textpage=textpage)
                used_ocr = True
        tables = [] if used_ocr else _find_tables(page, warnings, number)
        lines_by_block = _text_rows(text_dict, [t.bbox for t in tables])
        units = [u for block in lines_by_block for u in _split_block(block)]
        ordered, gutters = _reading_order(units + tables, rect.width, rect.height)
        return _Page(number, rect.width, rect.height, _merge_broken_paragraphs(ordered), used_ocr, gutters)
    except Exception as exc:
        warnings.append(f"page {number} could not be read and was skipped ({type(exc).__name__}: {exc})")
        return None


def _visible_chars(text_dict: dict) -> int:
    return sum(
        len(span["text"].strip())
        for block in text_dict["blocks"]
        if block["type"] == 0
        for line in block["lines"]
        for span in line["spans"]
    )


def _is_image_page(page: pymupdf.Page) -> bool:
    """True when images cover a good part of the page: a scan, as opposed to a blank page."""
    area = abs(page.rect) or 1.0
    covered = 0.0
    for info in page.get_image_info():
        box = pymupdf.Rect(info["bbox"]) & page.rect
        covered += abs(box)
    return covered / area >= _MIN_IMAGE_COVER


class _OcrEngine:
    """Tesseract through PyMuPDF, checked once per document; reports every page it cannot OCR."""

    def __init__(self, limits: ParseLimits) -> None:
        self.enabled = limits.ocr
        self.requested = limits.ocr_languages
        self._setup: tuple[str | None, str | None, str | None] | None = None

    def _prepare(self) -> tuple[str | None, str | None, str | None]:
        """(tessdata dir, language string, reason OCR is unavailable)."""
        if self._setup is None:
            self._setup = _tesseract_setup(self.requested)
        return self._setup

    def textpage(self, page: pymupdf.Page, number: int, warnings: list[str]) -> pymupdf.TextPage | None:
        if not self.enabled:
            warnings.append(f"page {number} has no text layer and OCR is disabled for this source (limits.ocr)")
            return None
        tessdata, languages, problem = self._prepare()
        if problem:
            warnings.append(f"page {number} has no text layer and {problem}")
            return None
        dpi = _ocr_dpi(page.rect)
        try:
            return page.get_textpage_ocr(language=languages, dpi=dpi, full=True, tessdata=tessdata)
        except Exception as exc:
            warnings.append(f"page {number} has no text layer and OCR failed ({type(exc).__name__}: {exc})")
            return None


def _ocr_dpi(rect: pymupdf.Rect) -> int:
    """300 dpi, lowered for oversized pages so the rendered image stays under _OCR_MAX_PIXELS."""
    inches2 = (rect.width / 72) * (rect.height / 72)
    if inches2 * _OCR_DPI**2 <= _OCR_MAX_PIXELS:
        return _OCR_DPI
    return max(72, int((_OCR_MAX_PIXELS / inches2) ** 0.5))


@functools.lru_cache(maxsize=8)
def _tesseract_setup(requested: str) -> tuple[str | None, str | None, str | None]:
    """Find Tesseract and its installed languages once per process (a subprocess call)."""
    exe = shutil.which("tesseract")
    if exe is None:
        return None, None, "OCR is not installed (apt-get install tesseract-ocr)"
    try:
        tessdata = pymupdf.get_tessdata()
    except Exception:
        return None, None, "OCR is not installed (Tesseract language data not found; apt-get install tesseract-ocr)"
    try:
        out = subprocess.run([exe, "--list-langs"], capture_output=True, text=True, timeout=30).stdout
    except Exception as exc:
        return None, None, f"OCR is not usable (tesseract --list-langs failed: {exc})"
    installed = {line.strip() for line in out.splitlines()[1:] if line.strip()}
    wanted = [lang for lang in requested.split("+") if lang]
    usable = [lang for lang in wanted if lang in installed]
    if not usable:
        return None, None, (
            f"OCR language(s) {requested} are not installed (apt-get install "
            + " ".join(f"tesseract-ocr-{lang}" for lang in wanted)
            + ")"
        )
    return tessdata, "+".join(usable), None


# ------------------------------------------------------------------------------------------------
# Text rows and paragraph units
# ------------------------------------------------------------------------------------------------


def _text_rows(text_dict: dict, table_boxes: list[Box]) -> list[list[_Line]]:
    """Per PyMuPDF block (split where it holds two columns), its visual rows; text inside a
    table area is left to the table."""
    blocks: list[list[_Line]] = []
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
            bbox = _union(sp["bbox"] for sp in spans)
            out[side].append({"bbox": bbox, "spans": spans, "dir": line["dir"]})
    return out


def _line_piece(line: dict) -> _Line | None:
    spans = [s for s in line["spans"] if s["text"]]
    text = re.sub(r"\s+", " ", "".join(s["text"] for s in spans)).strip()
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
    return _Line(
        text=text,
        bbox=tuple(line["bbox"]),
        size=sizes.most_common(1)[0][0] if sizes else 0.0,
        bold=total > 0 and bold_chars / total >= 0.8,
        horizontal=abs(dy) < 0.1 and dx > 0,
        mono=total > 0 and mono_chars / total >= 0.8,
    )


def _inside_any(box: Box, areas: list[Box]) -> bool:
    cx, cy = (box[0] + box[2]) / 2, (box[1] + box[3]) / 2
    return any(a[0] - 1 <= cx <= a[2] + 1 and a[1] - 1 <= cy <= a[3] + 1 for a in areas)


def _merge_rows(pieces: list[_Line]) -> list[_Line]:
    """Merge PyMuPDF lines that sit on one visual row ("2.1" + "Framework Core", superscripts)."""
    rows: list[list[_Line]] = []
    for piece in sorted(pieces, key=lambda p: (p.bbox[1] + p.bbox[3]) / 2):
        if rows and piece.horizontal and _same_row(rows[-1], piece):
            rows[-1].append(piece)
        else:
            rows.append([piece])
    return [_combine(row) for row in rows]


def _same_row(row: list[_Line], piece: _Line) -> bool:
    if not all(p.horizontal for p in row):
        return False
    y0 = min(p.bbox[1] for p in row)
    y1 = max(p.bbox[3] for p in row)
    overlap = min(y1, piece.bbox[3]) - max(y0, piece.bbox[1])
    height = min(y1 - y0, piece.bbox[3] - piece.bbox[1]) or 1.0
    no_x_overlap = all(piece.bbox[0] >= p.bbox[2] - 2 or piece.bbox[2] <= p.bbox[0] + 2 for p in row)
    return overlap / height >= 0.5 and no_x_overlap


def _combine(row: list[_Line]) -> _Line:
    if len(row) == 1:
        return row[0]
    row = sorted(row, key=lambda p: p.bbox[0])
    sizes: Counter = Counter()
    for p in row:
        sizes[p.size] += len(p.text)
    bold = sum(len(p.text) for p in row if p.bold) / sum(len(p.text) for p in row) >= 0.8
    mono = sum(len(p.text) for p in row if p.mono) / sum(len(p.text) for p in row) >= 0.8
    gaps = [b.bbox[0] - a.bbox[2] for a, b in zip(row, row[1:])]
    tabular = max(gaps) > 2 * max(p.size for p in row)
    return _Line(
        text=" ".join(p.text for p in row),
        bbox=_union(p.bbox for p in row),
        size=sizes.most_common(1)[0][0],
        bold=bold,
        mono=mono,
        tabular=tabular,
    )


def _union(boxes: Iterable[Box]) -> Box:
    boxes = list(boxes)
    return (
        min(b[0] for b in boxes),
        min(b[1] for b in boxes),
        max(b[2] for b in boxes),
        max(b[3] for b in boxes),
    )


def _split_block(rows: list[_Line]) -> list[_Unit]:
    """Split one PyMuPDF block into paragraphs / list items: PyMuPDF often puts a heading and its
    paragraph, or several bullets, into one block."""
    units: list[list[_Line]] = []
    for i, row in enumerate(rows):
        if not units or _starts_new_unit(rows, i, units[-1]):
            units.append([row])
        else:
            units[-1].append(row)
    return [_make_unit(lines) for lines in units]


def _starts_new_unit(rows: list[_Line], i: int, current: list[_Line]) -> bool:
    row, prev = rows[i], rows[i - 1]
    if not row.horizontal or not prev.horizontal:
        return True
    if _BULLET_RE.match(row.text):
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
    return bool(_BULLET_RE.match(text) or _NUMBERED_RE.match(text))


def _make_unit(lines: list[_Line]) -> _Unit:
    first = lines[0].text
    if _BULLET_RE.match(first) or _NUMBERED_RE.match(first):
        kind = "list_item"
    elif _CAPTION_RE.match(first):
        kind = "caption"
    else:
        kind = "paragraph"
    return _Unit(kind=kind, bbox=_union(line.bbox for line in lines), lines=lines)


def _merge_broken_paragraphs(units: list[_Unit]) -> list[_Unit]:
    """Re-join a paragraph that PyMuPDF split into two blocks mid-sentence ("improv-" / "ing the
    retrieval ..."): the next unit starts right below, in the same font, with a lower-case word."""
    out: list[_Unit] = []
    for unit in units:
        prev = out[-1] if out else None
        if prev is not None and _continues_paragraph(prev, unit):
            prev.lines.extend(unit.lines)
            prev.bbox = _union([prev.bbox, unit.bbox])
            continue
        out.append(unit)
    return out


def _continues_paragraph(prev: _Unit, unit: _Unit) -> bool:
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


def _join_lines(texts: list[str]) -> str:
    """Join the rows of a paragraph with spaces, undoing end-of-line hyphenation
    ("infor-" + "mation" -> "information") but keeping real hyphens ("Lucene-" + "BM25",
    "state-of-the-" + "art")."""
    out = ""
    for text in texts:
        if not out:
            out = text
        elif out.endswith("\xad"):
            out = out[:-1] + text
        elif _is_hyphen_break(out, text):
            out = out[:-1] + text
        elif out[-1] in "-\u2010" and out[-2:-1].isalpha():  # a real hyphen at the line end
            out = out + text
        else:
            out = out + " " + text
    return out.replace("\xad", "")


def _is_hyphen_break(before: str, after: str) -> bool:
    if len(before) < 3 or before[-1] not in "-\u2010" or not before[-2].isalpha():
        return False
    if not after[:1].islower():
        return False
    last_word = before.rsplit(" ", 1)[-1]
    return last_word.count("-") == 1  # "state-of-the-" is a compound, keep its hyphen


# ------------------------------------------------------------------------------------------------
# Reading order
# ------------------------------------------------------------------------------------------------


def _reading_order(units: list[_Unit], width: float, height: float) -> tuple[list[_Unit], list[tuple[float, float]]]:
    """Order units column by column; units crossing a column gutter (titles, wide figures and
    tables) and margin lines keep their vertical place and separate bands of columns.
    Returns the ordered units and the gutters found."""
    flowing = [u for u in units if not u.lines or u.lines[0].horizontal]
    rotated = [u for u in units if u.lines and not u.lines[0].horizontal]
    margin = [u for u in flowing if _in_margin(u.bbox, height)]
    body = [u for u in flowing if not _in_margin(u.bbox, height)]
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
    ordered: list[_Unit] = []
    for band, anchor in bands:
        ordered.extend(sorted(band, key=lambda u: (_column_index(u.bbox, gutters), u.bbox[1], u.bbox[0])))
        if anchor is not None:
            ordered.append(anchor)
    return ordered + rotated, gutters


def _bands(anchors: list[_Unit], columns: list[_Unit]) -> list[tuple[list[_Unit], _Unit | None]]:
    """Column units grouped into the bands between consecutive anchors (top to bottom); each
    band paired with the anchor that closes it."""
    out: list[tuple[list[_Unit], _Unit | None]] = []
    remaining = columns
    for anchor in sorted(anchors, key=lambda u: u.bbox[1]) + [None]:
        limit = anchor.bbox[1] if anchor else float("inf")
        out.append(([u for u in remaining if (u.bbox[1] + u.bbox[3]) / 2 < limit], anchor))
        remaining = [u for u in remaining if (u.bbox[1] + u.bbox[3]) / 2 >= limit]
    return out


def _outside_other_columns(unit: _Unit, band: list[_Unit], gutters: list[tuple[float, float]]) -> bool:
    """True when every unit of the other columns in the band lies wholly above, or wholly below,
    this one: then it is not part of a column but a line across the page."""
    column = _column_index(unit.bbox, gutters)
    others = [u for u in band if _column_index(u.bbox, gutters) != column]
    if not others:
        return False
    return all(o.bbox[3] <= unit.bbox[1] + 2 for o in others) or all(o.bbox[1] >= unit.bbox[3] - 2 for o in others)


def _in_margin(box: Box, height: float) -> bool:
    return box[3] <= height * _MARGIN_BAND or box[1] >= height * (1 - _MARGIN_BAND)


def _top_down(units: list[_Unit]) -> list[_Unit]:
    """Single-column order: by top edge, units starting on the same row left to right (keeps a
    side heading before the paragraph next to it)."""
    ordered = sorted(units, key=lambda u: u.bbox[1])
    rows: list[list[_Unit]] = []
    for unit in ordered:
        if rows and unit.bbox[1] - rows[-1][0].bbox[1] < 3:
            rows[-1].append(unit)
        else:
            rows.append([unit])
    return [u for row in rows for u in sorted(row, key=lambda u: u.bbox[0])]


def _find_gutters(units: list[_Unit]) -> list[tuple[float, float]]:
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


def _has_neighbour_beside(unit: _Unit, others: list[_Unit]) -> bool:
    """True when another unit sits left or right of this one on the same rows."""
    x0, y0, x1, y1 = unit.bbox
    return any(
        o is not unit and min(y1, o.bbox[3]) - max(y0, o.bbox[1]) > 0 and (o.bbox[0] >= x1 or o.bbox[2] <= x0)
        for o in others
    )


def _low_runs(cover: list[float], x0: int, threshold: float, *, min_width: int, edge: int) -> list[tuple[float, float]]:
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
    gutters: list[tuple[float, float]], parts: list[_Unit], full: list[_Unit], x0: int, x1: int, total: float
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
        heights[_column_index(u.bbox, gutters)] += sum(line.bbox[3] - line.bbox[1] for line in u.lines)
    if min(heights) < 0.12 * total:
        return []
    return gutters


def _crosses(box: Box, gutters: list[tuple[float, float]]) -> bool:
    """True when the box reaches well into the columns on both sides of a gutter."""
    return any(box[0] < g0 - 10 and box[2] > g1 + 10 for g0, g1 in gutters)


def _column_index(box: Box, gutters: list[tuple[float, float]]) -> int:
    cx = (box[0] + box[2]) / 2
    return sum(1 for g0, g1 in gutters if cx > (g0 + g1) / 2)


# ------------------------------------------------------------------------------------------------
# Tables
# ------------------------------------------------------------------------------------------------


def _find_tables(page: pymupdf.Page, warnings: list[str], number: int) -> list[_Unit]:
    """Ruled tables on the page. PyMuPDF's layout-model table finder is skipped (use_layout=False):
    it runs an ONNX model at ~0.1 s per page, too slow for long manuals."""
    if not _may_hold_ruled_table(page):
        return []
    try:
        found = page.find_tables(use_layout=False).tables
    except Exception as exc:
        warnings.append(f"page {number}: table detection failed ({type(exc).__name__}); tables read as text")
        return []
    if not found:
        return []
    words = page.get_text("words", flags=_TEXT_FLAGS)
    units = []
    for table in found:
        rows = _table_rows(table, words)
        if rows is not None:
            units.append(_Unit(kind="table", bbox=tuple(table.bbox), rows=rows))
    return units


def _may_hold_ruled_table(page: pymupdf.Page) -> bool:
    """Cheap pre-check (get_cdrawings costs a fraction of find_tables): a ruled table is a grid,
    so its horizontal and vertical edges (lines, or the sides of cell rectangles) cross in at
    least six distinct points. Plots, underlines and framed text boxes do not."""
    horizontal: list[tuple[float, float, float]] = []  # (y, x0, x1)
    vertical: list[tuple[float, float, float]] = []  # (x, y0, y1)
    for path in page.get_cdrawings():
        for item in path["items"]:
            if item[0] == "l":
                _add_edge(item[1][0], item[1][1], item[2][0], item[2][1], horizontal, vertical)
            elif item[0] in ("re", "qu"):
                r = pymupdf.Rect(item[1]) if item[0] == "re" else pymupdf.Quad(item[1]).rect
                _add_edge(r.x0, r.y0, r.x1, r.y0, horizontal, vertical)  # the four sides
                _add_edge(r.x0, r.y1, r.x1, r.y1, horizontal, vertical)
                _add_edge(r.x0, r.y0, r.x0, r.y1, horizontal, vertical)
                _add_edge(r.x1, r.y0, r.x1, r.y1, horizontal, vertical)
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


def _add_edge(ax: float, ay: float, bx: float, by: float, horizontal: list, vertical: list) -> None:
    if abs(ay - by) < 2 and abs(ax - bx) >= 5:
        horizontal.append(((ay + by) / 2, min(ax, bx), max(ax, bx)))
    elif abs(ax - bx) < 2 and abs(ay - by) >= 5:
        vertical.append(((ax + bx) / 2, min(ay, by), max(ay, by)))


def _table_rows(table, words: list[tuple]) -> list[list[str]] | None:
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
    lines: dict[tuple[int, int], list[tuple]] = {}
    for w in words:
        lines.setdefault((w[5], w[6]), []).append(w)
    ordered = sorted(lines.values(), key=lambda ws: (min(w[1] for w in ws), min(w[0] for w in ws)))
    texts = [" ".join(w[4] for w in sorted(ws, key=lambda w: w[7])) for ws in ordered]
    return _join_lines(texts)


def _markdown_table(rows: list[list[str]]) -> str:
    """GitHub Markdown: first row as header, pipes escaped, cell line breaks as spaces."""
    def cell(text: str) -> str:
        return re.sub(r"\s+", " ", text or "").replace("|", "\\|").strip()

    width = max(len(r) for r in rows)
    padded = [list(r) + [""] * (width - len(r)) for r in rows]
    lines = ["| " + " | ".join(cell(c) for c in padded[0]) + " |", "|" + " --- |" * width]
    lines += ["| " + " | ".join(cell(c) for c in r) + " |" for r in padded[1:]]
    return "\n".join(lines)


# ------------------------------------------------------------------------------------------------
# Headings
# ------------------------------------------------------------------------------------------------


def _norm_key(text: str) -> str:
    """Comparison key: case-, accent-width- and whitespace-insensitive, letters and digits only."""
    text = unicodedata.normalize("NFKC", text).casefold()
    return "".join(ch for ch in text if ch.isalnum())


def _strip_number(title: str) -> str:
    match = _SECTION_NO_RE.match(title)
    return title[match.end():].strip() if match else title.strip()


def _outline_entries(doc: pymupdf.Document) -> list[tuple[int, str, int]]:
    """(level, title, page) from the outline, without entries that are not headings (paragraphs
    pasted into the outline, links to other files) and with levels rebuilt from section numbers
    when the outline is flat."""
    try:
        toc = doc.get_toc(simple=True)
    except Exception:
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
        match = _SECTION_NO_RE.match(title)
        has_number = match is not None and any(c.isdigit() for c in match.group(1))
        depths.append(len(re.split(r"[.\-]", match.group(1))) if has_number else None)
    numbered = [d for d in depths if d]
    if len(numbered) < len(entries) / 2:
        return entries
    base = min(numbered)
    return [(1 if d is None else d - base + 1, title, page) for d, (_, title, page) in zip(depths, entries)]


def _apply_outline_headings(doc: pymupdf.Document, pages: list[_Page]) -> bool:
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


def _find_title(page: _Page, title: str, start: tuple[int, int]) -> tuple[int, int, int, int] | None:
    """(unit index, first line, end line, number line or -1) of the rows spelling `title`."""
    key, rest = _norm_key(title), _norm_key(_strip_number(title))
    number = _SECTION_NO_RE.match(title)
    number_key = _norm_key(number.group(1)) if number else ""
    truncated = title.endswith("...") or title.endswith("\u2026")
    if truncated:
        key = _norm_key(title.rstrip(".\u2026"))
    for u in range(start[0], len(page.units)):
        unit = page.units[u]
        if unit.kind == "table" or unit.kind == "heading":
            continue
        first = start[1] if u == start[0] else 0
        for i in range(first, len(unit.lines)):
            acc = ""
            for j in range(i, min(i + 6, len(unit.lines))):
                acc += _norm_key(unit.lines[j].text)
                if acc == key or (truncated and acc.startswith(key) and len(key) >= 20):
                    return (u, i, j + 1, -1)
                if rest and len(rest) >= 3 and acc == rest:
                    num_line = _number_line(unit, i, number_key)
                    return (u, i, j + 1, num_line)
                if len(acc) >= len(key) and len(acc) >= len(rest):
                    break
    return None


def _number_line(unit: _Unit, i: int, number_key: str) -> int:
    """The row holding just the section number, shortly above the title rows (side headings)."""
    if not number_key:
        return -1
    for k in range(max(0, i - 2), i):
        if _norm_key(unit.lines[k].text) == number_key:
            return k
    return -1


def _split_out_headings(units: list[_Unit], hits: list[tuple[tuple[int, int, int, int], int, str]]) -> list[_Unit]:
    """Cut each matched title out of its unit as a heading; what was before and after it in the
    unit stays as paragraphs (the heading first, so a side heading precedes its date line)."""
    by_unit: dict[int, list] = {}
    for hit, level, title in hits:
        by_unit.setdefault(hit[0], []).append((hit, level, title))
    out: list[_Unit] = []
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
            out.append(_Unit("heading", _union(l.bbox for l in heading_lines), heading_lines, level, heading_text=title))
            if before:
                out.append(_make_unit(before))
            pos = j
        if unit.lines[pos:]:
            out.extend(_split_block(unit.lines[pos:]) if pos else [unit])
    return out


def _apply_font_headings(pages: list[_Page]) -> None:
    """Headings from font statistics: body size = most common size by characters; short units
    set larger than body, or wholly bold at body size, are headings. Levels come from section
    numbers ("2.1 Scope" = level 2) when the document numbers its headings, else from the
    distinct heading sizes (largest = 1); at most 4 levels."""
    body = _body_size(pages)
    if body is None:
        return
    repeated = _repeated_texts(pages)
    candidates: list[tuple[_Unit, float]] = []
    for page in pages:
        for unit in page.units:
            kind = _heading_signal(unit, page, body, repeated)
            if kind:
                candidates.append((unit, unit.lines[0].size if kind == "size" else body))
    numbered = [(size, depth) for unit, size in candidates if (depth := _heading_depth(unit.text))]
    level_of = _levels_by_number(numbered) if len(numbered) >= 3 else _levels_by_rank([s for _, s in candidates])
    for unit, size in candidates:
        unit.kind = "heading"
        unit.level = min(_heading_depth(unit.text) or level_of(size), 4)


def _has_side_text(unit: _Unit, page: _Page) -> bool:
    """A label with text right next to it on the same rows (glossary term, form field name) is
    not a heading; a column gutter is wider than the 45 pt looked at here."""
    y0, y1 = unit.bbox[1], unit.bbox[3]
    column = _column_index(unit.bbox, page.gutters)
    for other in page.units:
        if other is unit or _column_index(other.bbox, page.gutters) != column:
            continue
        if unit.bbox[2] <= other.bbox[0] <= unit.bbox[2] + 45 and min(y1, other.bbox[3]) - max(y0, other.bbox[1]) > 2:
            return True
    return False


def _heading_depth(text: str) -> int | None:
    """Depth of a heading's section number: "3" / "Chapter 2" = 1, "2.1" = 2, "A.1.2" = 3."""
    if re.match(r"^(?:chapter|kapitel|chapitre|part|teil|partie|appendix|anhang|annexe)\s+(?:\d+|[IVXLC]+|[A-Z])\b", text, re.I):
        return 1
    match = re.match(r"^((?:\d{1,2}|[A-Z])(?:\.\d{1,3})*)\.?\s+\w", text)
    if not match or (match.group(1).isalpha() and "." not in match.group(1)):
        return None
    number = re.sub(r"(?:\.0)+$", "", match.group(1))  # "2.0 Framework Basics" is a chapter
    return number.count(".") + 1


def _levels_by_number(numbered: list[tuple[float, int]]):
    """Level for a font size, learnt from the numbered headings set in it; an unnumbered heading
    takes the level of the nearest numbered size at or above its own."""
    depths: dict[float, Counter] = {}
    for size, depth in numbered:
        depths.setdefault(size, Counter())[depth] += 1
    levels = {size: c.most_common(1)[0][0] for size, c in depths.items()}

    def level_of(size: float) -> int:
        if size > max(levels):
            return 1
        if size < min(levels):
            return max(levels.values()) + 1
        return levels[min(s for s in levels if s >= size)]

    return level_of


def _levels_by_rank(sizes: list[float]):
    """Level = rank of the size among the distinct heading sizes, largest first."""
    ranked = sorted(set(sizes), reverse=True)
    return lambda size: ranked.index(size) + 1


def _body_size(pages: list[_Page]) -> float | None:
    sizes: Counter = Counter()
    for page in pages:
        for unit in page.units:
            for line in unit.lines:
                sizes[line.size] += len(line.text)
    return sizes.most_common(1)[0][0] if sizes else None


def _repeated_texts(pages: list[_Page]) -> set[str]:
    """Texts (digits ignored) found on 3+ pages: running headers, footers, form labels."""
    seen: Counter = Counter()
    for page in pages:
        keys = {re.sub(r"\d+", "#", _norm_key(u.text)) for u in page.units if u.lines}
        seen.update(keys)
    return {key for key, n in seen.items() if n >= 3}


def _heading_signal(unit: _Unit, page: _Page, body: float, repeated: set[str]) -> str | None:
    """'size' or 'bold' when the unit looks like a heading, else None."""
    if unit.kind not in ("paragraph", "list_item") or not unit.lines or len(unit.lines) > 3:
        return None
    text = unit.text
    letters = sum(ch.isalpha() for ch in text)
    if letters < 2 or len(text) > 150 or _in_margin(unit.bbox, page.height):
        return None
    if re.sub(r"\d+", "#", _norm_key(text)) in repeated:
        return None
    if not (text[0].isalnum() or text[0] in "\"'(\u201c\u00ab") or "@" in text or "http" in text:
        return None
    if text[-1] in ".,;" and not _SECTION_NO_RE.match(text.rstrip(".")):
        return None
    sizes = {line.size for line in unit.lines}
    if len(sizes) > 1 or any(line.mono or line.tabular for line in unit.lines):
        return None
    if _has_side_text(unit, page):
        return None
    if page.ocr:
        # OCR sizes are estimates and there is no bold: only clearly larger single lines count
        return "size" if len(unit.lines) == 1 and unit.lines[0].size >= 1.3 * body and letters >= 4 else None
    size = unit.lines[0].size
    if size >= body + 1.0 and letters >= 0.4 * len(text.replace(" ", "")):
        return "size"
    if (
        size >= body - 0.5
        and all(line.bold for line in unit.lines)
        and len(text) <= 100
        and not _BULLET_RE.match(text)
        and letters >= 0.5 * len(text.replace(" ", ""))
    ):
        return "bold"
    return None


# ------------------------------------------------------------------------------------------------
# Elements
# ------------------------------------------------------------------------------------------------


@dataclass
class _OpenTable:
    """The last table emitted, while it may still continue on the next page."""

    element: Element
    rows: list[list[str]]
    page: int
    bottom: float  # y1 of its last part
    between: list[tuple[int, Element]] = field(default_factory=list)  # elements emitted after it


def _to_elements(pages: list[_Page]) -> list[Element]:
    """Units to Elements; a table continued on the next page (same column count, only short
    margin lines such as running footers and headers in between) is appended to its first part,
    the repeated header row skipped."""
    elements: list[Element] = []
    open_table: _OpenTable | None = None
    for page in pages:
        for unit in page.units:
            if unit.kind == "table" and unit.rows:
                if open_table and _continues(open_table, unit, page.number):
                    rows = unit.rows[1:] if _same_cells(open_table.rows[0], unit.rows[0]) else unit.rows
                    open_table.rows.extend(rows)
                    open_table.element.text = _markdown_table(open_table.rows)
                    open_table.page, open_table.bottom, open_table.between = page.number, unit.bbox[3], []
                    continue
                rows = [list(r) for r in unit.rows]
                element = Element("table", _markdown_table(rows), page.number, None, _round(unit.bbox), page.height)
                elements.append(element)
                open_table = _OpenTable(element, rows, page.number, unit.bbox[3])
                continue
            element = _unit_element(unit, page)
            if element is None:
                continue
            elements.append(element)
            if open_table:
                open_table.between.append((page.number, element))
    return elements


def _continues(table: _OpenTable, unit: _Unit, page_number: int) -> bool:
    """True when `unit` (first on its page) carries on `table` from the page before."""
    if table.page != page_number - 1 or len(table.rows[0]) != len(unit.rows[0]):
        return False
    for page, element in table.between:
        if element.kind in ("heading", "caption", "table") or len(element.text) > 200:
            return False
        if page == table.page and element.bbox[1] < table.bottom - 2:
            return False
        if page == page_number and element.bbox[3] > unit.bbox[1] + 2:
            return False
    return True


def _same_cells(a: list[str], b: list[str]) -> bool:
    return [_norm_key(x) for x in a] == [_norm_key(x) for x in b]


def _unit_element(unit: _Unit, page: _Page) -> Element | None:
    text = unit.heading_text if unit.kind == "heading" and unit.heading_text else unit.text
    if unit.kind == "list_item":
        text = _BULLET_RE.sub("", text, count=1)
    text = text.strip()
    if not text:
        return None
    level = unit.level if unit.kind == "heading" else None
    return Element(unit.kind, text, page.number, level, _round(unit.bbox), page.height)  # type: ignore[arg-type]


def _round(box: Box) -> Box:
    return tuple(round(v, 2) for v in box)  # type: ignore[return-value]

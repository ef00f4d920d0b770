"""The parse of one PDF: open and validate the file, read it page by page, then the
document-wide steps (headings, table continuation). Every way a file can be unusable becomes a
ParseError that tells an operator what to do; a page that fails is reported and skipped.
"""

from __future__ import annotations

import pymupdf

from rag_pipeline.parsing.config import ParseLimits
from rag_pipeline.parsing.pdf.covered_text import hide_covered
from rag_pipeline.parsing.pdf.covered_text import warning as covered_warning
from rag_pipeline.parsing.pdf.drop_caps import attach_drop_caps
from rag_pipeline.parsing.pdf.elements import to_elements
from rag_pipeline.parsing.pdf.font_headings import apply_font_headings
from rag_pipeline.parsing.pdf.hidden_text import hide_unseen
from rag_pipeline.parsing.pdf.hidden_text import warning as hidden_warning
from rag_pipeline.parsing.pdf.legacy_glyphs import read_as_drawn
from rag_pipeline.parsing.pdf.letter_spacing import respace
from rag_pipeline.parsing.pdf.line_numbers import drop_line_numbers
from rag_pipeline.parsing.pdf.lines import text_rows
from rag_pipeline.parsing.pdf.model import Page
from rag_pipeline.parsing.pdf.ocr import OcrEngine, needs_ocr
from rag_pipeline.parsing.pdf.outline_headings import apply_outline_headings
from rag_pipeline.parsing.pdf.paragraphs import merge_broken_paragraphs, split_block
from rag_pipeline.parsing.pdf.reading_order import reading_order
from rag_pipeline.parsing.pdf.tables import find_tables
from rag_pipeline.parsing.pdf.text import TEXT_FLAGS
from rag_pipeline.parsing.pdf.unreadable import unreadable_fonts, without_fonts
from rag_pipeline.parsing.pdf.unreadable import warning as unreadable_warning
from rag_pipeline.parsing.types import ParsedDocument, ParseError
from rag_pipeline.parsing.versions import PDF_PARSER_VERSION as PARSER_VERSION  # bump it there


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
    """Pages first, then the document-wide steps: headings need the font statistics of every
    page, and a table may continue on the next page."""
    warnings: list[str] = []
    ocr = OcrEngine(limits)
    pages: list[Page] = []
    for index in range(doc.page_count):
        page = _read_page(doc, index, ocr, warnings)
        if page is not None:
            pages.append(page)
    if not any(unit.lines or unit.rows for page in pages for unit in page.units):
        raise ParseError(_no_text_message(name, doc.page_count, warnings))
    if not apply_outline_headings(doc, pages):
        apply_font_headings(pages)
    elements = to_elements(pages)
    return ParsedDocument(
        elements=elements,
        parser=PARSER_VERSION,
        page_count=doc.page_count,
        warnings=warnings,
        ocr_pages=[page.number for page in pages if page.ocr],
        title=_metadata_title(doc),
    )


def _metadata_title(doc: pymupdf.Document) -> str | None:
    """The Title of the document information dictionary; raw (cleaning and the choice between it
    and the first heading happen downstream)."""
    try:
        return (doc.metadata or {}).get("title") or None
    except Exception:  # noqa: BLE001 -- a damaged info dictionary only loses the title
        return None


def _no_text_message(name: str, page_count: int, warnings: list[str]) -> str:
    """The message for a PDF without any text, saying why (scan without OCR, blank pages)."""
    if any("OCR" in w for w in warnings):
        detail = "; ".join(w for w in warnings if "OCR" in w)[:500]
        return f"{name}: no extractable text in {page_count} page(s): {detail}"
    return (
        f"{name}: no extractable text in {page_count} page(s): the pages are blank or hold only "
        "graphics; check the file, or exclude it from indexing"
    )


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
    """Checks that need the opened document (encryption, truncation, page count)."""
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


def _read_page(doc: pymupdf.Document, index: int, ocr: OcrEngine, warnings: list[str]) -> Page | None:
    """Text units of one page in reading order; a page that fails is reported, not fatal."""
    number = index + 1
    try:
        page = doc.load_page(index)
        if page.rotation:
            page.remove_rotation()  # text coordinates as displayed (in memory only; bytes untouched)
        rect = page.rect
        used_ocr = False
        textpage = page.get_textpage(flags=TEXT_FLAGS)
        text_dict = page.get_text("dict", flags=TEXT_FLAGS, textpage=textpage)
        if needs_ocr(page, text_dict):
            ocr_page = ocr.textpage(page, number, warnings)
            if ocr_page is not None:
                text_dict = page.get_text("dict", flags=TEXT_FLAGS, textpage=ocr_page)
                used_ocr = True
        if not used_ocr:
            respace(page, textpage, text_dict, TEXT_FLAGS)  # "E X E C U T I V E" as its words
        if not used_ocr and (unseen := hide_unseen(page, text_dict)):
            warnings.append(hidden_warning(number, unseen))
        if not used_ocr and (covered := hide_covered(page, textpage, text_dict, TEXT_FLAGS)):
            warnings.append(covered_warning(number, covered))
        if not used_ocr and (unreadable := unreadable_fonts(text_dict)):
            without_fonts(text_dict, set(unreadable))
            warnings.append(unreadable_warning(number, unreadable))
        drop_line_numbers(text_dict)  # a transcript's margin numbers 1..25 are no text of the page
        drawn = None if used_ocr else read_as_drawn(text_dict)  # "`" of a rupee font is "₹"
        tables = [] if used_ocr else find_tables(page, warnings, number)
        for table in tables if drawn else ():
            table.rows = [[cell.translate(drawn) if cell else cell for cell in row] for row in table.rows or []]
        lines_by_block = attach_drop_caps(text_rows(text_dict, [t.bbox for t in tables]))
        units = [u for block in lines_by_block for u in split_block(block)]
        ordered, gutters = reading_order(units + tables, rect.height)
        return Page(number, rect.height, merge_broken_paragraphs(ordered), used_ocr, gutters)
    except Exception as exc:  # noqa: BLE001 -- one bad page is reported, the rest of the document still parses
        warnings.append(f"page {number} could not be read and was skipped ({type(exc).__name__}: {exc})")
        return None

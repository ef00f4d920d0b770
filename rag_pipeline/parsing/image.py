"""Scans and photos of pages (JPEG, PNG, TIFF; a multi-page TIFF is a multi-page document), read
as a scanned PDF is: by OCR.

Each frame is wrapped as a page of a PDF by PyMuPDF (the image is embedded, not redrawn) and the
PDF parser reads it: its OCR path (Tesseract) reads image-only pages, with the same languages,
page limit and warnings, and the elements carry their page numbers. Before anything is decoded,
the image's header says its frames and pixels: a few kilobytes declaring 100,000 x 100,000
pixels (a decompression bomb) or more frames than the page limit is refused with what to do.
"""

from __future__ import annotations

from io import BytesIO

from rag_pipeline.parsing.config import ParseLimits
from rag_pipeline.parsing.types import ParsedDocument, ParseError

MAX_PIXELS = 150_000_000  # per frame: an A0 poster scanned at 300 dpi is about 140 million
_FILE_TYPES = {"JPEG": "jpeg", "PNG": "png", "TIFF": "tiff", "MPO": "jpeg"}


def parse_image(data: bytes, *, name: str, limits: ParseLimits) -> ParsedDocument:
    """The text of an image of pages, by OCR (module docstring)."""
    import pymupdf

    from rag_pipeline.parsing.pdf import parse_pdf

    file_type = _checked_header(data, limits)
    try:
        with pymupdf.open(stream=data, filetype=file_type) as image:
            pdf = image.convert_to_pdf()
    except Exception as exc:
        raise ParseError(f"the image could not be decoded ({type(exc).__name__}: {exc}); it is damaged or "
                         "truncated: scan or export it again") from exc
    return parse_pdf(pdf, name=name, limits=limits)  # without OCR it says "OCR is disabled for this source"


def _checked_header(data: bytes, limits: ParseLimits) -> str:
    """The file type PyMuPDF opens it as, after the header's frames and pixels are checked."""
    from PIL import Image, UnidentifiedImageError

    try:
        with Image.open(BytesIO(data)) as image:  # reads the header only
            frames = getattr(image, "n_frames", 1)
            width, height = image.size
            kind = image.format or ""
    except Image.DecompressionBombError as exc:
        raise ParseError(f"the image declares more pixels than any scanned page has ({exc}); a decompression "
                         "bomb, or a scan at far more than 300 dpi: scan it at 300 dpi") from exc
    except (UnidentifiedImageError, OSError, ValueError) as exc:
        raise ParseError(f"the image's header cannot be read ({type(exc).__name__}); it is damaged or "
                         "truncated: scan or export it again") from exc
    if _truncated(data, kind):
        raise ParseError(f"the {kind} image ends before its end marker: it is damaged or truncated (an interrupted "
                         "upload or copy?); scan or export it again")
    if kind not in _FILE_TYPES:
        raise ParseError(f"{kind or 'this'} images are not read; save the scan as JPEG, PNG or TIFF")
    if frames > limits.max_pages:
        raise ParseError(f"the image has {frames} pages (frames), over the {limits.max_pages}-page limit; "
                         "split it or raise max_pages for this source")
    if width * height > MAX_PIXELS:
        raise ParseError(f"the image is {width:,} x {height:,} pixels, over the {MAX_PIXELS:,}-pixel limit of one "
                         "page (a decompression bomb, or a scan at far more than 300 dpi): scan it at 300 dpi")
    return _FILE_TYPES[kind]


def _truncated(data: bytes, kind: str) -> bool:
    """A JPEG without its end-of-image marker or a PNG without its end chunk near the end: a
    decoder would show the rest grey and OCR read nothing, where the owner should hear it is cut."""
    tail = data[-4096:]
    if kind in ("JPEG", "MPO"):
        return b"\xff\xd9" not in tail
    if kind == "PNG":
        return b"IEND" not in tail
    return False

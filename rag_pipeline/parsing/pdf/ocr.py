"""Text-layer checks and OCR: only pages without a text layer go to Tesseract, and a page that
cannot be OCR'd (OCR off, Tesseract or a language missing, Tesseract failing) is always named in
a warning, so a scan is never silently indexed as an empty page.
"""

from __future__ import annotations

import functools
import shutil
import subprocess

import pymupdf

from rag_pipeline.parsing.config import ParseLimits

_MIN_TEXT_LAYER_CHARS = 20  # fewer visible characters than this on an image page = scanned page
_MIN_IMAGE_COVER = 0.25  # share of the page an image must cover before the page counts as a scan
_OCR_DPI = 300
_OCR_MAX_PIXELS = 16_000_000  # oversized pages (posters) are rendered at a lower dpi to stay bounded


def needs_ocr(page: pymupdf.Page, text_dict: dict) -> bool:
    """True for a scanned page: (almost) no text layer, and images covering a good part of it.
    A blank page, or one with only vector graphics, has nothing to OCR."""
    return _visible_chars(text_dict) < _MIN_TEXT_LAYER_CHARS and _is_image_page(page)


def _visible_chars(text_dict: dict) -> int:
    """Characters of the text layer other than whitespace."""
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


class OcrEngine:
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
        """The OCR text page, or None with a warning saying why the page stays without text."""
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
        except Exception as exc:  # noqa: BLE001 -- OCR trouble becomes a warning, never a lost page
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
    except Exception:  # noqa: BLE001 -- OCR trouble becomes a warning, never a lost page
        return None, None, "OCR is not installed (Tesseract language data not found; apt-get install tesseract-ocr)"
    try:
        out = subprocess.run([exe, "--list-langs"], capture_output=True, text=True, timeout=30).stdout
    except Exception as exc:  # noqa: BLE001 -- OCR trouble becomes a warning, never a lost page
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

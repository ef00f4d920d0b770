"""Scans as images (parsing/image.py): a JPEG, PNG or multi-page TIFF is read by OCR as a scanned
PDF is, each frame a page; a damaged image, a decompression bomb, an image under another image
type's name or a renamed PDF is refused saying what to do. On the real scans of the shared corpus
(which were refused as an unsupported file type before) and on images made here; Tesseract as
scripts/setup.sh installs it."""

from __future__ import annotations

import struct
import zlib
from io import BytesIO
from pathlib import Path

import pymupdf
import pytest
from helpers import search
from PIL import Image

from rag_pipeline.parsing import ParseError, parse_document
from rag_pipeline.parsing.config import ParseLimits

LINES = ["Travel Policy", "Hotels are capped at 140 euros a night.", "Receipts are due within ten working days."]


def _page_image(lines: list[str], file_type: str = "png") -> bytes:
    """A page with `lines` printed on it, as a 200 dpi image with no text layer."""
    doc = pymupdf.open()
    page = doc.new_page(width=420, height=300)
    for i, line in enumerate(lines):
        page.insert_text((36, 60 + i * 28), line, fontsize=14)
    return page.get_pixmap(dpi=200).tobytes(file_type)


def _png_header(width: int, height: int) -> bytes:
    """A valid PNG signature and header declaring width x height pixels, with one tiny data chunk."""
    def chunk(kind: bytes, body: bytes) -> bytes:
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(b"\x00" * 64)) + chunk(b"IEND", b""))


def test_a_real_jpeg_scan_is_read(corpus_dir: Path) -> None:
    path = corpus_dir / "docs" / "scanned" / "cfr_title5_civil_service_rules_scan_A.jpg"
    doc = parse_document(path.read_bytes(), path.name)
    text = " ".join(e.text for e in doc.elements)
    assert "CIVIL SERVICE RULES" in text and "Positions and employees affected" in text
    assert doc.ocr_pages == [1] and {e.page for e in doc.elements} == {1}


@pytest.mark.parametrize("file_type", ["png", "jpeg"])
def test_a_page_image_is_read_by_ocr(file_type: str) -> None:
    doc = parse_document(_page_image(LINES, file_type), f"policy.{'jpg' if file_type == 'jpeg' else 'png'}")
    text = " ".join(e.text for e in doc.elements)
    assert "Hotels are capped at 140 euros a night." in text and "ten working days" in text


def test_a_multi_page_tiff_keeps_its_pages() -> None:
    frames = [Image.open(BytesIO(_page_image([f"Page {n} says chapter {n} applies."]))) for n in (1, 2, 3)]
    out = BytesIO()
    frames[0].save(out, format="TIFF", save_all=True, append_images=frames[1:], dpi=(200, 200))
    doc = parse_document(out.getvalue(), "scan.tiff")
    pages = {e.page: e.text for e in doc.elements}
    assert sorted(pages) == [1, 2, 3] and "chapter 3 applies" in pages[3]


def test_bad_images_are_refused_saying_what_to_do() -> None:
    bomb = _png_header(100_000, 100_000)  # 10 billion pixels in 90 bytes
    with pytest.raises(ParseError, match="pixel|decompression bomb"):
        parse_document(bomb, "bomb.png")
    truncated = _page_image(LINES, "jpeg")[:600]
    with pytest.raises(ParseError, match="damaged or truncated"):
        parse_document(truncated, "cut.jpg")
    with pytest.raises(ParseError, match="named .jpg"):
        parse_document(b"%PDF-1.7\n" + b"x" * 100, "report.jpg")
    with pytest.raises(ParseError, match="OCR is disabled for this source"):
        parse_document(_page_image(LINES), "policy.png", ParseLimits(ocr=False))
    tiff = BytesIO()
    Image.new("L", (10, 10)).save(tiff, format="TIFF")
    with pytest.raises(ParseError, match="blank or hold only graphics"):  # a blank scan: no text, not "damaged"
        parse_document(tiff.getvalue(), "blank.tif")


def test_a_synced_scan_is_found(capsys: pytest.CaptureFixture[str], tmp_path: Path, db_url: str) -> None:
    """Through the real job, OCR on (the default): the scan is indexed and answers its question."""
    from conftest import write_config
    from helpers import sync

    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "_access.yaml").write_text("groups: [all-staff]\n")
    (docs / "other.md").write_text("# Holidays\n\nStaff get 25 days of leave a year.\n")
    (docs / "policy-scan.png").write_bytes(_page_image(LINES))
    config = write_config(tmp_path, db_url, docs=docs)
    code, report = sync(capsys, config)
    assert code == 0, report
    hits = search(capsys, config, "How much may a hotel cost per night?", "all-staff")
    assert hits[0]["uri"] == "policy-scan.png" and "140 euros" in hits[0]["text"]

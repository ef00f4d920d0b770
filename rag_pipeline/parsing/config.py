"""The `limits` section of `rag_pipeline.yaml`: per-file limits of the parsers.

Pickled to parser processes, and part of the parse key (sync/parse_key.py): a file a parser
refused under some limits is tried again when they change."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from rag_pipeline.common.config import Flag, PositiveNumber, PositiveWhole, Text


class ParseLimits(BaseModel):
    """Per-file limits. Checked by the parsers where they can be checked cheaply (size, pages,
    uncompressed archive size); wall time is enforced by the caller running the parser in a
    killable worker process."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    max_bytes: PositiveWhole = 200 * 1024 * 1024
    max_pages: PositiveWhole = 2000
    max_seconds: PositiveNumber = 120.0
    max_uncompressed_bytes: PositiveWhole = 500 * 1024 * 1024  # zip-based formats (DOCX, PPTX): archive-bomb guard
    max_compression_ratio: PositiveNumber = 200.0
    ocr: Flag = True  # OCR pages without a text layer when Tesseract is available
    ocr_languages: Text = Field("eng+deu+fra", min_length=1)

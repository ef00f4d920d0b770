"""Layout-aware PDF parser built on PyMuPDF's fast text dictionary (`page.get_text("dict")`).

Why not a ready-made PDF-to-Markdown converter: the layout-model converters run at a few pages
per second, which puts a 400-page manual past the per-file time limit. Instead this package reads
the text dictionary (hundreds of pages per second) and rebuilds structure with cheap geometry:

* reading order (reading_order.py): column gutters are found per page from block x-positions;
  columns are read one after the other, while blocks that cross a gutter (titles, full-width
  figures) stay in their vertical place and separate "bands" of columns;
* headings: the document outline when it matches the page text (outline_headings.py), else font
  size / bold statistics of the whole document (font_headings.py; a false heading puts a wrong
  breadcrumb on every chunk below it, so the rules are conservative: short lines only, never
  repeated margin lines, never table cells);
* tables (tables.py): PyMuPDF's ruling-line table finder, only on pages whose vector graphics
  could form a grid, with cell text rebuilt from words (the finder's own cell text drops spaces);
  a table continued on the next page with the same column count stays one table (elements.py);
* OCR (ocr.py): only for pages without a text layer, through Tesseract, and never silently
  skipped.

The flow, in document.py: open and validate the file; per page, visual rows (lines.py) become
paragraph units (paragraphs.py) in reading order; then headings and Elements for the whole
document. The page model passed between the steps is in model.py, shared text rules in text.py.

Page headers and footers are kept here (with their bbox and the page height) and removed by the
format-agnostic cleaner (rag_pipeline.cleaning.boilerplate), which sees the whole document.
"""

from __future__ import annotations

from rag_pipeline.parsing.pdf.document import PARSER_VERSION, parse_pdf

__all__ = ["PARSER_VERSION", "parse_pdf"]

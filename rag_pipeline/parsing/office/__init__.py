"""Non-PDF formats (DOCX, PPTX, HTML, Markdown, plain text, e-mail) via `unstructured`.

`unstructured` does the format work; this package only maps its element types onto the
project's `Element` kinds (see types.py), and fixes the few places where its raw output would
mislead the format-agnostic cleaner and chunker downstream:

* heading levels come from real structure only (DOCX heading styles, HTML h1..h6, Markdown #,
  PPTX title placeholders), never from "this line looks short" guesses, because a false heading
  splits chunks and puts a wrong breadcrumb on everything below it;
* tables become GitHub Markdown with a header row, so a table stays one readable chunk;
* HTML pages lose their navigation, sidebars, ads and footers before partitioning, so the index
  holds the page's content and not the site's chrome.

Modules:

* dispatch.py -- `parse_with_unstructured`, the entry point, and error wrapping;
* formats.py -- one parse function per format;
* elements.py -- unstructured element -> `Element` kind mapping;
* slides.py -- PPTX title placeholders and numbered lists, per-slide mapping;
* tables.py -- HTML table -> GitHub Markdown;
* html_content.py, html_chrome.py, html_tree.py -- main-content extraction (a small Readability);
* markdown_tables.py -- delimiter-row repair so python-markdown sees GitHub tables;
* text.py -- bytes -> str (strict UTF-8, HTML charsets) and whitespace normalisation;
* fast_heuristics.py -- skipping spaCy work whose answer the mapping throws away;
* version.py -- `PARSER_VERSION`, stored with each document to trigger re-parses.
"""

from __future__ import annotations

import os

# `unstructured` pings a telemetry endpoint when imported and after every partition call (with
# document type and element counts). Company documents must not leak metadata, and offline the
# import-time ping can stall for its 10 s timeout. Opt out before anything imports it (this
# package's __init__ runs before any of its modules, however they are imported).
os.environ.setdefault("SCARF_NO_ANALYTICS", "true")
os.environ.setdefault("DO_NOT_TRACK", "true")
os.environ.setdefault("UNSTRUCTURED_DISABLE_NOTICE", "1")

from rag_pipeline.parsing.office.dispatch import parse_with_unstructured, short_reason
from rag_pipeline.parsing.office.formats import KINDS
from rag_pipeline.parsing.office.markdown_tables import normalize_markdown, normalize_md_table_delimiters
from rag_pipeline.parsing.office.tables import html_table_to_markdown
from rag_pipeline.parsing.office.version import PARSER_VERSION

__all__ = [
    "KINDS",
    "PARSER_VERSION",
    "html_table_to_markdown",
    "normalize_markdown",
    "normalize_md_table_delimiters",
    "parse_with_unstructured",
    "short_reason",
]

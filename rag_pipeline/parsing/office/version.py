"""The parser version stored with every non-PDF document, so that a mapping change re-parses."""

from __future__ import annotations

import importlib.metadata

UNSTRUCTURED_VERSION = importlib.metadata.version("unstructured")
# Bump "+mapN" whenever the mapping (elements.py, slides.py, tables.py, html_*.py, ...) changes
# what a document parses to: the version is stored with each parsed document so a mapping change
# triggers a re-parse.
PARSER_VERSION = f"unstructured-{UNSTRUCTURED_VERSION}+map1"

"""The parser version stored with every non-PDF document (defined in `parsing.versions`, which
imports no parsing library)."""

from __future__ import annotations

from rag_pipeline.parsing.versions import OFFICE_PARSER_VERSION as PARSER_VERSION
from rag_pipeline.parsing.versions import UNSTRUCTURED_VERSION

__all__ = ["PARSER_VERSION", "UNSTRUCTURED_VERSION"]

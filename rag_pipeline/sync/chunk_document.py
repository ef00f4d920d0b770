"""One document's chunks and language: what the chunk step stores for it, computed alike in the
step's own process and in its helper processes (sync/chunk_helper.py)."""

from __future__ import annotations

from rag_pipeline.chunking.chunks import TokenCounter, chunk_elements, cleaned_text
from rag_pipeline.chunking.document_identity import document_identity
from rag_pipeline.store import text_search
from rag_pipeline.sync.items import Chunked, Cleaned


def chunk_document(cleaned: Cleaned, uri: str, count_tokens: TokenCounter, max_tokens: int) -> Chunked:
    """One document's chunks, each led by its identity line, and its language (detected once
    over the whole cleaned text: it picks the full-text configuration of every chunk)."""
    identity = document_identity(cleaned.title, cleaned.elements, uri)
    chunks = chunk_elements(cleaned.elements, count_tokens, max_tokens, identity=identity)
    language = text_search.detect_language(cleaned_text(cleaned.elements)[0])
    return Chunked(chunks=chunks, parser=cleaned.parser, cleaning=cleaned.cleaning, title=cleaned.title,
                   language=language)

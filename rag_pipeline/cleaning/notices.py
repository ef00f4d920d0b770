"""Corpus-wide notices: paragraphs (legal disclaimers, confidentiality footers) that recur
verbatim across many documents of one source carry no answer to any question but crowd every
search; running headers within one document are handled by boilerplate.py instead.

A paragraph is digested (SHA-256) after normalising case, whitespace and digits, so "© 2025"
and "© 2026" notices match. The digests of every document live in the database
(store.paragraph_digests), so the decision is corpus-wide even though documents stream through
in batches. "Digest", not "fingerprint": the project keeps that word for a source listing's
cheap identity (sources.fingerprint).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable

from rag_pipeline.parsing.types import Element

NOTICES_VERSION = "notices1"
MIN_DOCUMENTS = 3  # a paragraph must recur in at least this many documents of the source ...
MIN_SHARE = 0.2  # ... and in at least this share of them
_KINDS = ("paragraph", "caption", "list_item", "page_footer", "page_header")
_MIN_CHARS, _MAX_CHARS = 30, 2000


def _normalise(text: str) -> str:
    return re.sub(r"\d+", "0", " ".join(text.split()).casefold())


def paragraph_digest(text: str) -> str | None:
    """A short, stable digest of a notice-like paragraph; None for text that is too short
    (a repeated 'Contact us' line is not worth a digest) or too long to be a notice."""
    norm = _normalise(text)
    if not _MIN_CHARS <= len(norm) <= _MAX_CHARS:
        return None
    return hashlib.sha256(norm.encode("utf-8")).hexdigest()[:32]


def document_digests(elements: Iterable[Element]) -> set[str]:
    """The digests of a document's notice-like paragraphs."""
    return {digest for e in elements if e.kind in _KINDS and (digest := paragraph_digest(e.text))}


def is_notice(documents_with_it: int, documents_in_source: int) -> bool:
    return documents_with_it >= MIN_DOCUMENTS and documents_with_it >= MIN_SHARE * documents_in_source


def strip_notices(elements: list[Element], notices: set[str]) -> tuple[list[Element], int]:
    """The elements without those whose paragraph digest is in `notices`, and how many went."""
    if not notices:
        return elements, 0
    kept = [e for e in elements if e.kind not in _KINDS or paragraph_digest(e.text) not in notices]
    return kept, len(elements) - len(kept)

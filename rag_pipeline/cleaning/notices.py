"""Corpus-wide notices: paragraphs (legal disclaimers, confidentiality footers) that recur
verbatim across many documents of one source carry no answer to any question but crowd every
search; running headers within one document are handled by boilerplate.py instead.

Recurring is not enough. Documents made from one template (supply contracts, forms, the yearly
versions of a policy kept side by side) share most of their paragraphs, and those are what the
questions ask about: "how much notice ends the agreement with Gamma?" had no answer once every
clause of five contracts was taken for a notice. A notice is pasted onto a document's edge, so
a recurring paragraph is removed only where it lies in the document's leading or trailing run of
headings and recurring paragraphs (page headers and footers anywhere), and only from a document
holding at most MAX_NOTICES distinct recurring paragraphs: one holding more shares a template
with the others, and keeps them all. A document whose every paragraph recurs (copies of one memo) keeps
them too: they are its text, and removing them would leave nothing to index.

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

NOTICES_VERSION = "notices2"  # notices2: only at a document's edges, never from a template's documents
MIN_DOCUMENTS = 3  # a paragraph must recur in at least this many documents of the source ...
MIN_SHARE = 0.2  # ... and in at least this share of them
MAX_NOTICES = 3  # distinct recurring paragraphs a document may hold and still have them read as notices
_KINDS = ("paragraph", "caption", "list_item", "page_footer", "page_header")
_FURNITURE = ("page_footer", "page_header")
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
    """The elements without the notices among them (module docstring), and how many went."""
    if not notices:
        return elements, 0
    digests = [paragraph_digest(e.text) if e.kind in _KINDS else None for e in elements]
    recurring = [d is not None and d in notices for d in digests]
    shared = {d for d, r, e in zip(digests, recurring, elements) if r and e.kind not in _FURNITURE}
    edges = _edge_runs(elements, recurring) if len(shared) <= MAX_NOTICES else set()
    kept = [e for i, e in enumerate(elements)
            if not (recurring[i] and (e.kind in _FURNITURE or i in edges))]
    if not any(e.kind != "heading" and e.text.strip() for e in kept):
        return elements, 0  # all its text recurs (copies of one memo): that text is the document
    return kept, len(elements) - len(kept)


def _edge_runs(elements: list[Element], recurring: list[bool]) -> set[int]:
    """The indexes of the document's leading and trailing runs of headings and recurring
    paragraphs (page furniture and empty text do not end a run; any other text does)."""
    def run(order: range) -> list[int]:
        found = []
        for i in order:
            if not (recurring[i] or elements[i].kind in ("heading", *_FURNITURE) or not elements[i].text.strip()):
                break
            found.append(i)
        return found

    return set(run(range(len(elements)))) | set(run(range(len(elements) - 1, -1, -1)))

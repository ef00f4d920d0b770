"""The entry point for non-PDF files: pick the format's parser, and turn any library failure
into a `ParseError` an operator can act on."""

from __future__ import annotations

from rag_pipeline.parsing.config import ParseLimits
from rag_pipeline.parsing.detect import KIND_LABELS
from rag_pipeline.parsing.office.fast_heuristics import fast_heuristics
from rag_pipeline.parsing.office.formats import KINDS, PARSERS
from rag_pipeline.parsing.types import ParsedDocument, ParseError


def parse_with_unstructured(
    data: bytes, *, name: str, kind: str, limits: ParseLimits
) -> ParsedDocument:
    """Parse one non-PDF file. `kind` comes from `detect.detect_kind`, which has already checked
    that the bytes really are that format; archive-bomb and size limits are the dispatcher's job.

    Any library failure becomes a `ParseError` naming the format, because the message is shown
    to operators and a library traceback tells them nothing about what to fix."""
    if kind not in PARSERS:
        raise ValueError(f"no unstructured parser for kind {kind!r}; expected one of {KINDS}")
    with fast_heuristics():
        try:
            return PARSERS[kind](data, limits)
        except ParseError:
            raise
        except Exception as exc:
            raise ParseError(f"could not read this {KIND_LABELS[kind]} file: {short_reason(exc)}") from exc


def short_reason(exc: BaseException, limit: int = 200) -> str:
    """One line describing `exc` for an operator: the exception type plus its first line."""
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    reason = f"{type(exc).__name__}: {text}" if text else type(exc).__name__
    return reason if len(reason) <= limit else reason[: limit - 3] + "..."

"""The parser contract: every format parser turns bytes into a flat list of `Element`s.

A flat list (not a tree) keeps parsers simple and lets the cleaner and chunker, which are
format-agnostic, rebuild the heading tree from heading levels alone.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from rag_pipeline.errors import PipelineError

ElementKind = Literal[
    "heading",  # a section heading; `level` 1 (top) .. 6
    "paragraph",
    "list_item",
    "table",  # text is GitHub-flavoured Markdown with a header row; never split by the chunker
    "code",
    "caption",
    "page_header",  # known running header (e.g. DOCX header part); dropped by the cleaner
    "page_footer",  # known running footer; dropped by the cleaner
]


@dataclass
class Element:
    kind: ElementKind
    text: str
    page: int | None = None  # 1-based page (PDF) or slide number (PPTX); None when the format has no pages
    level: int | None = None  # heading level, only for kind == "heading"
    bbox: tuple[float, float, float, float] | None = None  # x0, y0, x1, y1 in page points (PDF only)
    page_height: float | None = None  # lets the cleaner tell top/bottom margins apart (PDF only)
    page_end: int | None = None  # last page of an element spanning pages (a table continued over pages)
    bold: bool | None = None  # True when the whole paragraph is bold: a heading candidate where the format has no outline

    def to_dict(self) -> dict:
        return {k: v for k, v in self.__dict__.items() if v is not None}

    @classmethod
    def from_dict(cls, data: dict) -> Element:
        data = dict(data)
        if data.get("bbox") is not None:
            data["bbox"] = tuple(data["bbox"])
        return cls(**data)


@dataclass
class ParsedDocument:
    elements: list[Element]
    parser: str  # e.g. "pymupdf/1.26.5+rag3" -- recorded on the version so a parser change re-parses
    page_count: int | None = None
    warnings: list[str] = field(default_factory=list)  # non-fatal: e.g. "page 3: no text layer and OCR unavailable"
    ocr_pages: list[int] = field(default_factory=list)  # pages whose text came from OCR
    title: str | None = None  # the file's own title metadata (PDF/DOCX/PPTX properties, HTML <title>), raw

    def to_dict(self) -> dict[str, Any]:
        """The wire form: plain JSON types, as a parser process sends it and a work item stores it."""
        return {
            "elements": [e.to_dict() for e in self.elements],
            "parser": self.parser,
            "page_count": self.page_count,
            "warnings": self.warnings,
            "ocr_pages": self.ocr_pages,
            "title": self.title,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ParsedDocument:
        """Back from the wire form; keys a stored item may lack take their defaults."""
        return cls(
            elements=[Element.from_dict(e) for e in data["elements"]],
            parser=data["parser"],
            page_count=data.get("page_count"),
            warnings=list(data.get("warnings", [])),
            ocr_pages=list(data.get("ocr_pages", [])),
            title=data.get("title"),
        )


class ParseError(PipelineError):
    """A file that cannot be turned into text. The message is shown to operators as-is, so it
    must say what is wrong with the file and what to do about it (never a bare library trace)."""

    def __init__(self, message: str, *, stage: str = "parse") -> None:
        super().__init__(message)
        self.stage = stage


__all__ = ["Element", "ElementKind", "ParseError", "ParsedDocument"]

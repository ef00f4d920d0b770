"""Parsing: bytes + file name -> `ParsedDocument`, or a `ParseError` an operator can act on.

`parse_document` is the only entry point the pipeline should call. It applies the checks that
must happen before any parsing library sees the bytes (empty, too big, wrong type, archive
bomb), dispatches by kind, and guarantees that whatever goes wrong inside a library comes out
as a `ParseError` with the file's kind and a one-line reason, never as a bare traceback.

Importing this package is cheap: the parsing libraries load on first use.

`ParseError.stage` tells operators where a file was rejected: "detect" (wrong or unknown type,
damaged container), "limits" (empty, size, archive bomb, too many slides), "parse" (the parser
failed or found no text).
"""

from __future__ import annotations

from rag_pipeline.parsing.config import ParseLimits
from rag_pipeline.parsing.detect import KIND_BY_SUFFIX, KIND_LABELS, SUPPORTED_SUFFIXES, detect_kind, open_zip
from rag_pipeline.parsing.headings import tidy_headings
from rag_pipeline.parsing.types import ParsedDocument, ParseError

__all__ = [
    "KIND_BY_SUFFIX",
    "LIGHT_KINDS",
    "ParseError",
    "ParseLimits",
    "ParsedDocument",
    "SUPPORTED_SUFFIXES",
    "detect_kind",
    "parse_document",
    "parser_version_for",
]

_ZIP_KINDS = ("docx", "pptx")
LIGHT_KINDS = ("markdown",)  # kinds parsed without importing unstructured (markdown_direct.py)
_UTF8_BOM = b"\xef\xbb\xbf"
# An uncompressed member smaller than this is never called a bomb on ratio alone: small XML
# parts of real documents (styles, empty tables) can compress far better than 200:1.
_RATIO_MIN_MEMBER_BYTES = 1024 * 1024
_MAX_ARCHIVE_MEMBERS = 20_000


def parse_document(data: bytes, name: str, limits: ParseLimits = ParseLimits()) -> ParsedDocument:
    """Parse one file. `name` is only used for its extension (and may contain anything)."""
    data = bytes(data)
    check_size(data, limits)
    kind = detect_kind(data, name)
    if kind in _ZIP_KINDS:
        check_archive(data, kind, limits)
    document = tidy_headings(_paginated(_dispatch(data, name, kind, limits), kind))
    _require_text(document, kind)
    document.parser = parser_version_for(kind)  # what planning compares with, set in one place
    return document


def parser_version_for(kind: str) -> str:
    """The parser version string recorded with documents of `kind`; a change means re-parse.
    Imports no parsing library: planning calls it for every listed file."""
    from rag_pipeline.parsing.versions import KIND_SUFFIXES, OFFICE_PARSER_VERSION, PDF_PARSER_VERSION

    if kind in ("pdf", "image"):  # an image is read by the PDF parser
        return PDF_PARSER_VERSION + KIND_SUFFIXES.get(kind, "")
    office_kinds = sorted(set(KIND_BY_SUFFIX.values()) - {"pdf", "image"})
    if kind not in office_kinds:
        raise ValueError(f"unknown parser kind {kind!r}; expected one of: pdf, image, {', '.join(office_kinds)}")
    return OFFICE_PARSER_VERSION + KIND_SUFFIXES.get(kind, "")


def check_size(data: bytes, limits: ParseLimits) -> None:
    """Empty and oversized files are rejected before anything else looks at them."""
    if not data:
        raise ParseError("file is empty (0 bytes); nothing to index -- check the upload or export", stage="limits")
    if len(data) > limits.max_bytes:
        raise ParseError(
            f"file is too large: {_mib(len(data))} is over the {_mib(limits.max_bytes)} limit; "
            "split the document or raise the max_bytes limit",
            stage="limits",
        )
    if not data[:64].removeprefix(_UTF8_BOM).strip() and not data.removeprefix(_UTF8_BOM).strip():
        raise ParseError(
            f"file contains only whitespace ({len(data)} bytes); nothing to index -- check the upload or export",
            stage="limits",
        )


def check_archive(data: bytes, kind: str, limits: ParseLimits) -> None:
    """Archive-bomb guard for ZIP-based formats, from the central directory alone (nothing is
    decompressed). Declared sizes are what the ZIP reader will produce -- it stops at a member's
    declared size and fails the CRC check on anything else -- so checking them is sufficient."""
    label = f".{kind}"
    with open_zip(data, label) as archive:
        members = archive.infolist()
        if len(members) > _MAX_ARCHIVE_MEMBERS:
            raise ParseError(
                f"archive bomb suspected: {label} package has {len(members)} parts (limit {_MAX_ARCHIVE_MEMBERS})",
                stage="limits",
            )
        _check_encrypted(members, label)
        _check_uncompressed_size(members, label, len(data), limits)
        if kind == "pptx":
            _check_slide_count(members, limits)


def _check_encrypted(members: list, label: str) -> None:
    if any(member.flag_bits & 0x1 for member in members):
        raise ParseError(
            f"{label} package has encrypted parts; save it again without a password", stage="limits"
        )


def _check_uncompressed_size(members: list, label: str, archive_bytes: int, limits: ParseLimits) -> None:
    total = sum(member.file_size for member in members)
    if total > limits.max_uncompressed_bytes:
        raise ParseError(
            f"archive bomb suspected: {label} package would unpack to {_mib(total)}, over the "
            f"{_mib(limits.max_uncompressed_bytes)} limit; the file is not parsed",
            stage="limits",
        )
    overall = total / max(1, archive_bytes)
    if total > _RATIO_MIN_MEMBER_BYTES and overall > limits.max_compression_ratio:
        raise ParseError(
            f"archive bomb suspected: {label} package unpacks {overall:.0f}x its size "
            f"(limit {limits.max_compression_ratio:.0f}x); the file is not parsed",
            stage="limits",
        )
    for member in members:
        ratio = member.file_size / max(1, member.compress_size)
        if member.file_size > _RATIO_MIN_MEMBER_BYTES and ratio > limits.max_compression_ratio:
            raise ParseError(
                f"archive bomb suspected: part {member.filename[:80]!r} of the {label} package unpacks "
                f"{ratio:.0f}x (limit {limits.max_compression_ratio:.0f}x); the file is not parsed",
                stage="limits",
            )


def _check_slide_count(members: list, limits: ParseLimits) -> None:
    slides = sum(1 for m in members if m.filename.startswith("ppt/slides/slide") and m.filename.endswith(".xml"))
    if slides > limits.max_pages:
        raise ParseError(
            f"presentation has {slides} slides, over the {limits.max_pages}-page limit; split it",
            stage="limits",
        )


def _dispatch(data: bytes, name: str, kind: str, limits: ParseLimits) -> ParsedDocument:
    """Run the parser; turn any library failure into a ParseError. Imports stay outside the
    try: a missing module is a broken installation, not a bad file, and must fail loudly."""
    if kind == "pdf":
        from rag_pipeline.parsing.pdf import parse_pdf as parser
    elif kind == "image":  # a scan: wrapped as a PDF page and read by OCR
        from rag_pipeline.parsing.image import parse_image as parser
    elif kind == "xml":  # read by its structure (titles, numbers, sections), any schema
        from rag_pipeline.parsing.xml_document import parse_xml_file as parser
    elif kind in LIGHT_KINDS:  # parsed directly, unstructured only where the direct parser defers to it
        from rag_pipeline.parsing.markdown_direct import parse_markdown_file as parser
    elif kind == "text":  # typed directly, spaCy asked only about possible headings
        from rag_pipeline.parsing.text_direct import parse_text_file as parser
    else:
        from rag_pipeline.parsing.office import parse_with_unstructured

        def parser(data: bytes, *, name: str, limits: ParseLimits) -> ParsedDocument:
            return parse_with_unstructured(data, name=name, kind=kind, limits=limits)

    try:
        return parser(data, name=name, limits=limits)
    except ParseError:
        raise
    except Exception as exc:
        from rag_pipeline.parsing.office import short_reason

        raise ParseError(f"could not read this {KIND_LABELS[kind]} file: {short_reason(exc)}") from exc


def _paginated(document: ParsedDocument, kind: str) -> ParsedDocument:
    """An HTML page that is printed text (<pre> pages with running headers: an RFC or draft as
    the IETF renders it) read as its pages show it (paginated_text.py)."""
    if kind == "html":
        from rag_pipeline.parsing.paginated_text import read_pre_pages

        read = read_pre_pages(document.elements)
        if read is not None:
            document.elements = read
    return document


def _require_text(document: ParsedDocument, kind: str) -> None:
    """Running headers and footers alone are not content: the cleaner drops them."""
    if not any(el.text.strip() and el.kind not in ("page_header", "page_footer") for el in document.elements):
        hint = {"pdf": " (a scanned PDF needs OCR)",
                "image": " (an image is read by OCR: install Tesseract and keep limits.ocr on)"}.get(kind, "")
        raise ParseError(f"no text found in this {KIND_LABELS[kind]} file{hint}; nothing to index")


def _mib(size: int) -> str:
    return f"{size / (1024 * 1024):.1f} MiB" if size >= 1024 * 1024 else f"{size} bytes"

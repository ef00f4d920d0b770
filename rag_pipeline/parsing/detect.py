"""Which parser a file needs, and whether the file really is what its name says.

The name's extension decides the kind (that is what the owner meant the file to be); the bytes
must then agree. A disagreement -- an "export to PDF" that saved the web page, a .docx that is
an old binary .doc -- is reported to the operator as what it is, instead of surfacing later as
a confusing library error or, worse, as markup indexed as text.
"""

from __future__ import annotations

import re
import zipfile
from io import BytesIO

from rag_pipeline.parsing.types import ParseError

KIND_BY_SUFFIX: dict[str, str] = {
    ".pdf": "pdf",
    ".docx": "docx",
    ".pptx": "pptx",
    ".html": "html",
    ".htm": "html",
    ".md": "markdown",
    ".markdown": "markdown",
    ".txt": "text",
    ".eml": "email",
    ".xml": "xml",
    ".jpg": "image",
    ".jpeg": "image",
    ".png": "image",
    ".tif": "image",
    ".tiff": "image",
}
SUPPORTED_SUFFIXES: tuple[str, ...] = tuple(sorted(KIND_BY_SUFFIX))
KIND_LABELS: dict[str, str] = {
    "pdf": "PDF",
    "docx": "Word (.docx)",
    "pptx": "PowerPoint (.pptx)",
    "html": "HTML",
    "markdown": "Markdown",
    "text": "plain-text",
    "email": "e-mail (.eml)",
    "image": "image (JPEG, PNG, TIFF)",
    "xml": "XML",
}

# How each kind is named in messages ("file is named .docx but its content is ...").
_CONTENT_NAMES = {
    "pdf": "PDF",
    "zip": "a ZIP archive",
    "ole": "a legacy Office file (.doc/.xls/.ppt) or a password-protected Office document",
    "html": "HTML",
    "png": "a PNG image",
    "jpeg": "a JPEG image",
    "gif": "a GIF image",
    "tiff": "a TIFF image",
    "gzip": "a gzip archive",
    "rtf": "an RTF document",
    "binary": "binary data",
    "text": "plain text",
    "docx": "a Word document (.docx)",
    "pptx": "a PowerPoint presentation (.pptx)",
    "xlsx": "an Excel workbook (.xlsx)",
    "opendocument": "an OpenDocument file (.odt/.ods/.odp)",
}

_MAGIC: tuple[tuple[bytes, str], ...] = (
    (b"PK\x03\x04", "zip"),
    (b"PK\x05\x06", "zip"),  # an empty archive
    (b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1", "ole"),
    (b"\x89PNG\r\n\x1a\n", "png"),
    (b"\xff\xd8\xff", "jpeg"),
    (b"GIF87a", "gif"),
    (b"GIF89a", "gif"),
    (b"II*\x00", "tiff"),
    (b"MM\x00*", "tiff"),
    (b"\x1f\x8b", "gzip"),
    (b"{\\rtf", "rtf"),
)
_HTML_START_RE = re.compile(rb"^\s*(?:<!--.*?-->\s*)*<(?:!doctype\s+html|html[\s>]|head[\s>]|body[\s>])", re.I | re.S)
_HEADER_LINE_RE = re.compile(rb"^[!-9;-~]+:[ \t]?")  # RFC 5322 field name: printable except ':'
_EMAIL_FIELDS = {b"from", b"to", b"subject", b"date", b"message-id", b"received", b"mime-version", b"return-path"}
_BOMS = (b"\xef\xbb\xbf", b"\xff\xfe", b"\xfe\xff")


def detect_kind(data: bytes, name: str) -> str:
    """The parser kind for `name` ("pdf", "docx", "pptx", "html", "markdown", "text", "email"),
    after checking the content agrees; `ParseError` (stage "detect") otherwise."""
    suffix = file_suffix(name)
    kind = KIND_BY_SUFFIX.get(suffix)
    if kind is None:
        raise ParseError(_unsupported_message(suffix), stage="detect")
    content = sniff(data)
    _CHECKS[kind](data, suffix, content)
    return kind


def file_suffix(name: str) -> str:
    """Lower-cased extension of the last path component ('' when there is none). Names come
    from users and other systems: any characters may appear, only the final '.xyz' matters."""
    base = re.split(r"[\\/]", name)[-1].strip().rstrip(".")
    dot = base.rfind(".")
    return base[dot:].lower() if dot > 0 else ""


def printable(text: str, limit: int = 40) -> str:
    """`text` safe to put in an operator message: control characters escaped, length capped."""
    cleaned = "".join(ch if ch.isprintable() else ch.encode("unicode_escape").decode("ascii") for ch in text)
    return cleaned if len(cleaned) <= limit else cleaned[: limit - 3] + "..."


def _unsupported_message(suffix: str) -> str:
    supported = ", ".join(SUPPORTED_SUFFIXES)
    if not suffix:
        return f"file name has no extension, so its type is unknown; supported: {supported}"
    return f"unsupported file type '{printable(suffix)}'; supported: {supported}"


def sniff(data: bytes) -> str:
    """What the bytes look like, from magic numbers and a look at the start of the text."""
    head = data[:4096]
    for magic, content in _MAGIC:
        if head.startswith(magic):
            return content
    if b"%PDF-" in data[:1024]:  # readers accept up to 1 KB of junk before the header
        return "pdf"
    if head.startswith(_BOMS[1:]) or looks_like_utf16(head):
        return "text"  # UTF-16 text: NUL bytes are expected there (without a mark, decoding says what to do)
    if b"\x00" in head:
        return "binary"
    body = head[3:] if head.startswith(_BOMS[0]) else head
    if _HTML_START_RE.match(body):
        return "html"
    return "text"


def looks_like_utf16(data: bytes) -> bool:
    """Every other byte of the start NUL: ASCII-range text in UTF-16, with or without its mark."""
    head = data[:512]
    if len(head) < 8:
        return False
    odd, even = head[1::2], head[0::2]
    return odd.count(0) > 0.9 * len(odd) or even.count(0) > 0.9 * len(even)


def _mismatch(suffix: str, content: str) -> ParseError:
    return ParseError(
        f"file is named {printable(suffix)} but its content is {_CONTENT_NAMES.get(content, content)}; "
        "rename it or fix the export",
        stage="detect",
    )


def _check_pdf(data: bytes, suffix: str, content: str) -> None:
    if content != "pdf":
        if content == "text":
            raise ParseError(
                f"file is named {suffix} but does not start with '%PDF-', so it is not a PDF "
                "(or it is damaged); re-export it as PDF",
                stage="detect",
            )
        raise _mismatch(suffix, content)


def _check_ooxml(data: bytes, suffix: str, content: str) -> None:
    expected = "docx" if suffix == ".docx" else "pptx"
    if content != "zip":
        if content == "ole":
            raise ParseError(
                f"file is named {suffix} but is {_CONTENT_NAMES['ole']}; open it in Office and "
                f"save it as {suffix} without a password",
                stage="detect",
            )
        if content in ("text", "binary"):
            raise ParseError(
                f"file is named {suffix} but is not a {suffix} file (it is {_CONTENT_NAMES[content]}, not a ZIP "
                "package); it is damaged or was renamed -- re-export it",
                stage="detect",
            )
        raise _mismatch(suffix, content)
    actual = ooxml_type(data, suffix)
    if actual != expected:
        raise _mismatch(suffix, actual)


def ooxml_type(data: bytes, suffix: str = "") -> str:
    """"docx", "pptx", "xlsx", "opendocument" or "zip" (some other archive), from the package's
    part names. A damaged archive raises ParseError: it can be named but never parsed."""
    names = set(open_zip(data, suffix or "ZIP").namelist())
    if "[Content_Types].xml" in names:
        if "word/document.xml" in names:
            return "docx"
        if "ppt/presentation.xml" in names:
            return "pptx"
        if "xl/workbook.xml" in names:
            return "xlsx"
    if "mimetype" in names and "content.xml" in names:
        return "opendocument"
    return "zip"


def open_zip(data: bytes, label: str) -> zipfile.ZipFile:
    """Open an archive (central directory only -- nothing is decompressed)."""
    try:
        return zipfile.ZipFile(BytesIO(data))
    except (zipfile.BadZipFile, zipfile.LargeZipFile, ValueError, OSError, EOFError) as exc:
        raise ParseError(
            f"{printable(label)} file is damaged: it is not a readable ZIP package ({exc}); "
            "it may be truncated -- re-export or re-upload it",
            stage="detect",
        ) from exc


def _check_html(data: bytes, suffix: str, content: str) -> None:
    if content not in ("html", "text"):
        raise _mismatch(suffix, content)


def _check_text(data: bytes, suffix: str, content: str) -> None:
    """Markdown and text: anything textual is accepted (the UTF-8 check comes later, with the
    byte offset), but a whole HTML page named .txt/.md would index its markup as text."""
    if content != "text":
        raise _mismatch(suffix, content)


def _check_email(data: bytes, suffix: str, content: str) -> None:
    if content != "text":
        raise _mismatch(suffix, content)
    if not looks_like_email(data):
        raise ParseError(
            f"file is named {suffix} but does not look like an e-mail message (no From:/To:/Subject: "
            "header block at the start); export the message as .eml again",
            stage="detect",
        )


def looks_like_email(data: bytes) -> bool:
    """An RFC 5322 header block: header lines up to the first blank line, at least one of them
    a field every mail has. An mbox "From " separator line first is tolerated."""
    head = data[:65536].lstrip(b"\xef\xbb\xbf").lstrip(b"\r\n")
    lines = head.splitlines()
    if lines and lines[0].startswith(b"From "):
        lines = lines[1:]
    seen_fields: set[bytes] = set()
    for line in lines[:200]:
        if not line.strip():
            break
        if line[:1] in (b" ", b"\t"):
            continue  # folded continuation of the previous header
        if not _HEADER_LINE_RE.match(line):
            return False
        seen_fields.add(line.split(b":", 1)[0].strip().lower())
    return bool(seen_fields & _EMAIL_FIELDS)


def _check_image(data: bytes, suffix: str, content: str) -> None:
    """A scan named .jpg/.png/.tif must be one of those images (any of them: a scanner's PNG
    saved as .jpg is still a scan); anything else is what it is."""
    if content not in ("jpeg", "png", "tiff"):
        raise _mismatch(suffix, content)


def _check_xml(data: bytes, suffix: str, content: str) -> None:
    """XML is text (an XHTML page is HTML to the sniffer: accepted, and read as HTML)."""
    if content not in ("text", "html"):
        raise _mismatch(suffix, content)


_CHECKS = {
    "pdf": _check_pdf,
    "xml": _check_xml,
    "image": _check_image,
    "docx": _check_ooxml,
    "pptx": _check_ooxml,
    "html": _check_html,
    "markdown": _check_text,
    "text": _check_text,
    "email": _check_email,
}

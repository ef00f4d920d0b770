"""Bytes to text, and whitespace normalisation for matching texts across representations."""

from __future__ import annotations

import codecs
import re

from rag_pipeline.parsing.detect import looks_like_utf16
from rag_pipeline.parsing.types import ParseError

UTF8_BOM = b"\xef\xbb\xbf"

_META_CHARSET_RE = re.compile(rb"""<meta[^>]{0,200}?charset\s*=\s*["']?\s*([A-Za-z0-9_.:-]{1,40})""", re.I)


def decode_text_strict(data: bytes, what: str) -> str:
    """Text and Markdown must be Unicode: UTF-8, or UTF-8/16/32 announced by a byte-order mark
    (Windows Notepad and PowerShell write UTF-16 with one). Guessing a legacy code page silently
    corrupts accented text in the index, while an error tells the owner exactly what to fix.
    Line ends are made "\n": a lone "\r" (classic Mac, some exports) otherwise ran a whole file
    into one paragraph with no heading."""
    encoding, offset = next(((name, len(bom)) for bom, name in _BOMS if data.startswith(bom)), ("utf-8", 0))
    if not offset and looks_like_utf16(data):  # NUL is valid UTF-8: it would decode, one letter in two
        raise ParseError(f"{what} file looks like UTF-16 without a byte-order mark, so its encoding is a guess; "
                         "re-save the file as UTF-8 (or as UTF-16 with its mark)")
    try:
        text = data[offset:].decode(encoding)
    except UnicodeDecodeError as exc:
        raise ParseError(
            f"{what} file is not valid {encoding.upper().replace('-LE', '').replace('-BE', '')} at byte "
            f"{exc.start + offset}; re-save the file as UTF-8"
        ) from exc
    return text.replace("\r\n", "\n").replace("\r", "\n") if "\r" in text else text


# UTF-32 first: its little-endian mark starts with UTF-16's
_BOMS = ((codecs.BOM_UTF32_LE, "utf-32-le"), (codecs.BOM_UTF32_BE, "utf-32-be"), (UTF8_BOM, "utf-8"),
         (codecs.BOM_UTF16_LE, "utf-16-le"), (codecs.BOM_UTF16_BE, "utf-16-be"))


def decode_html(data: bytes) -> str:
    """HTML may legitimately be in any charset. A byte-order mark decides; then bytes that are
    valid UTF-8 are read as UTF-8, whatever the <meta> says (a page re-saved as UTF-8 keeps its
    old "iso-8859-1" declaration far more often than legacy text happens to form UTF-8
    sequences: read by the label, "Müller" was indexed as "MÃ¼ller"); then the declared charset,
    strictly, with the labels browsers read as Windows-1252 read so ("iso-8859-1", "ascii":
    their curly quotes and euro signs were C1 controls, later removed); then a guess. A label
    the bytes break ("utf-8" on Latin-1 text) goes to the guess, not to replacement characters,
    which no search matches. 7-bit charsets (ISO-2022-JP, UTF-7) are ASCII to a UTF-8 check, so
    their declaration is honoured first."""
    if data.startswith(UTF8_BOM):
        return data[len(UTF8_BOM) :].decode("utf-8", errors="replace")
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        return data.decode("utf-16", errors="replace")
    declared = _declared_charset(data)
    if declared in _SEVEN_BIT:
        return data.decode(declared, errors="replace")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        pass
    for encoding in _READ_AS_CP1252.get(declared, (declared,)) if declared else ():
        try:
            return data.decode(encoding)
        except UnicodeDecodeError:
            continue
    return _guess_decode(data)


# labels browsers read as Windows-1252 (WHATWG Encoding), with Latin-1 for the 5 bytes it leaves undefined
_READ_AS_CP1252 = {name: ("cp1252", "latin-1") for name in ("iso8859-1", "ascii", "cp1252")}
_SEVEN_BIT = frozenset({"iso2022_jp", "iso2022_jp_1", "iso2022_jp_2", "iso2022_jp_2004", "iso2022_jp_3",
                        "iso2022_jp_ext", "iso2022_kr", "utf-7", "hz"})


def _declared_charset(data: bytes) -> str | None:
    """The codec a <meta> charset in the first 8 KB names (Python's own name for it), or None
    when there is none or no codec knows it (then the bytes decide). A UTF-16 or UTF-32 label is
    None too: a <meta> readable as ASCII bytes is not in either (browsers read it as UTF-8)."""
    declared = _META_CHARSET_RE.search(data[:8192])
    if not declared:
        return None
    try:
        name = codecs.lookup(declared.group(1).decode("ascii")).name
    except LookupError:
        return None
    return None if name.startswith(("utf-16", "utf-32")) else name


def _guess_decode(data: bytes) -> str:
    """Last resort for undeclared non-UTF-8 HTML."""
    try:
        from charset_normalizer import from_bytes

        best = from_bytes(data[:1_000_000]).best()
        if best is not None and best.encoding:
            return data.decode(best.encoding, errors="replace")
    except Exception:  # noqa: BLE001 -- detection is best effort
        pass
    return data.decode("cp1252", errors="replace")


def normalize_whitespace(text: str) -> str:
    """Collapse every whitespace run to one space and trim the ends: the same words must compare
    equal whether they came from python-pptx, lxml or unstructured, which wrap and indent
    differently."""
    return " ".join(text.split())

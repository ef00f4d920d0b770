"""Text that can be stored and printed whatever it came from.

A file name that is not valid UTF-8 reaches Python with its undecodable bytes as lone
surrogates (U+DC80..U+DCFF, PEP 383), and a name, key or argument may hold NUL. PostgreSQL text
holds neither, and neither can be written to a UTF-8 terminal: one such name in a message or a
quarantine entry would crash the run that tries to report it. `storable` escapes exactly those
characters, visibly and without losing which bytes they were.
"""

from __future__ import annotations

import re

_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")


def storable(text: str) -> str:
    """`text` with each undecodable byte as `\\xNN`, any other lone surrogate as `\\uNNNN` and NUL
    as `\\x00`; everything else as it was (so valid text is unchanged)."""
    return _UNSTORABLE.sub(_escape, text)


def unstorable(text: str) -> str | None:
    """The first character of `text` that PostgreSQL text or UTF-8 cannot hold, or None."""
    found = _UNSTORABLE.search(text)
    return found.group() if found else None


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    if 0xDC80 <= code <= 0xDCFF:
        return f"\\x{code - 0xDC00:02x}"
    if code == 0:
        return "\\x00"
    return f"\\u{code:04x}"

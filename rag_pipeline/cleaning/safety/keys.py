"""Private keys (PEM in PKCS#1, PKCS#8, encrypted and EC forms, OpenSSH, PGP armour, SSH2,
PuTTY .ppk): each block is replaced whole.

A key is useless with one line missing and dangerous with all lines present, so the block from
header to footer becomes one `[REDACTED:private_key]`. Public keys and certificates stay: they
are meant to be shared. The footer search is windowed so a flood of headers without footers
stays linear.
"""

from __future__ import annotations

import re
from collections import Counter

from rag_pipeline.cleaning.safety.rules import BOUNDARY_CHARS, placeholder

_KEY_HEADER = re.compile(
    r"(?:-----|---- )BEGIN (?P<label>(?:[A-Z0-9]{1,16} ){0,3}PRIVATE KEY(?: BLOCK)?)(?:-----| ----)"
    r"|(?P<putty>PuTTY-User-Key-File-\d{1,2}+:)"
)
# Key material after a header whose END is missing: base64 lines, armour headers
# ("Proc-Type: 4,ENCRYPTED", "DEK-Info: ...", "Comment: ...", PuTTY's "Private-Lines: 14"),
# blank lines, and the element boundaries the cleaner puts between elements (a key pasted
# one line per paragraph has a boundary after every line).
_KEY_BODY = re.compile(
    r"(?:[ \t]*(?:[A-Za-z0-9+/]{16,128}+={0,2}|[A-Za-z0-9+/]{1,15}+={1,2}|=[A-Za-z0-9+/]{4}"
    r"|[A-Z][A-Za-z-]{1,32}+: [^\n]{0,256}+|[" + BOUNDARY_CHARS + r"]{1,16}+)?[ \t]*(?:\n|\Z))*+"
)
_BOUNDARY = re.compile("[" + BOUNDARY_CHARS + "]")
_KEY_HEADER_BYTES = re.compile(_KEY_HEADER.pattern.encode("ascii"))
_PUTTY_MAC = re.compile(r"Private-MAC:[ \t]*+[0-9a-fA-F]{0,128}+")
_MAX_KEY_BLOCK = 64 * 1024  # far above any real key (an 8192-bit RSA PEM is ~6.5 KB)


def redact_private_keys(text: str, counts: Counter[str]) -> str:
    """Replace each private-key block, header to footer, with one placeholder.

    The footer is looked for only up to the next BEGIN and at most 64 KB ahead, so the search
    windows never overlap and the whole pass is linear even for a million headers without END.
    Without a footer (truncated or hostile input) the header and the key material directly
    below it are removed, and nothing further.
    """
    headers = list(_KEY_HEADER.finditer(text))
    if not headers:
        return text
    pieces: list[str] = []
    cursor = 0
    for index, header in enumerate(headers):
        if header.start() < cursor:
            continue  # inside the block we just removed
        limit = min(header.end() + _MAX_KEY_BLOCK, len(text))
        if index + 1 < len(headers):
            limit = min(limit, headers[index + 1].start())
        end = _find_key_footer(text, header, limit)
        if end is None:
            body = _KEY_BODY.match(text, header.end(), limit)
            end = body.end() if body else header.end()
            while end > header.end() and (text[end - 1] in " \t\n" or _BOUNDARY.match(text[end - 1])):
                end -= 1  # keep line breaks and element boundaries after the key material
        pieces.append(text[cursor : header.start()])
        pieces.append(placeholder("private_key"))
        counts["private_key"] += 1
        cursor = end
    pieces.append(text[cursor:])
    return "".join(pieces)


def _find_key_footer(text: str, header: re.Match[str], limit: int) -> int | None:
    """End offset of the matching `-----END <label>-----` (PuTTY: the `Private-MAC:` line)
    before `limit`, or None."""
    if header.group("putty"):
        found = text.find("Private-MAC:", header.end(), limit)
        if found < 0:
            return None
        mac = _PUTTY_MAC.match(text, found)
        return mac.end() if mac else found + len("Private-MAC:")
    marker = f"END {header.group('label')}"
    found = text.find(marker, header.end(), limit)
    if found < 0:
        return None
    end = found + len(marker)
    while end < len(text) and end - found - len(marker) < 5 and text[end] in "- ":
        end += 1
    return end


def holds_private_key(data: bytes) -> bool:
    """Whether raw file bytes hold a private-key header (PEM, OpenSSH, PGP, SSH2, PuTTY), in
    any ASCII-compatible encoding or in UTF-16 (NULs between the letters). For a file the
    parser refused: its bytes were never redacted, so they must not be kept (sync/parse.py)."""
    if _KEY_HEADER_BYTES.search(data):
        return True
    return b"\x00" in data[:4096] and _KEY_HEADER_BYTES.search(data.replace(b"\x00", b"")) is not None

"""JWTs wrapped over several lines or paragraphs (own rule; detect-secrets has no such form).

A token pasted into a document is often wrapped at a fixed width, or broken at its dots, and a
DOCX/PDF may put each piece in its own paragraph. The one-line JWT pattern then sees pieces that
are each too short, so this pass joins them: from a line that ends with a token starting `eyJ`,
the following lines are taken while each continues the token (the previous piece filled the
line's full width, or the break falls at a dot), at most `_MAX_PIECES` of them. The joined
token must have three segments and a header that decodes to JSON naming an `"alg"`; then the
whole span becomes one `[REDACTED:jwt]`. Every line is looked at a bounded number of times
(a candidate stops at the first line that begins another `eyJ` token), so hostile input stays linear.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections import Counter

from rag_pipeline.cleaning.safety.patterns import token_start
from rag_pipeline.cleaning.safety.rules import BOUNDARY_CHARS, placeholder

_B64URL = r"A-Za-z0-9_\-"
_MAX_PIECES = 32
_MIN_WIDTH = 16  # a wrap narrower than this is no wrap of a token
_WIDTH_SLACK = 2

# A token starting `eyJ` that runs to the end of its line (trailing spaces allowed).
_START = re.compile(token_start("eyJ", 3, _B64URL + ".") + f"[{_B64URL}.]{{0,8192}}+(?=[ \t]{{0,16}}+(?:\n|\\Z))")
# One following line: leading spaces, the piece, then the line's end or what follows the token.
_PIECE = re.compile(f"[ \t]{{0,16}}+(?P<piece>[{_B64URL}.]{{1,8192}}+)(?P<rest>[ \t]{{0,16}}+(?:\n|\\Z))?")
_BOUNDARY_LINE = re.compile(f"[{BOUNDARY_CHARS}]{{1,16}}+\n")
_JWT = re.compile(f"eyJ[{_B64URL}]{{5,}}\\.[{_B64URL}]{{5,}}\\.[{_B64URL}]{{8,}}")


def _header_names_alg(token: str) -> bool:
    """The first segment decodes (base64url) to a JSON header naming its algorithm."""
    header = token.split(".", 1)[0]
    try:
        decoded = base64.urlsafe_b64decode(header + "=" * (-len(header) % 4))
    except (binascii.Error, ValueError):
        return False
    return decoded.startswith(b'{"') and b'"alg"' in decoded


def _line_width(text: str, end: int) -> int:
    """Length of the line that ends at `end`, from its start."""
    return end - (text.rfind("\n", 0, end) + 1)


def _continue_token(text: str, start: int, end: int) -> tuple[int, str] | None:
    """Follow the token that begins at `start` and fills its line up to `end` over the next
    lines; return where the joined token ends and the token, or None if it is no split JWT."""
    pieces = [text[start:end]]
    width = _line_width(text, end)
    full = width >= _MIN_WIDTH
    position = text.find("\n", end)
    while position >= 0 and len(pieces) < _MAX_PIECES:
        position += 1
        while (boundary := _BOUNDARY_LINE.match(text, position)) is not None:
            position = boundary.end()
        match = _PIECE.match(text, position)
        if match is None:
            break
        piece = match.group("piece")
        previous = pieces[-1]
        at_dot = previous.endswith((".", "-")) or piece.startswith(".")  # word processors break after "-" too
        if not (at_dot or full) or (piece.startswith("eyJ") and not previous.endswith(".")):
            break  # not a continuation: the previous piece did not fill its line, or a new token starts
        pieces.append(piece)
        end = match.end("piece")
        if match.group("rest") is None:
            break  # text follows the token on this line: the token ends here
        full = _line_width(text, end) >= max(_MIN_WIDTH, width - _WIDTH_SLACK)  # PDF lines vary a little
        position = text.find("\n", end) if end < len(text) else -1
    token = "".join(pieces)
    if len(pieces) < 2 or _JWT.fullmatch(token) is None or not _header_names_alg(token):
        return None
    return end, token


def redact_split_jwts(text: str, counts: Counter[str]) -> str:
    """Replace each JWT wrapped over lines or paragraphs with one `[REDACTED:jwt]`."""
    if "eyJ" not in text:
        return text
    pieces: list[str] = []
    cursor = position = 0
    while (match := _START.search(text, position)) is not None:
        position = match.end()
        found = _continue_token(text, match.start(), match.end())
        if found is None:
            continue
        end, _ = found
        pieces.append(text[cursor : match.start()])
        pieces.append(placeholder("jwt"))
        counts["jwt"] += 1
        cursor = position = end
    pieces.append(text[cursor:])
    return "".join(pieces)

"""2FA / MFA recovery codes listed after a label ("recovery codes", "Backup-Codes", "záložní kódy").

Recovery codes bypass a second factor, and they have no shape of their own (`8f3k-29dj`,
`12345678`), so only a label makes them recognisable. The codes are looked for in a bounded
block after each label: the rest of its line and the lines that follow while they read as a
code list. Work per label is bounded and blocks never overlap, so the pass stays linear.
"""

from __future__ import annotations

import re
from collections import Counter

from rag_pipeline.cleaning.safety.patterns import fold, word_start
from rag_pipeline.cleaning.safety.rules import placeholder, replace_spans

_RECOVERY_COMPOUND_PREFIXES = (
    "recovery", "backup", "back-up", "emergency", "scratch", "rescue",  # English
    "wiederherstellungs", "sicherungs", "notfall", "ersatz",  # German ("Backup-Codes" via "backup")
    "herstel",  # Dutch
)  # fmt: skip
_RECOVERY_LABEL_ALTERNATIVES = [
    # "backup codes", "2FA recovery codes", "Backup-Codes", "Wiederherstellungscodes", "herstelcodes"
    *(prefix + r"[ \t-]?(?:codes?|kodes?)" for prefix in _RECOVERY_COMPOUND_PREFIXES),
    # French: "codes de récupération", "codes de secours", "codes de sauvegarde"
    r"codes?[ \t\u00a0]{1,4}+(?:de[ \t\u00a0]{1,4}+)?(?:r[ée]cup[ée]ration|secours|sauvegarde)",
    # Czech: "záložní kódy", "kódy pro obnovení", "obnovovací kódy", "záchranné kódy"
    r"z[áa]lo[žz]n[íi](?:ch)?[ \t]{1,4}+k[óo]d(?:y|ů)?",
    r"k[óo]d(?:y|ů)?[ \t]{1,4}+(?:pro|k)[ \t]{1,4}+obnov(?:en[íi]|u)",
    r"obnovovac[íi](?:ch)?[ \t]{1,4}+k[óo]d(?:y|ů)?",
    r"z[áa]chrann[ée][ \t]{1,4}+k[óo]dy?",
    # Spanish, Italian, Polish
    r"c[óo]digos?[ \t]{1,4}+de[ \t]{1,4}+(?:recuperaci[óo]n|respaldo)",
    r"codici[ \t]{1,4}+di[ \t]{1,4}+(?:backup|recupero|emergenza)",
    r"kody?[ \t]{1,4}+(?:zapasowe|odzyskiwania|awaryjne)",
]
# Lower-case, matched against folded text, whole words only.
_RECOVERY_LABEL = re.compile(word_start(_RECOVERY_LABEL_ALTERNATIVES, r"\w") + r"(?!\w)")

# One whitespace-separated token; "1234 5678" (Google style) is read as one token.
_LINE_TOKEN = re.compile(r"(?<!\S)\d{4} \d{4}(?!\S)|\S+")
_CODE_SHAPE = re.compile(r"\d{4} \d{4}|[A-Za-z0-9]{4,16}(?:-[A-Za-z0-9]{2,16}){0,5}")
_DATE_SHAPE = re.compile(r"\d{4}-\d{2}-\d{2}|\d{2}-\d{2}-\d{4}")
_NEUTRAL_TOKEN = re.compile(r"\d{1,3}[.):]|[-*•·–—|>]|\[[ xX]\]|\(\d{1,3}\)")
_TOKEN_TRIM = "()[],;.:\"'`*"
_REDACTED_CODE = placeholder("recovery_code").strip(_TOKEN_TRIM)  # an already redacted code

_MAX_CODE_LINES = 20  # lines with letters or digits examined after a label
_MAX_BLOCK_LINES = 64  # all lines, including layout-only ones (element separators, "* * *")
_MAX_CODE_LINE = 512
_MAX_LEADING_BLANKS = 2


def _is_recovery_code(token: str) -> bool:
    """A token shaped like a one-time code: `8f3k-29dj`, `12345678`, `ABCD-EFGH-IJKL`.

    Needs a digit, unless it is upper-case hyphen-grouped (some vendors use letters only);
    dates are not codes.
    """
    if _CODE_SHAPE.fullmatch(token) is None or _DATE_SHAPE.fullmatch(token) is not None:
        return False
    compact = token.replace("-", "").replace(" ", "")
    if not 6 <= len(compact) <= 40:
        return False
    if any(c.isdigit() for c in compact):
        return True
    return "-" in token and compact.isupper()


def _code_line(text: str, start: int, end: int) -> tuple[list[tuple[int, int]], bool]:
    """Spans of the codes in text[start:end], and whether it is a code line at all.

    A code line is one where code-shaped tokens are at least as many as other words, ignoring
    numbering and bullets: "1. 8f3k-29dj  2. 4kd8-2k3d" is, "Store these somewhere safe" is not.
    Codes redacted by an earlier pass still count as codes, so cleaning twice changes nothing.
    """
    spans: list[tuple[int, int]] = []
    codes = others = 0
    for match in _LINE_TOKEN.finditer(text, start, end):
        token = match.group(0)
        trimmed = token.strip(_TOKEN_TRIM)
        if not trimmed or _NEUTRAL_TOKEN.fullmatch(token):
            continue  # numbering, bullets, a lone ":" are layout, not words
        if trimmed == _REDACTED_CODE:
            codes += 1
        elif _is_recovery_code(trimmed):
            codes += 1
            offset = match.start() + token.index(trimmed)
            spans.append((offset, offset + len(trimmed)))
        else:
            others += 1
    is_code_line = codes > 0 and codes >= others
    return (spans if is_code_line else []), is_code_line


def _line_end(text: str, start: int) -> int:
    """End of the line starting at `start`, looking at most just past the line-length cap."""
    end = text.find("\n", start, start + _MAX_CODE_LINE + 1)
    return end if end >= 0 else min(len(text), start + _MAX_CODE_LINE + 1)


def _recovery_block(text: str, folded: str, label: re.Match[str]) -> tuple[list[tuple[int, int]], int]:
    """Code spans in the block after one label, and where scanning may resume.

    The block is the rest of the label's line plus up to 20 lines with content (lines without
    letters or digits, such as element separators, are skipped but bounded too). Before the
    first code line, intro prose is allowed ("Keep these safe:"); once codes were seen, the
    block ends at a blank line or at the first line that is not a code line, since a code
    list is contiguous. It also ends at an over-long line or at a line holding another label,
    which then starts its own block. Work per label is bounded and blocks never overlap.
    """
    line_end = _line_end(text, label.end())
    spans, seen_codes = _code_line(text, label.end(), line_end)
    position, blanks, content_lines = line_end + 1, 0, 0
    for _ in range(_MAX_BLOCK_LINES):
        if position >= len(text) or content_lines >= _MAX_CODE_LINES:
            break
        end = _line_end(text, position)
        line = text[position:end]
        if end - position > _MAX_CODE_LINE:
            break
        if not line.strip():
            blanks += 1
            if seen_codes or blanks > _MAX_LEADING_BLANKS:
                break
        elif any(char.isalnum() for char in line):
            if _RECOVERY_LABEL.search(folded, position, end) is not None:
                return spans, position
            found, is_code_line = _code_line(text, position, end)
            if seen_codes and not is_code_line:
                return spans, position  # the list is over
            spans.extend(found)
            seen_codes = seen_codes or is_code_line
            content_lines += 1
        position = end + 1
    return spans, max(label.end(), min(position, len(text)))


def redact_recovery_codes(text: str, counts: Counter[str]) -> str:
    """Redact the codes listed after a "recovery codes" / "Backup-Codes" / "záložní kódy" label."""
    folded = fold(text)
    spans: list[tuple[int, int]] = []
    position = 0
    while (label := _RECOVERY_LABEL.search(folded, position)) is not None:
        found, position = _recovery_block(text, folded, label)
        spans.extend(found)
    if not spans:
        return text
    counts["recovery_code"] += len(spans)
    replacement = placeholder("recovery_code")
    return replace_spans(text, [(start, end, replacement) for start, end in spans])

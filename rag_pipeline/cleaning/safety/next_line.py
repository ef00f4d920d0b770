"""Labelled secrets whose value is on the next line or in the next paragraph.

Documents put a label on a line of its own and the value below it: "Password:" then "hunter2",
a DOCX paragraph "API key:" followed by a paragraph holding the key, a heading "Root password"
above the value. The cleaner joins elements with boundary lines (clean.py), so "next
paragraph" is "next line" here once blank and boundary lines are skipped. A label counts only at
the start of its line (after list markers, `#`, `>` or emphasis) with nothing after it but a
colon; the value must be the whole next line, one word or quoted. Passwords are judged like
inline ones, and without a colon the value must look chosen (digit, symbol or inner capital);
API keys and tokens must look machine-made. The rules are the project's own.
"""

from __future__ import annotations

import re
from collections import Counter

from rag_pipeline.cleaning.safety.labelled import GENERIC_LABEL, accept_token, label_kind
from rag_pipeline.cleaning.safety.passwords import PASSWORD_LABEL, accept_password
from rag_pipeline.cleaning.safety.patterns import NOT_REDACTED
from rag_pipeline.cleaning.safety.rules import BOUNDARY_CHARS, Rule, apply_rules

_LINE_PREFIX = set(" \t>*#+-_`0123456789.)")
_MAX_PREFIX = 32

# After the label: emphasis, an optional colon, the line's end, then blank and boundary lines.
_GAP = r"[ \t*_`]{0,8}+(?P<colon>[:=\uff1a])?[ \t*_`]{0,8}+\n[ \t\n" + BOUNDARY_CHARS + r"]{0,64}+"
_WHOLE_LINE_VALUE = (
    NOT_REDACTED
    + r"""(?:"(?P<dq>[^"\n]{1,256}+)"|'(?P<sq>[^'\n]{1,256}+)'|`(?P<v>[^`\n]{1,256}+)`|(?P<bare>[^\s"'`]{1,256}+))"""
    + r"(?=[ \t]{0,16}+(?:\n|\Z))"
)


def _label_opens_line(match: re.Match[str]) -> bool:
    """Only list markers, heading marks, quotes or emphasis stand before the label on its line;
    with a colon after the label, a few words may too ("Root password:", "DB admin API key:")."""
    source, start = match.string, match.start()
    position = start
    while position > 0 and start - position <= _MAX_PREFIX:
        char = source[position - 1]
        if char == "\n" or "\ue000" <= char <= "\ue01f":
            break
        position -= 1
    else:
        if position > 0:
            return False
    prefix = source[position:start]
    if all(c in _LINE_PREFIX for c in prefix):
        return True
    return match.group("colon") is not None and all(c in _LINE_PREFIX or c.isalpha() for c in prefix)


def _looks_chosen(word: str) -> bool:
    return any(not c.isalpha() for c in word) or any(c.isupper() for c in word[1:])


def _accept_password_below(match: re.Match[str], value: str) -> bool:
    """Judged like an inline password; without a colon, only a value that looks chosen. A line
    ending in a colon is the next label ("Password:" then "Username:"), not a value."""
    if value.endswith((":", "\uff1a")) or not _label_opens_line(match):
        return False
    if match.group("colon") is None and (match.group("bare") is None or not _looks_chosen(value)):
        return False
    return accept_password(match, value)


def _accept_token_below(match: re.Match[str], value: str) -> bool:
    return not value.endswith((":", "\uff1a")) and _label_opens_line(match) and accept_token(match, value)


_PASSWORD_BELOW = Rule(
    "password",
    re.compile(r"(?P<label>" + PASSWORD_LABEL + r")(?![^\W\d_])" + _GAP + _WHOLE_LINE_VALUE),
    folded=True,
    accept=_accept_password_below,
)
_TOKEN_BELOW = Rule(
    lambda match: label_kind(match.group("label")),
    re.compile(r"(?P<label>" + GENERIC_LABEL + r")(?![a-z0-9])" + _GAP + _WHOLE_LINE_VALUE),
    folded=True,
    accept=_accept_token_below,
)


def redact_values_below_labels(text: str, counts: Counter[str]) -> str:
    """A value alone on the line (or paragraph) below its label."""
    return apply_rules((_PASSWORD_BELOW, _TOKEN_BELOW), text, counts)

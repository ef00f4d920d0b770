"""What a group name may be: one rule where groups are read (access files, S3 tags and metadata,
`default_groups`) and where they are searched with (`--groups`, a batch line's `groups`).

A group name that search refuses could never be named by a caller, and one with invisible or
control characters looks like another group it is not: either way an ACL would mean something
other than what its author sees. So the rule is checked where the name is read, with the file
named, instead of being stored and silently never matching.
"""

from __future__ import annotations

import unicodedata
from typing import Any

from rag_pipeline.common.text import storable

MAX_GROUP_CHARS = 200
# Cc: control characters (NUL, newline, ESC...); Cf: invisible format characters (zero-width
# space, bidi overrides); Cs: lone surrogates, what undecodable bytes become in Python
REFUSED_CATEGORIES = {"Cc": "a control character", "Cf": "an invisible format character", "Cs": "a lone surrogate (bytes that are not UTF-8)"}


def group_problem(group: Any) -> str | None:
    """Why `group` is not a group name, or None. The name is taken as given (callers strip it)."""
    if not isinstance(group, str):
        return f"{type(group).__name__} {shown_group(group)} is not a group name (group names are text)"
    if not group.strip():
        return "an empty group name"
    if len(group) > MAX_GROUP_CHARS:
        return f"group {shown_group(group)} is {len(group):,} characters long; the limit is {MAX_GROUP_CHARS}"
    if "," in group:
        return f"group {shown_group(group)} contains ',', the separator of --groups, so no caller could name it"
    for char in group:
        kind = REFUSED_CATEGORIES.get(unicodedata.category(char))
        if kind:
            return f"group {shown_group(group)} contains {kind} (U+{ord(char):04X}); group names are visible text"
    return None


def shown_group(group: Any) -> str:
    """A group name as a message quotes it, on one readable line: undecodable bytes as `\\xNN`,
    what is not printable (control and format characters) as its escape; cut at 40 characters."""
    text = storable(str(group))
    cut = "".join(c if c.isprintable() else repr(c)[1:-1] for c in text[:40])
    return f"'{cut}...'" if len(text) > 40 else f"'{cut}'"

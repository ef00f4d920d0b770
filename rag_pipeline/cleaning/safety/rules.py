"""The search-confirm-replace loop that every pattern-based secret redactor shares.

A `Rule` pairs a cheap, literal-first pattern with checks that run on candidates only. Keeping
the loop in one place keeps its guarantees in one place: work stays linear (a rejected value is
looked inside once, never recursively), only the value is replaced (labels such as `password:`
stay, so the text still reads naturally), and nothing about a secret leaves except a count.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from rag_pipeline.cleaning.safety.patterns import fold

PLACEHOLDER_PREFIX = "[REDACTED:"

# A bare value loses these at its end: they usually close the sentence, not the secret.
TRAILING_PUNCTUATION = ".,;`*"

# Named groups a value may be captured in: double-quoted, single-quoted, bare, or just "v".
_VALUE_GROUPS = ("dq", "sq", "bare", "v")

Accept = Callable[[re.Match[str], str], bool]
Boundary = Callable[[str, int], bool]


# Private-use characters the cleaner uses to mark element boundaries inside the one text it
# redacts (cleaning/clean.py); block-shaped redactors treat them as layout, like a blank line.
BOUNDARY_CHARS = "\ue000-\ue01f"


def placeholder(kind: str) -> str:
    """The text that stands in for a removed secret; the kind stays so readers know what was there."""
    return f"{PLACEHOLDER_PREFIX}{kind}]"


@dataclass(frozen=True)
class Rule:
    """One secret pattern and how to confirm a candidate.

    Patterns begin with their keyword or literal prefix, never with a look-behind or a broad
    character class, so the regex engine jumps between candidates with its fast literal search
    instead of trying every position. Whether a candidate starts a token (`boundary`) and
    whether the value is really a secret (`accept`) are checked afterwards, on candidates only.
    Label rules match the case-folded text (`folded`), which is much faster than IGNORECASE.
    """

    kind: str | Callable[[re.Match[str]], str]
    pattern: re.Pattern[str]
    folded: bool = False
    boundary: Boundary | None = None
    accept: Accept | None = None


def apply_rules(rules: Iterable[Rule], text: str, counts: Counter[str]) -> str:
    """Apply `rules` one after another; an earlier rule's placeholder is final for later ones."""
    for rule in rules:
        text = apply_rule(rule, text, counts)
    return text


def apply_rule(rule: Rule, text: str, counts: Counter[str]) -> str:
    """Replace the value part of each confirmed match with a placeholder, counting per kind.

    Only the value is replaced: labels like `password:` or `Authorization: Bearer` stay, so the
    text still reads naturally and a reviewer can see what kind of thing was there.
    """
    source = fold(text) if rule.folded else text
    edits: list[tuple[int, int, str]] = []
    position, may_look_inside = 0, True
    while (match := rule.pattern.search(source, position)) is not None:
        position = match.end()
        if rule.boundary is not None and not rule.boundary(source, match.start()):
            continue
        start, end = _value_span(match)
        end = _trimmed_end(match, text, start, end)
        if end <= start or (rule.accept is not None and not rule.accept(match, text[start:end])):
            # "Authorization: Authorization: <token>": the rejected value may hold the real
            # label. Look inside it once, not recursively, so the work stays linear.
            if may_look_inside and start > match.start():
                position, may_look_inside = start, False
            else:
                may_look_inside = True
            continue
        may_look_inside = True
        kind = rule.kind(match) if callable(rule.kind) else rule.kind
        counts[kind] += 1
        edits.append((start, end, placeholder(kind)))
    return replace_spans(text, edits)


def replace_spans(text: str, edits: list[tuple[int, int, str]]) -> str:
    """Apply sorted, non-overlapping (start, end, replacement) edits in one pass."""
    if not edits:
        return text
    pieces: list[str] = []
    cursor = 0
    for start, end, replacement in edits:
        pieces.append(text[cursor:start])
        pieces.append(replacement)
        cursor = end
    pieces.append(text[cursor:])
    return "".join(pieces)


def _value_span(match: re.Match[str]) -> tuple[int, int]:
    """Span of whichever value alternative (double-quoted, single-quoted, bare, v) matched."""
    names = match.re.groupindex
    for name in _VALUE_GROUPS:
        if name in names and match.group(name) is not None:
            return match.span(name)
    return match.span()


def _trimmed_end(match: re.Match[str], text: str, start: int, end: int) -> int:
    """A bare value loses trailing sentence punctuation ("hunter2." keeps its "."); quoted
    values and shaped tokens are taken exactly."""
    if "bare" in match.re.groupindex and match.group("bare") is not None:
        while end > start and text[end - 1] in TRAILING_PUNCTUATION:
            end -= 1
    return end

"""The code-legend check: a claim that says what a code means must give it the meaning the
passage's legend gives that code, not a neighbouring code's.

Manuals, forms and data dictionaries explain codes in legends, one line a code:

    IDRS Extraction Indicator
    0 = Not under IDRS control
    1 = Extracted for IDRS by selection criteria (normal extraction)
    2 = Extracted by entity or tax module TC 902
    3= TC 902 through an IDRS terminal

A claim "2 means a TC 902 was input through an IDRS terminal" states only figures and words the
passage holds, so the exact-field rule passes it, and the figure-role check cannot see it either
(both 2 and 3 are codes, not measured figures, and the rival 3 may be absent from the claim). So
each code the claim explains ("KEY means|=|indicates|identifies|denotes|stands for ...") has the
words of its explanation compared with the meanings of the passage's legend lines: when a line of
another code in a legend that holds the claim's code shares more of those words than any line of
the claim's code (and at least MIN_SHARED), the claim has given the code its neighbour's meaning.
A code the passage's legends do not hold, or a tie, leaves the claim to the other checks.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from rag_pipeline.answers.roles import content_words

MIN_SHARED = 2  # words a rival meaning must share with the claim's explanation (one is chance)
MAX_LINES = 2000  # legend lines read per passage (a chunk is far shorter; bounds hostile input)

_KEY = r"[A-Z0-9]{1,3}"
_LINE = re.compile(rf"^[ \t]*(?P<key>{_KEY})[ \t]*=(?![=])[ \t]*(?P<meaning>\S.*)$", re.M)
_VERBS = r"(?:=|means|meant|indicates|identifies|denotes|signifies|represents|stands\s+for|marks|shows)"
_ASSERTION = rf"(?<![\w.\-/])(?P<key>{_KEY})(?:\s+(?:code|value|indicator))?\s*{_VERBS}\s"
# what a code is said to mean: up to the next code explained ("0 = Penalty Exclusion 1 = Monthly"), a comma or a semicolon
_SAYS = re.compile(rf"{_ASSERTION}+(?P<said>[^,;]+?)(?=\s+{_ASSERTION.replace('?P<key>', '?:')}|[,;]|$)")
_PIECES = re.compile(r"[,;]|\.(?=\s|$)|\s(?:and|while|whereas|but)\s")


@dataclass(frozen=True)
class Swapped:
    key: str  # the code the claim explains
    rival: str  # the code whose legend line the claim's explanation matches better

    def describe(self) -> str:
        return f"code {self.key!r} has another meaning in the passage's legend (the claim's words go with {self.rival!r})"


@functools.lru_cache(maxsize=256)
def legends(passage: str) -> tuple[tuple[tuple[str, frozenset[str]], ...], ...]:
    """The passage's legends: runs of consecutive `KEY = meaning` lines (blank lines between them
    allowed), each line as (key, content words of its meaning)."""
    found: list[list[tuple[str, frozenset[str]]]] = []
    last_end = -1
    for count, match in enumerate(_LINE.finditer(passage)):
        if count >= MAX_LINES:
            break
        line = (match.group("key"), frozenset(content_words(match.group("meaning").casefold())))
        if found and not passage[last_end:match.start()].strip():
            found[-1].append(line)
        else:
            found.append([line])
        last_end = match.end()
    return tuple(tuple(block) for block in found if len({key for key, _ in block}) >= 2)


def explained(claim: str) -> list[tuple[str, set[str]]]:
    """(code, content words of what the claim says it means) for each code the claim explains."""
    found = []
    for piece in _PIECES.split(claim):
        for match in _SAYS.finditer(piece or ""):
            words = content_words(match.group("said").casefold())
            if words:
                found.append((match.group("key"), words))
    return found


def swapped(claim: str, passage: str) -> list[Swapped]:
    """The codes the claim explains with another code's meaning in the passage (module docstring)."""
    blocks = legends(passage)
    if not blocks:
        return []
    found = []
    for key, said in explained(claim):
        holding = [block for block in blocks if any(k == key for k, _ in block)]
        if not holding:
            continue
        own = max(len(said & words) for block in holding for k, words in block if k == key)
        rival = max(((len(said & words), k) for block in holding for k, words in block if k != key), default=(0, ""))
        if rival[0] >= MIN_SHARED and rival[0] > own:
            found.append(Swapped(key, rival[1]))
    return found

"""Which short sections share one chunk (issue 28, item 2).

A document of many short sections ("Scope", "Owner", "Review" under "Travel Policy") gave one
small chunk per section: each a text to encode, most of the model's 256-token input spent on
padding, and each too thin to answer a question on its own. Consecutive sections that each fit
in one chunk are merged while the merged text still fits the same budget. The rules:

- Never across a top-level section: every merged section lies under the same first heading
  (the same heading element, not merely the same words), and text before the first heading
  never joins a headed section.
- Every heading stays: the chunk's section path is the merged sections' deepest common parent,
  and every heading below it is inside the chunk's text (the chunk starts at the first merged
  section's heading, and no merged section may sit under a heading that lies before that start).
- A numbered part ("7.2.1 Scope", "§ 12", "Item 1A", "Article 5") is never merged away: the
  structural search branch (migration 022, store/search_sections.py) finds a part by the
  headings of a chunk's section path, which a merged chunk would lose. A heading that carries a
  part number may only be part of the common path, so "section 7.2.1" resolves to the same
  chunks as before. (Lifting this needs every merged heading stored with the chunk and a
  migration that indexes them: not done.)
- A section that needs more than one chunk is never merged; it splits on paragraphs and
  sentences as before, and a section left alone keeps exactly its former chunk (same text,
  same hash: its stored vector is reused).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass

# The heading forms migration 022's rag_section_parts reads as a numbered part (its keywords
# and number pattern), matched more loosely here: any heading this matches is kept out of
# merging, and a loose match only means a merge not made.
_KEYWORDS = (r"§|section|sec\.|clause|abschnitt|paragraph|paragraf|oddil|article|art\.|artikel|clanek|cl\."
             r"|item|note|part|teil|partie|cast|title|chapter|kapitel|chapitre|hlava|dil")
_NUMBERED = re.compile(
    rf"^\s*(?:(?:{_KEYWORDS})\s*(?:[0-9]{{1,4}}|[ivxlc]{{1,7}}(?![0-9a-z]))|[0-9]{{1,4}}(?:[.\-][0-9]{{1,3}})*[a-z]?(?![0-9a-z]))")


@dataclass
class Section:
    """One heading's body: `path` its heading texts, `heads` their element indexes (parallel
    to `path`), `members` the element indexes of its body. `own_heading`: the last of `path`
    is this section's own heading (False for text before any heading, and for a heading with
    no body, whose heading is its one member)."""

    path: list[str]
    heads: list[int]
    members: list[int]
    own_heading: bool


def numbered(heading: str) -> bool:
    """Whether a heading names a numbered part that a question could refer to."""
    decomposed = unicodedata.normalize("NFKD", unicodedata.normalize("NFKC", heading).casefold())
    folded = "".join(ch for ch in decomposed if not unicodedata.combining(ch))
    return bool(_NUMBERED.match(folded))


def common_heads(sections: Sequence[Section]) -> int:
    """How many leading headings (by element, not by text) all `sections` share."""
    depth = min(len(s.heads) for s in sections)
    for i in range(depth):
        if len({s.heads[i] for s in sections}) > 1:
            return i
    return depth


def run_start(sections: Sequence[Section]) -> int:
    """The element a merged run's text starts at: the first section's own heading, unless that
    heading is the common parent (then its first body element)."""
    first = sections[0]
    if first.own_heading and len(first.heads) > common_heads(sections):
        return first.heads[-1]
    return first.members[0]


def can_merge(sections: Sequence[Section]) -> bool:
    """The structural rules above for one candidate run of sections (not the token budget)."""
    depth = common_heads(sections)
    if depth == 0:  # different top-level sections, or text before the first heading
        return False
    start = run_start(sections)
    for section in sections:
        for text, head in zip(section.path[depth:], section.heads[depth:]):
            if head < start or numbered(text):
                return False
    return True


def merge_runs(sections: Sequence[Section], single: Sequence[bool],
               fits: Callable[[Sequence[Section]], bool]) -> list[list[int]]:
    """Runs of consecutive section indexes, each run one chunk when longer than one. `single[i]`:
    section i fits in one chunk on its own; `fits(run)`: the run's merged text (from its
    start to its last member) and its common path fit the budget. Greedy, in document order."""
    runs: list[list[int]] = []
    for i, section in enumerate(sections):
        if runs and single[i] and all(single[j] for j in runs[-1]):
            candidate = [sections[j] for j in runs[-1]] + [section]
            if can_merge(candidate) and fits(candidate):
                runs[-1].append(i)
                continue
        runs.append([i])
    return runs

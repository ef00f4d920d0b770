"""The figure-role check: a claim's figure must stand, in the passage, next to what the claim
says it is the figure of.

The exact-field rule (fields.py) asks only whether the passage states the claim's figure
somewhere. A passage often holds several figures of one kind: "around 92 % speak Finnish; the
Swedish-speaking minority comprises about 6 %", "Code 660: Astrophysics ... Code 670:
Heliophysics ...". A claim that gives 92 % to the Swedish speakers states a figure the passage
holds, in another role. So each figure is read with the words around it (WINDOW words either
side, within its clause: a sentence, a line, a table cell, up to ";"), and the claim's content
words are matched against those windows: when the window of another figure of the same kind, one
the claim does not give, shares more of the words beside the figure in the claim than any window
of the claim's own figure, the passage attributes the claim's subject to that other figure, and the claim's figure
is in the wrong role. A tie, or no other figure, leaves the figure standing: the check only
catches a passage that points elsewhere, it never asks for words the passage need not repeat.

Both sides are read in canonical form (fields.canonical): a date is one ISO token and not a
figure here (every figure of a sentence shares its year and day), a code such as "H.264" or
"F172" is one token and not a figure either (the exact-field rule checks identifiers), nor is a
year; figures a Markdown table holds are left to fields.py, which checks them by row and column.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from rag_pipeline.answers.claim_sentences import rejoined
from rag_pipeline.answers.fields import canonical
from rag_pipeline.answers.figures import NUM, is_year, value

WINDOW = 8  # words either side of a figure that say what it is the figure of

_CLAUSES = re.compile(r"(?<=[.!?;])\s+|\n+|\s\|\s|\|")
_RUN = re.compile(r"[\w.,\-/$€£%]+")
_LETTERS = re.compile(r"[^\W\d_]+")
_FIGURE = re.compile(rf"(?P<num>{NUM})(?P<pct>%)?")
# The title or volume number of a legal citation ("5 U.S.C. 3301", "28 FR 10022", "5 CFR 1.1") names
# the code it cites: no figure of anything (the exact-field rule still checks it)
# (a volume is followed by its code's abbreviation and a section or page: "5 U.S. states" is a count)
_CITATION_VOLUME = re.compile(r"\b\d+\s+(?=(?:u\.\s?s\.\s?c|usc|c\.\s?f\.\s?r|cfr|fr|stat|u\.\s?s)\b\.?,?\s*§?\s*\d)",
                              re.IGNORECASE)
_STOP = frozenset("the a an and or of in on at to for by with from per is are was were be been this that these those "
                  "its it as which who whose has have had do does did than then there their they he she we our "
                  "de der die das le la les et und des du".split())


@dataclass(frozen=True)
class Misplaced:
    figure: str  # the claim's figure, as written there
    rival: str  # the passage's figure whose words the claim's words match better

    def describe(self) -> str:
        return f"figure {self.figure!r} stands in the passage for something else (the claim's words go with {self.rival!r})"


def _stem(word: str) -> str:
    """Crude English stemming, enough to match "speaks" with "speaking" and "charges" with "charged"."""
    for suffix in ("ing", "ed", "es", "s"):
        if len(word) > len(suffix) + 3 and word.endswith(suffix):
            return word[: -len(suffix)]
    return word


def _tokens(text: str) -> list[str]:
    """Figures (a run of word characters and .,-/$€£% holding a digit, whole) and words (letters),
    in order. Run by run: one pattern that tried "a run holding a digit" at every position
    rescanned the rest of a digitless run each time (0.3 s for a 4,000-character "a/a/a/...")."""
    found: list[str] = []
    for run in _RUN.findall(text):
        found.extend([run] if any(ch.isdigit() for ch in run) else _LETTERS.findall(run))
    return found


def _figures(clause: str) -> list[tuple[int, str, bool, set[str]]]:
    """(position, value, is a percentage, window of content words) for each figure of a clause."""
    tokens = [t.rstrip(".,") for t in _tokens(clause)]
    found = []
    for i, token in enumerate(tokens):
        match = _FIGURE.fullmatch(token)
        if match is None:
            continue
        number = value(match.group("num"))
        if number is None or is_year(number):
            continue  # not a number; a year

        window = tokens[max(0, i - WINDOW):i] + tokens[i + 1:i + 1 + WINDOW]
        words = {_stem(t) for t in window if not any(c.isdigit() for c in t) and len(t) > 1 and t not in _STOP}
        found.append((i, number, match.group("pct") is not None, words))
    return found


def content_words(text: str) -> set[str]:
    """The words that say what something is (stemmed, no figures, no stop words), as written: the
    caller folds case (both sides here are in canonical form, which does)."""
    return {_stem(t) for t in _tokens(text) if not any(c.isdigit() for c in t) and len(t) > 1 and t not in _STOP}


def misplaced(claim: str, passage: str) -> list[Misplaced]:
    """The claim's figures that the passage gives to another subject (module docstring)."""
    claim_text = _CITATION_VOLUME.sub("", canonical(claim))
    claim_words = content_words(claim_text)
    # what the claim says each figure is the figure of: the words beside it in the claim, not the
    # claim's every word ("65.2 percent, against 42.9 percent for BM25": BM25 goes with 42.9 only)
    said: dict[tuple[str, bool], set[str]] = {}
    for clause in rejoined(_CLAUSES.split(claim_text)):
        for _, number, pct, words in _figures(clause):
            said.setdefault((number, pct), set()).update(words)
    claim_figures = set(said)
    if not claim_figures or not claim_words:
        return []
    clauses = rejoined(_CLAUSES.split("\n".join(line for line in prepare_lines(passage) if "|" not in line)))
    windows = []
    for k, clause in enumerate(clauses):
        found = _figures(clause)
        beside = _beside(clauses, k) if found else set()
        windows += [(number, pct, words | beside) for _, number, pct, words in found]
    found = []
    for number, pct in sorted(claim_figures):
        near = said[(number, pct)] or claim_words
        own = [len(words & near) for n, p, words in windows if (n, p) == (number, pct)]
        if not own:
            continue  # not in the passage's prose: the exact-field rule decides
        rivals = [(len(words & near), n) for n, p, words in windows if p == pct and (n, p) not in claim_figures]
        best = max(rivals, default=(0, ""))
        if best[0] > max(own):
            found.append(Misplaced(number + ("%" if pct else ""), best[1] + ("%" if pct else "")))
    return found


def _beside(clauses: list[str], k: int) -> set[str]:
    """The words around clause `k` when it holds none, only figures: a key figure of a report's
    summary page or slide stands alone on its line, its label on the line below or above
    ("EMPLOYMENT CREATION / 2,32,822 / New jobs created"); WINDOW words of each neighbour, as a
    figure's window in prose. A clause with words of its own keeps to them."""
    if content_words(clauses[k]):
        return set()
    before = _tokens(clauses[k - 1])[-WINDOW:] if k else []
    after = _tokens(clauses[k + 1])[:WINDOW] if k + 1 < len(clauses) else []
    return content_words(" ".join(before + after))


def prepare_lines(text: str) -> list[str]:
    """The passage in canonical form line by line (it joins whitespace runs; lines are clauses)."""
    return [_CITATION_VOLUME.sub("", canonical(line)) for line in text.splitlines() if line.strip()]

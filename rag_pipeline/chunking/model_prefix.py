"""What precedes a chunk's text in its model input: the document's identity line, then its
section path, each held to a share of the 256-token input.

The prefix is said in every chunk of a section, so its length is paid once per chunk: a long
line there shrinks the budget of every body under it. A heading is not always short. Word
styles used for emphasis, a PDF paragraph set large, a man page's example line read as a
heading: one of 92 tokens sat in 107 of the 816 chunks of evalsets/generalisation, and a
300-word one left each body 16 tokens (every paragraph cut in three, then the path dropped
anyway, so the heading's words were in no chunk at all). So each heading is said in at most
MAX_HEADING_TOKENS, cut at a word with an ellipsis, and the path line in at most
MAX_PATH_TOKENS, the innermost headings kept and the outer ones said as "…" (PathFitter).
A heading that had to be cut is also read whole as the first text of its own section
(chunks.py), whose first chunk then leaves it out of its path; an outer heading a path leaves
out keeps a chunk of its own. So no word is lost. The stored section path keeps every heading
whole: citations and the numbered-part search read it, not the model input.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

TokenCounter = Callable[[list[str]], list[int]]

MAX_IDENTITY_TOKENS = 48  # the identity line's share of the 256-token input, at most
MAX_HEADING_TOKENS = 48  # one heading as the path says it, at most (the same share as the identity)
MAX_PATH_TOKENS = 96  # the whole path line, at most: with the identity, the body keeps >= 110 of 256
ELLIPSIS = "\u2026"
PATH_SEPARATOR = " > "


def section_prefix(path: Sequence[str], identity: str = "") -> str:
    """The identity line, then the path. An identity that only repeats the path's top heading
    (a "Travel Policy" file whose first heading is "Travel Policy") is said once: saying it
    twice weighs the title over the text. (A long title the identity shortened with an
    ellipsis is said twice, shortened and whole: saying it once cost SciFact 0.002 nDCG@10 in
    hybrid+rerank, 0.721 -> 0.719, where titles carry the claims; bench/README.md, issue 28.)"""
    repeats = bool(path) and " ".join(identity.split()).casefold() == " ".join(path[0].split()).casefold()
    head = identity + "\n" if identity and not repeats else ""
    return head + (PATH_SEPARATOR.join(path) + "\n" if path else "")


def fit_line(text: str, count: TokenCounter, limit: int, tokens: int | None = None,
             overhead: tuple[int, int] | None = None) -> str:
    """`text` (whitespace collapsed) within `limit` tokens, cut at a word with an ellipsis if
    longer; "" when not even its first word fits. `tokens` (the line's count) and `overhead`
    (`counter_overhead`): where the caller has them already. The cut is read off the words' own
    counts (one call: a word piece tokenizer splits at spaces, so they add up) and checked on the
    line itself, a word fewer at a time while it does not fit: a binary search over the words
    cost seven calls a heading, most of chunking a document of 2,000 long headings."""
    text = " ".join(text.split())
    if not text or (count([text])[0] if tokens is None else tokens) <= limit:
        return text
    words = text.split()
    special, ellipsis = overhead or counter_overhead(count)
    room = limit - special - ellipsis
    cut, used = 0, 0
    for size in count(words):
        used += size - special
        if used > room:
            break
        cut += 1
    while cut and count([" ".join(words[:cut]) + ELLIPSIS])[0] > limit:
        cut -= 1
    return " ".join(words[:cut]) + ELLIPSIS if cut else ""


def counter_overhead(count: TokenCounter) -> tuple[int, int]:
    """The tokens a model adds to every text ([CLS], [SEP]) and those of the ellipsis alone."""
    special = count([""])[0]
    return special, count([ELLIPSIS])[0] - special


def fit_identity(identity: str, count: TokenCounter) -> str:
    """The identity line within MAX_IDENTITY_TOKENS."""
    return fit_line(identity, count, MAX_IDENTITY_TOKENS)


class PathFitter:
    """Paths and headings as the model input says them, for one document: each heading is
    counted and cut once however many paths hold it (2,000 sections of long headings chunked
    4.5x slower without it)."""

    def __init__(self, count: TokenCounter) -> None:
        self.count = count
        self._headings: dict[str, str] = {}
        self._sizes: dict[str, int] = {}  # the counts learn() found too long
        self._paths: dict[tuple[str, ...], list[str]] = {}
        self._overhead: tuple[int, int] | None = None  # counter_overhead, counted once a document

    def learn(self, paths: Sequence[Sequence[str]]) -> None:
        """Count the distinct headings of `paths`, then the distinct paths, one call each: a
        document of 30,000 short sections would otherwise pay a tokenizer call per heading."""
        headings = sorted({h for path in paths for h in path} - self._headings.keys())
        for heading, size in zip(headings, self.count(headings) if headings else []):
            if size <= MAX_HEADING_TOKENS:
                self._headings[heading] = heading
            else:
                self._sizes[heading] = size
        whole = [key for key in dict.fromkeys(tuple(p) for p in paths)
                 if key not in self._paths and all(self._headings.get(h) == h for h in key)]
        for key, size in zip(whole, self.count([PATH_SEPARATOR.join(k) for k in whole]) if whole else []):
            if size <= MAX_PATH_TOKENS:
                self._paths[key] = list(key)

    def too_long(self, heading: str) -> bool:
        """Whether the path can only say `heading` cut short."""
        return self.heading(heading) != heading

    def heading(self, heading: str) -> str:
        """`heading` within MAX_HEADING_TOKENS."""
        if heading not in self._headings:
            self._overhead = self._overhead or counter_overhead(self.count)
            self._headings[heading] = fit_line(heading, self.count, MAX_HEADING_TOKENS, self._sizes.get(heading),
                                               self._overhead)
        return self._headings[heading]

    def path(self, path: Sequence[str]) -> list[str]:
        """The path as the model input says it: each heading within MAX_HEADING_TOKENS, and as
        many of the innermost as fit MAX_PATH_TOKENS, the outer ones left as one "…". A path
        that needs neither is returned as it is (its chunks' text and vectors are unchanged)."""
        key = tuple(path)
        if key not in self._paths:
            self._paths[key] = self._fit(path)
        return list(self._paths[key])

    def _fit(self, path: Sequence[str]) -> list[str]:
        if not path:
            return []
        fitted = [self.heading(h) for h in path]
        if self.count([PATH_SEPARATOR.join(fitted)])[0] <= MAX_PATH_TOKENS:
            return fitted
        keep = 1
        while keep < len(fitted) and self.count([PATH_SEPARATOR.join([ELLIPSIS, *fitted[-(keep + 1):]])])[0] <= MAX_PATH_TOKENS:
            keep += 1
        return [ELLIPSIS, *fitted[-keep:]]

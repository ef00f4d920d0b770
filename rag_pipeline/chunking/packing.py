"""Pieces and their packing into chunks: the spans of cleaned text no chunk may cut inside, and
the greedy fill that groups them up to the token budget (chunks.py decides what the pieces are
and what each chunk's model input says before them).

Pieces marked glued (a caption, a lead-in: keep_with_next.py; a split table's header row and
rule) that would end a group start the next one instead, with the piece they introduce, where
the run fits: a caption, the header row and the first rows of its table are read together.

Tried and left out (session 36): saying a split table's header row (and caption) before the rows
of its later chunks, in their model input. On the corpus set it cost evidence@10 0.903 -> 0.875
(the WARN report's one-company rows, each chunk now led by the same header, fell out of the top
ten; a financial table's first row "| | Years ended December 31, |" said nothing), and it won no
case there.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

TokenCounter = Callable[[list[str]], list[int]]
MAX_CHUNK_CHARS = 4000  # long unbroken "words" tokenise to one [UNK]; keep chunks readable anyway


@dataclass
class Piece:
    """A span of the cleaned text no chunk may cut inside (a paragraph, a sentence, a table row group)."""

    start: int
    end: int
    page_start: int | None
    page_end: int | None


def row_boundaries(text: str, start: int, end: int) -> list[int]:
    return [start + m.end() for m in re.finditer(r"\n", text[start:end])]


def split_at(start: int, end: int, boundaries: list[int]) -> list[tuple[int, int]]:
    cuts = [start] + [b for b in boundaries if start < b < end] + [end]
    return [(a, b) for a, b in zip(cuts, cuts[1:]) if b > a]


def word_windows(text: str, start: int, end: int, count: TokenCounter, budget: int) -> list[tuple[int, int]]:
    """Last resort for a sentence longer than the budget: greedy windows of whole words."""
    words = [(start + m.start(), start + m.end()) for m in re.finditer(r"\S+", text[start:end])]
    windows: list[tuple[int, int]] = []
    i = 0
    while i < len(words):
        lo, hi = i, len(words)
        # binary search the longest run of words that fits the token and character budget
        while lo < hi:
            mid = (lo + hi + 1) // 2
            s, e = words[i][0], words[mid - 1][1]
            if mid > i and e - s <= MAX_CHUNK_CHARS and count([text[s:e]])[0] <= budget:
                lo = mid
            else:
                hi = mid - 1
        j = max(lo, i + 1)  # a single word always advances
        s, e = words[i][0], words[j - 1][1]
        if lo == i or e - s > MAX_CHUNK_CHARS:  # one "word" over the budget: cut by characters
            windows.extend(character_windows(text, s, e, count, budget))
        else:
            windows.append((s, e))
        i = j
    return windows


def character_windows(text: str, start: int, end: int, count: TokenCounter, budget: int) -> list[tuple[int, int]]:
    """A run without spaces cut into the longest spans that fit the budget: Chinese, Japanese or
    Thai written without spaces, a sentence with no full stop the pattern knows, was one "word"
    and so one chunk (2,162 tokens for 2,160 characters of Japanese), the model reading only its
    first 256 tokens. Each cut is found by bisection on the tokenizer's count."""
    windows: list[tuple[int, int]] = []
    a = start
    while a < end:
        fits, over = a + 1, min(end, a + MAX_CHUNK_CHARS)
        if count([text[a:over]])[0] <= budget:
            fits = over
        while over - fits > 1:  # count(text[a:fits]) fits, count(text[a:over]) does not
            mid = (fits + over) // 2
            fits, over = (mid, over) if count([text[a:mid]])[0] <= budget else (fits, mid)
        windows.append((a, fits))
        a = fits
    return windows


def pack(pieces: list[Piece], text: str, count: TokenCounter, budget: int,
         glued: frozenset[int] | set[int] = frozenset()) -> list[list[Piece]]:
    """Greedy: add pieces to the current group while the joined span still fits (`glued`:
    indexes into `pieces`, the module's docstring)."""
    groups: list[list[Piece]] = []
    if not pieces:
        return groups
    piece_tokens = count([text[p.start : p.end] for p in pieces])
    first, current_tokens = 0, piece_tokens[0]  # the current group: pieces[first:k]
    for k, (piece, tokens) in enumerate(zip(pieces[1:], piece_tokens[1:]), start=1):
        if current_tokens + tokens <= budget and piece.end - pieces[first].start <= MAX_CHUNK_CHARS:
            current_tokens += tokens
            continue
        moved = _glued_run(first, k, glued)
        run_tokens = sum(piece_tokens[moved:k]) + tokens
        if moved < k and run_tokens <= budget and piece.end - pieces[moved].start <= MAX_CHUNK_CHARS:
            groups.append(pieces[first:moved])
            first, current_tokens = moved, run_tokens
        else:
            groups.append(pieces[first:k])
            first, current_tokens = k, tokens
    groups.append(pieces[first:])
    return groups


def _glued_run(first: int, k: int, glued: frozenset[int] | set[int]) -> int:
    """Where the run of glued pieces ending just before piece `k` starts (`k` if none), never
    taking the group's first piece: a group is never left empty."""
    start = k
    while start - 1 > first and start - 1 in glued:
        start -= 1
    return start

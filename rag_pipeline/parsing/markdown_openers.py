"""Markdown whose openers python-markdown would chase to the end of the text.

python-markdown (which both Markdown paths call, unstructured's too) finds the closer of an
opener by reading forward, character by character in Python:
- a "[" or "![" its "]" (the link text, counting nested brackets),
- a "(" right after a "]" its ")" (the link destination, counting nested parentheses),
- a run of backticks the next run of the same length (a code span),
and the standard library's HTML parser a "<" before a letter its ">" (a tag).
An opener that never closes is read to the end of its paragraph (of the document, for "<"), so a
paragraph of many of them is quadratic: 8,000 "[" took 8.5 s and 8,000 "<![CDATA[ " (80 KB)
165 s, past the parse limit, and the file was quarantined instead of indexed.

`openers_escaped` counts those reads before parsing, in one pass over the openers: each one's
distance to its closer, or to the end of its paragraph when it has none. Under READ_BUDGET,
which every document but a hostile one is, far under, the text goes to the parser unchanged.
Over it, each opener whose closer lies more than FAR characters away, or nowhere, is escaped
("\\[", "\\(", "\\`", "&lt;"): python-markdown reads it as the character it is, at once, and the
paragraph's text is the same. If the near openers alone still exceed the budget, every opener is
escaped. An escape is also a match, after which python-markdown copies the paragraph's whole
string again, so a paragraph break goes before an escape every PIECE characters of a paragraph.
What differs, in such a document only (the elements' text, otherwise the same, gains characters
python-markdown would have hidden as markup):
- a link, image or code span longer than FAR (or every one, in the second case) is kept as its
  source text, and so is a backtick run that python-markdown would have closed with a shorter
  run further than FAR (its fallback);
- a "<" whose ">" lies further than FAR is text, where python-markdown took all between as a
  tag's attributes and dropped them;
- a bracket inside a code span is escaped like any other (which backticks pair up depends on
  the inline text they are in, known only to python-markdown), and an escape inside a code span,
  an indented code block or a raw HTML block shows as written;
- a paragraph break inside a list item or table row ends it there.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from dataclasses import dataclass, field

READ_BUDGET = 2_000_000  # source characters python-markdown may read for closers (0.5 s; up to ~4 s where escapes lengthen its text)
FAR = 500  # in a document over the budget, an opener whose closer lies further than this is escaped
PIECE = 4_000  # in such a document, the longest run of text between paragraph breaks put before escapes

_UNIT_END = re.compile(r"\n[ \t]*\n")  # paragraphs: no inline text of python-markdown spans a blank line
_TICKS = re.compile(r"`+")
# a backslash escapes what python-markdown's ESCAPED_CHARS hold (not "<": the HTML parser, which runs
# first, does not read escapes)
_TOKENS = re.compile(r"\\[\\`\[\]()]|[\[\]()]|<(?=/?[A-Za-z])|>")
_ESCAPES = {"[": "\\[", "(": "\\(", "`": "\\`", "<": "&lt;"}


@dataclass
class _Reads:
    """Each opener's position, kind and the characters python-markdown reads for it."""

    openers: list[tuple[int, int, str]] = field(default_factory=list)  # (position, reads, kind)
    closers: dict[int, int] = field(default_factory=dict)  # a backtick opener's position -> its closer's
    paragraphs: list[int] = field(default_factory=list)  # where each paragraph starts

    def add(self, position: int, reads: int, kind: str, closer: int | None = None) -> None:
        self.openers.append((position, reads, kind))
        if closer is not None:
            self.closers[position] = closer


def openers_escaped(text: str, *, budget: int = READ_BUDGET, far: int = FAR) -> str:
    """`text` as python-markdown should be given it: unchanged unless its openers would cost
    more than `budget` reads, and then with the far ones (or all) escaped."""
    if len(text) * len(text) <= budget:  # at most one opener per character, each reading at most the text
        return text
    reads = _openers(text)
    if sum(cost for _, cost, _ in reads.openers) <= budget:
        return text
    near = sum(cost for _, cost, _ in reads.openers if cost <= far)
    return _escaped(text, reads, beyond=far if near <= budget else 0)


def escaped_beyond(text: str, far: int) -> str:
    """`text` with every opener escaped whose closer lies more than `far` characters away or
    nowhere (0: every opener), whatever the reads: what `openers_escaped` does to a hostile text."""
    return _escaped(text, _openers(text), beyond=far)


def reads_by_kind(text: str) -> dict[str, int]:
    """The characters python-markdown is expected to read for closers in `text`, by opener kind
    ("[", "(", "`", "<"): what `openers_escaped` weighs against the budget."""
    totals: dict[str, int] = {}
    for _, cost, kind in _openers(text).openers:
        totals[kind] = totals.get(kind, 0) + cost
    return totals


def _openers(text: str) -> _Reads:
    """The openers python-markdown will chase in `text`, outside fenced code. Paragraphs (text
    between blank lines) are at least as long as the inline texts python-markdown scans (a
    list item, a quote, a table cell are parts of one), so reads counted to a paragraph's end
    are never fewer than python-markdown's. Code spans are not taken out: a bracket inside one
    is counted (and, in a hostile text, escaped) as if it were outside, since which backticks
    pair up depends on the inline text they are in."""
    from markdown.extensions.fenced_code import FencedBlockPreprocessor

    masked = FencedBlockPreprocessor.FENCED_BLOCK_RE.sub(lambda m: "\x00" * len(m.group()), text)
    reads = _Reads()
    for start, end in _paragraphs(masked):
        reads.paragraphs.append(start)
        unit = masked[start:end]
        if "`" in unit:
            _code_spans(unit, start, reads)
        _brackets(unit, start, reads)
    _tags(masked, reads)
    return reads


def _paragraphs(text: str) -> list[tuple[int, int]]:
    """(start, end) of each run of text between blank lines."""
    spans, at = [], 0
    for match in _UNIT_END.finditer(text):
        spans.append((at, match.start()))
        at = match.end()
    spans.append((at, len(text)))
    return spans


def _code_spans(unit: str, offset: int, reads: _Reads) -> None:
    """Each backtick opener's reads, following python-markdown 3.x's BacktickInlineProcessor
    within each line: the closer is the next run of exactly the opener's length (found by a scan
    that ignores escapes); with none, the scan reads to the end of the paragraph, and the
    longest shorter run after it closes the span; with none either, the pattern resumes twice
    the opener's length after its start, so mid-run: python-markdown skips the ticks twice,
    which is what makes "``a`" repeated quadratic. Spans are paired within a line only (a span
    may cross lines, but which lines share an inline text depends on the block): a pair that
    crosses lines is then counted as a failed opener, which only overstates the reads."""
    line_start = 0
    for line in unit.split("\n"):  # python-markdown's lines: "\n" only
        if "`" in line:
            _line_code_spans(line, offset + line_start, len(unit) - line_start, reads)
        line_start += len(line) + 1


def _line_code_spans(line: str, offset: int, to_end: int, reads: _Reads) -> None:
    """`_code_spans` for one line starting at `offset`, `to_end` characters before the end of
    its paragraph."""
    runs = [(m.start(), m.end()) for m in _TICKS.finditer(line)]
    by_length: dict[int, list[int]] = {}
    for index, (begin, end) in enumerate(runs):
        by_length.setdefault(end - begin, []).append(index)
    longest_after = [0] * (len(runs) + 1)  # index + 1 of the first longest run from here on (0: none)
    for index in range(len(runs) - 1, -1, -1):
        best = longest_after[index + 1]
        here = runs[index][1] - runs[index][0]
        longest_after[index] = index + 1 if not best or here >= runs[best - 1][1] - runs[best - 1][0] else best
    index, resume = 0, 0
    while index < len(runs):
        run_start, run_end = runs[index]
        begin = max(run_start, resume)
        if begin == run_start and _escaped_by_backslashes(line, run_start):
            begin += 1
        if begin >= run_end:
            index += 1
            continue
        ticks = run_end - begin
        same = by_length.get(ticks, [])
        found = bisect_right(same, index)
        if found < len(same):
            reads.add(offset + begin, runs[same[found]][0] - begin, "`", closer=offset + runs[same[found]][0])
            index, resume = same[found] + 1, runs[same[found]][1]
            continue
        reads.add(offset + begin, to_end - begin, "`")
        shorter = longest_after[index + 1]
        if shorter and runs[shorter - 1][1] - runs[shorter - 1][0] < ticks:
            index, resume = shorter, runs[shorter - 1][1]
            continue
        resume = begin + 2 * ticks


def _escaped_by_backslashes(text: str, at: int) -> bool:
    """Whether an odd run of backslashes ends just before `at` (python-markdown's pattern then
    skips that tick; an even run is escaped backslashes)."""
    slashes = 0
    while at - slashes > 0 and text[at - slashes - 1] == "\\":
        slashes += 1
    return slashes % 2 == 1


def _brackets(unit: str, offset: int, reads: _Reads) -> None:
    """Each "[" read to its matching "]", each "(" after a "]" to its matching ")", or to the
    end of the paragraph; escaped characters are not openers."""
    brackets: list[int] = []
    parens: list[int] = []
    for match in _TOKENS.finditer(unit):
        token, at = match.group(), match.start()
        if token == "[":
            brackets.append(at)
        elif token == "]":
            if brackets:
                opened = brackets.pop()
                reads.add(offset + opened, at - opened, "[")
        elif token == "(":
            parens.append(at)
        elif token == ")" and parens:
            opened = parens.pop()
            if opened and unit[opened - 1] == "]":
                reads.add(offset + opened, at - opened, "(")
    for opened in brackets:
        reads.add(offset + opened, len(unit) - opened, "[")
    for opened in parens:
        if opened and unit[opened - 1] == "]":
            reads.add(offset + opened, len(unit) - opened, "(")


def _tags(masked: str, reads: _Reads) -> None:
    """Each "<" before a letter (or "/" and a letter) read to the next ">" of the document."""
    closers = [m.start() for m in re.finditer(">", masked)]
    for match in _TOKENS.finditer(masked):
        if match.group() == "<":
            at = match.start()
            found = bisect_right(closers, at)
            reads.add(at, (closers[found] if found < len(closers) else len(masked)) - at, "<")


def _escaped(text: str, reads: _Reads, *, beyond: int) -> str:
    """`text` with each opener that reads more than `beyond` escaped (a backtick run: every tick
    of it, and its closing run too, which would otherwise open another span), and a paragraph break
    before an escaped opener once PIECE characters of its paragraph have passed since the start
    or the last break: each escape
    is a match for python-markdown, which rebuilds the paragraph's string after every match, so
    a long paragraph of escapes would be quadratic again (in copying). The break goes where a
    block cannot start by accident: just before a backslash or "&"."""
    out, at, piece = [], 0, 0
    chosen = [(position, kind) for position, cost, kind in reads.openers if cost > beyond]
    chosen += [(reads.closers[position], "`") for position, _ in chosen if position in reads.closers]
    for position, kind in sorted(chosen):
        if position < at:
            continue
        if kind == "`":  # the whole run: a tick left live would pair with another and show the escapes
            while position > at and text[position - 1] == "`" and not _escaped_by_backslashes(text, position - 1):
                position -= 1
        out.append(text[at:position])
        piece = max(piece, reads.paragraphs[bisect_right(reads.paragraphs, position) - 1])
        if position - piece >= PIECE:
            out.append("\n\n")
            piece = position
        if kind == "`":
            end = position
            while end < len(text) and text[end] == "`":
                end += 1
            out.append("\\`" * (end - position))
            at = end
        else:
            out.append(_ESCAPES[kind])
            at = position + 1
    out.append(text[at:])
    return "".join(out)

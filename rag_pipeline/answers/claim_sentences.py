"""Where the claims of a plain-text answer begin and end: draft.split_text's sentences.

A generator writes answers as prose, bullet lists, numbered steps and Markdown headings, with
abbreviations, initials and dated ordinals inside sentences. Splitting at every full stop before
a capital made a correct answer look flagged: "Dr." and "J." became uncited claims of their own,
"See Fig." one and "2 for details" another, "Sie beginnt am 1." one and "Januar" the next; and
bullets without full stops ran together into one claim citing every chunk of the list. So:

- a line that starts a list item (`-`, `*`, `•`, `1.`, `2)`, `a)`), a Markdown heading or a
  blank line ends what came before, and the item's marker is not part of its claim; other line
  breaks are wrapping inside a sentence;
- a full stop ends a sentence only before whitespace and a capital, digit or opening quote, and
  not after an initial ("J. R. Smith", "z. B."), a dotted abbreviation ("e.g.", "U.S.C."), a
  title or a word that abbreviates before a name ("Dr.", "Inc.", "vs."), a reference word before
  its number ("Fig. 2", "Sec. 4.2", "No. 5", "Art. 5") or a day before its month ("1. Januar");
  `!`, `?` and `…` end one as they stand;
- a heading, a whole-line emphasis ("**Leave policy**"), a lead-in ending in ":" or a question
  asserts nothing: without a citation marker it is not a claim (it stays in the recorded answer
  text);
- Markdown as generators write it: each row of a table is a claim of its own, its cells read under
  their headers ("City: Prague; Hotel cap: EUR 120": what its figures are, as the table said), its
  header row and delimiter row no claim; a quote (`> `) starts a
  block, its markers not part of the claim; a sentence may open with emphasis or code ("**Taxis**
  are ...", "`sync` runs ..."); a full stop inside a code span ends nothing;
- a list of sources (markers under a label of one or two words, "Sources:", "**References**", or
  markers with no words, each on its own bullet) is no claim, and its markers cite none.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from typing import NamedTuple

_LIST_ITEM = re.compile(r"[ \t]*(?:[-*•‣◦+]|\d{1,3}[.)]|[a-zA-Z][.)]|[ivxIVX]{1,5}[.)])[ \t]+(?=\S)")
_HEADING = re.compile(r"[ \t]*#{1,6}[ \t]+")
_CANDIDATE = re.compile(r"(?P<stop>[.!?…])[\"')\]”’»*_`]*\s+(?=[\"'(\[“‘«*_]{0,3}(?:[A-Z0-9\u00c0-\u024f]|`[^\s`]))")
_QUOTE = re.compile(r"[ \t]{0,3}(?:>[ \t]?)+")
_TABLE_DELIMITER = re.compile(r"[ \t]*\|?[ \t]*:?-{3,}:?[ \t]*(?:\|[ \t]*:?-{3,}:?[ \t]*)*\|?[ \t]*")
_CODE_SPAN = re.compile(r"`[^`\n]{1,500}`")
_DOTTED = re.compile(r"(?:[^\W\d_]{1,4}\.)+[^\W\d_]{1,4}")
# abbreviations that never end a sentence in an answer's prose (English, German, French, Czech)
_TITLES = frozenset("mr mrs ms dr prof st jr sr inc ltd co corp bros gen gov rep sen approx dept vs cf "
                    "bzw ca ggf vgl usf hr fr mme mlle env např tj tzv resp ing mgr".split())
# reference words before their number: "Fig. 2", "Sec. 4.2", "No. 5", "Art. 5", "Abs. 3", "odst. 2"
_BEFORE_NUMBER = frozenset("no nos nr fig figs sec secs sect art arts p pp vol ch chap para paras eq eqs "
                           "ref refs tab app abs kap bd odst čl č".split())
_MONTHS = frozenset("januar jänner februar märz april mai juni juli august september oktober november dezember "
                    "janvier février mars avril juin juillet août septembre octobre novembre décembre".split())
_NOT_A_CLAIM = re.compile(r"[ \t]*#{1,6}[ \t].*|[ \t]*(?:\*\*|__)[^*_\n]+(?:\*\*|__)[ \t]*:?[ \t]*|.*[:?][\"')\]”’»]*|[\W_]*",
                          re.DOTALL)


# A list of sources, not a claim: markers under a label of one or two words ("Sources:",
# "**References**", "## Zdroje") or with no words at all ("- [chunk 5]", "1. [chunk 5]"), with their bullets
_LABEL = r"[^\W\d_]+(?:[ \t]+[^\W\d_]+)?"
_SOURCES = re.compile(rf"(?:[\W_]|\d{{1,3}}[.)])*|[ \t]*(?:#{{1,6}}[ \t]+{_LABEL}|(?:\*\*|__){_LABEL}(?:\*\*|__)|{_LABEL}[ \t]*:)[\W_]*")
_ENDS_IN_WORD_STOP = re.compile(r"(?:^|\W)(\w+)\.$")


def rejoined(parts: list[str]) -> list[str]:
    """Passage text split at full stops, with the splits after a reference word before its number
    undone ("from No." + "8 up to 3/8 inch", "see Fig." + "2"): a passage splitter that cuts
    there (support.sentences, roles' clauses) leaves a figure without the words it belongs to."""
    groups: list[list[str]] = []
    for part in parts:
        stop = _ENDS_IN_WORD_STOP.search(groups[-1][-1].rstrip()) if groups and part.lstrip()[:1].isdigit() else None
        if stop and _before_its_number(stop.group(1), part.lstrip()):
            groups[-1].append(part.strip())
        else:
            groups.append([part])
    return [group[0] if len(group) == 1 else " ".join(p.strip() for p in group) for group in groups]


class Span(NamedTuple):
    start: int
    end: int
    is_claim: bool  # False: a list of sources, whose markers cite no claim
    text: str  # the claim as read: whitespace runs one space, a table row's cells under their headers


def claim_spans(plain: str, markers: list[int]) -> list[Span]:
    """Each span of answer text whose citation markers were blanked out (`markers`: where each
    stood); see the module docstring for the rules."""
    spans, ordered = [], sorted(markers)
    text = _shown(plain)
    for start, end, kind in _blocks(plain):
        for s, e in ([(start, end)] if kind != "text" else _sentences(text, start, end)):
            s += len(text[s:e]) - len(text[s:e].lstrip())
            e = s + len(text[s:e].rstrip())
            marked = bisect_right(ordered, e + 1) > bisect_left(ordered, s)  # a marker inside or right after it
            read = _labelled(plain[s:e], kind[1]) if isinstance(kind, tuple) else _read(text[s:e])
            if e > s and marked and _SOURCES.fullmatch(text[s:e]):
                spans.append(Span(s, e, False, read))
            elif e > s and (marked or (kind != "table header" and not _NOT_A_CLAIM.fullmatch(text[s:e]))):
                spans.append(Span(s, e, True, read))
    return spans


def _read(span: str) -> str:
    """One space per whitespace run, none before punctuation ("department [chunk 51]." with its
    marker blanked reads "department.")."""
    return re.sub(r"\s+([.,;:!?])", r"\1", " ".join(span.split()))


def _labelled(row: str, header: str) -> str:
    """A table row as a claim: each cell under its column's header ("City: Berlin; Hotel cap: EUR
    140"), so the claim names what its figures are, as the row did in its table."""
    cells, names = _cells(row), _cells(header)
    return "; ".join(f"{name}: {cell}" if name and name != cell else cell
                     for name, cell in zip([*names, *[""] * len(cells)], cells) if cell)


def _cells(row: str) -> list[str]:
    inner = row.strip()
    inner = inner[1:] if inner.startswith("|") else inner
    inner = inner[:-1] if inner.endswith("|") and not inner.endswith("\\|") else inner
    return [_read(cell) for cell in re.split(r"(?<!\\)\|", inner)]


def _shown(plain: str) -> str:
    """`plain` with quote markers at line starts blanked out, offsets kept: no part of a claim.
    (Table rows are read from `plain` by `_labelled`, their pipes by `_cells`.)"""
    if ">" not in plain:
        return plain
    out = []
    for line in plain.splitlines(keepends=True):
        quote = _QUOTE.match(line) if ">" in line else None
        out.append(" " * quote.end() + line[quote.end():] if quote else line)
    return "".join(out)


def _table_lines(lines: list[str]) -> dict[int, str | tuple[str, str]]:
    """Line index -> "header", "delimiter" or ("row", its header line) for each Markdown table:
    a delimiter row under a header row holding a pipe, then the rows holding one, up to a blank
    line."""
    found: dict[int, str | tuple[str, str]] = {}
    i = 1
    while i < len(lines):
        if "|" in lines[i - 1] and "-" in lines[i] and _TABLE_DELIMITER.fullmatch(lines[i].rstrip("\r\n")):
            header = lines[i - 1].rstrip("\r\n")
            found[i - 1], found[i] = "header", "delimiter"
            i += 1
            while i < len(lines) and lines[i].strip() and "|" in lines[i]:
                found[i] = ("row", header)
                i += 1
        i += 1
    return found


def _blocks(text: str) -> list[tuple[int, int, str | tuple[str, str]]]:
    """(start, end, kind) of each paragraph or list item ("text"), heading, table header or
    table row (("row", its header line)), markers stripped. A quote starts a block; its lines
    continue it."""
    blocks: list[tuple[int, int, str | tuple[str, str]]] = []
    start: int | None = None
    offset = 0
    lines = text.splitlines(keepends=True)
    table = _table_lines(lines) if "|" in text else {}
    quoted = False
    for i, line in enumerate(lines):
        body = line.rstrip("\r\n")
        quote = _QUOTE.match(body) if ">" in body else None
        inner = body[quote.end():] if quote else body
        item, heading = _LIST_ITEM.match(inner), _HEADING.match(inner)
        starts_quote = quote is not None and not quoted
        if not inner.strip() or item or heading or starts_quote or i in table:
            if start is not None:
                blocks.append((start, offset, "text"))
                start = None
        quoted = quote is not None and bool(inner.strip())
        skip = (quote.end() if quote else 0) + (item.end() if item else 0)
        if i in table:
            if table[i] != "delimiter":
                blocks.append((offset, offset + len(body), "table header" if table[i] == "header" else table[i]))
        elif heading:
            blocks.append((offset + skip, offset + len(body), "heading"))
        elif inner.strip():
            start = offset + skip if start is None else start
        offset += len(line)
    if start is not None:
        blocks.append((start, len(text), "text"))
    return blocks


def _sentences(text: str, start: int, end: int) -> list[tuple[int, int]]:
    found, begin = [], start
    code = [m.span() for m in _CODE_SPAN.finditer(text, start, end)] if "`" in text[start:end] else []
    code_starts = [a for a, _ in code]
    for match in _CANDIDATE.finditer(text, start, end):
        inside = bisect_left(code_starts, match.start()) - 1  # the last code span starting before the stop
        if inside >= 0 and match.start() < code[inside][1]:
            continue  # a full stop inside a code span (`config.yaml. Then`) ends nothing
        if match.group("stop") == "." and not _ends_sentence(_word_before(text, match.start(), begin),
                                                            text[match.end():min(end, match.end() + 40)]):
            continue
        found.append((begin, match.start() + 1))
        begin = match.end()
    return [*found, (begin, end)]


def _word_before(text: str, stop: int, floor: int) -> str:
    """The word the full stop at `stop` ends, opening brackets and quotes off; read backwards a
    bounded way, so an answer of a million initials ("A. A. A. ...") costs linear time."""
    start = stop
    while start > max(floor, stop - 40) and not text[start - 1].isspace():
        start -= 1
    return text[start:stop].lstrip("([\"'“‘«")


def _ends_sentence(word: str, after: str) -> bool:
    """Whether a full stop after `word` ends a sentence, given the text `after` it."""
    folded = word.casefold()
    if (len(word) == 1 and word.isalpha()) or _DOTTED.fullmatch(word) or folded in _TITLES:
        return False
    if _before_its_number(word, after):
        return False
    next_word = re.match(r"[^\W\d_]+", after)
    return not (word.isdigit() and next_word is not None and next_word.group().casefold() in _MONTHS)


def _before_its_number(word: str, after: str) -> bool:
    """Whether `word` is a reference word whose full stop stands before its number ("No. 5",
    "Fig. 2", "odst. 2"), given the text `after` the stop: no sentence ends there."""
    return word.casefold() in _BEFORE_NUMBER and after[:1].isdigit()

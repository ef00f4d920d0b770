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
  text).
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right

_LIST_ITEM = re.compile(r"[ \t]*(?:[-*•‣◦+]|\d{1,3}[.)]|[a-zA-Z][.)]|[ivxIVX]{1,5}[.)])[ \t]+(?=\S)")
_HEADING = re.compile(r"[ \t]*#{1,6}[ \t]+")
_CANDIDATE = re.compile(r"(?P<stop>[.!?…])[\"')\]”’»]*\s+(?=[\"'(\[“‘«]?[A-Z0-9\u00c0-\u024f])")
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


def claim_spans(plain: str, markers: list[int]) -> list[tuple[int, int]]:
    """(start, end) of each claim of answer text whose citation markers were blanked out
    (`markers`: where each stood); see the module docstring for the rules."""
    spans, ordered = [], sorted(markers)
    for start, end, heading in _blocks(plain):
        for s, e in ([(start, end)] if heading else _sentences(plain, start, end)):
            s += len(plain[s:e]) - len(plain[s:e].lstrip())
            e = s + len(plain[s:e].rstrip())
            marked = bisect_right(ordered, e + 1) > bisect_left(ordered, s)  # a marker inside or right after it
            if e > s and (marked or not _NOT_A_CLAIM.fullmatch(plain[s:e])):
                spans.append((s, e))
    return spans


def _blocks(text: str) -> list[tuple[int, int, bool]]:
    """(start, end, is_heading) of each paragraph, list item or heading, markers stripped."""
    blocks: list[tuple[int, int, bool]] = []
    start: int | None = None
    offset = 0
    for line in text.splitlines(keepends=True):
        body = line.rstrip("\r\n")
        item, heading = _LIST_ITEM.match(body), _HEADING.match(body)
        if not body.strip() or item or heading:
            if start is not None:
                blocks.append((start, offset, False))
                start = None
        if heading:
            blocks.append((offset, offset + len(body), True))
        elif body.strip():
            start = offset + (item.end() if item else 0) if start is None else start
        offset += len(line)
    if start is not None:
        blocks.append((start, len(text), False))
    return blocks


def _sentences(text: str, start: int, end: int) -> list[tuple[int, int]]:
    found, begin = [], start
    for match in _CANDIDATE.finditer(text, start, end):
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

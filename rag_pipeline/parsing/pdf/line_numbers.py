"""Line numbers printed in a page's margin, left out of its text.

Court and deposition transcripts number every line 1 to 25, pleading paper 1 to 28, bills and
patents every line or every fifth. PyMuPDF reads each number as a line of its own beside the
line it numbers, so a transcript page became fifty one-line paragraphs, "12" between "The
above-entitled matter came on for oral" and "argument before the Supreme Court", and a chunk of
it was half numbers. A margin number column is recognised by its shape, in any language:

- at least MIN_NUMBERS lines of the page are a bare number of up to three digits;
- they stand in one column (their right edges, or their left edges, within X_TOLERANCE points);
- read top to bottom their values go up, by one or by five, on all but one step;
- the column lies in a margin: left of where most of the page's other lines start, or right of
  where most of them end;
- it runs down most of the page's text (from its first lines to its last, COVERAGE of their
  height) and numbers most rows beside it (or most fifth rows): line numbers count the whole
  page, a contents page's chapter numbers have their sections' rows between them.

A ranked list between paragraphs fails the coverage test, a table's column of figures the step
test, and a numbered list item is no bare number.
"""

from __future__ import annotations

import re
import statistics

MIN_NUMBERS = 5
X_TOLERANCE = 3.0  # points
COVERAGE = 0.6  # share of the height of the page's other lines the column spans
ROWS_SHARE = 0.6  # share of the text rows beside the column that it numbers
_BARE_NUMBER = re.compile(r"\d{1,3}")


def drop_line_numbers(text_dict: dict) -> int:
    """Take the margin line numbers out of `text_dict` (in place); how many were removed."""
    numbered, others = [], []
    for block in text_dict.get("blocks", []):
        for line in block.get("lines", []) if block.get("type") == 0 else []:
            text = "".join(span["text"] for span in line["spans"]).strip()
            if _BARE_NUMBER.fullmatch(text):
                numbered.append((line, int(text)))
            elif text:
                others.append(line)
    if len(numbered) < MIN_NUMBERS or not others:
        return 0
    column = _margin_column(numbered, others)
    if not column:
        return 0
    for block in text_dict["blocks"]:
        if block.get("type") == 0:
            block["lines"] = [line for line in block["lines"] if id(line) not in column]
    return len(column)


def _margin_column(numbered: list[tuple[dict, int]], others: list[dict]) -> set[int]:
    """The ids of the lines of the one column of numbers that counts lines in a margin (empty if none)."""
    starts = statistics.median(line["bbox"][0] for line in others)
    ends = statistics.median(line["bbox"][2] for line in others)
    top, bottom = min(line["bbox"][1] for line in others), max(line["bbox"][3] for line in others)
    best: set[int] = set()
    for edge in (2, 0):  # right-aligned numbers ("9" above "10"), left-aligned ones: the longer column
        for group in _columns(numbered, edge):
            lines = sorted(group, key=lambda item: item[0]["bbox"][1])
            in_margin = all(line["bbox"][2] <= starts for line, _ in lines) or all(line["bbox"][0] >= ends for line, _ in lines)
            spans = lines[-1][0]["bbox"][3] - lines[0][0]["bbox"][1] >= COVERAGE * (bottom - top)
            values = [value for _, value in lines]
            if (len(lines) >= MIN_NUMBERS and len(lines) > len(best) and in_margin and spans and _counts_lines(values)
                    and _numbers_rows(lines, others, values)):
                best = {id(line) for line, _ in lines}
    return best


def _numbers_rows(lines: list[tuple[dict, int]], others: list[dict], values: list[int]) -> bool:
    """Whether the column numbers the text rows beside it: one number per row (per fifth row where
    it counts in fives), not one per chapter of a contents page with its sections between."""
    first, last = lines[0][0]["bbox"][1], lines[-1][0]["bbox"][3]
    rows = {round((line["bbox"][1] + line["bbox"][3]) / 4) for line in others
            if first <= (line["bbox"][1] + line["bbox"][3]) / 2 <= last}
    step = 5 if sum(b - a == 5 for a, b in zip(values, values[1:])) * 2 > len(values) else 1
    return len(lines) * step >= ROWS_SHARE * len(rows)


def _columns(numbered: list[tuple[dict, int]], edge: int) -> list[list[tuple[dict, int]]]:
    """The numbers grouped by where they stand (their left or right edge, within X_TOLERANCE)."""
    groups: list[list[tuple[dict, int]]] = []
    for item in sorted(numbered, key=lambda item: item[0]["bbox"][edge]):
        if groups and item[0]["bbox"][edge] - groups[-1][-1][0]["bbox"][edge] <= X_TOLERANCE:
            groups[-1].append(item)
        else:
            groups.append([item])
    return groups


def _counts_lines(values: list[int]) -> bool:
    """Values that go up by one or by five, on all but one step."""
    steps = [b - a for a, b in zip(values, values[1:])]
    return sum(step not in (1, 5) for step in steps) <= 1 and sum(step in (1, 5) for step in steps) >= MIN_NUMBERS - 1

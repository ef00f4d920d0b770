"""The table-column check: a figure a claim reads from a table row must stand in the column whose
header names what the claim says the figure counts.

The exact-field rule (fields.py) finds a claim's figure in a table by its row and by a column
header sharing a word with the claim, any word of it. A row of a report's summary holds many
figures of one kind:

    | Summary by Month | Notices | ... | Permanent Layoff | Temporary Layoff | Not Identified Layoff | Permanent Closure |
    | July 2015        | 71      | ... | 30               | 2                | 13                    | 25                |

"Of the July 2015 notices, 13 were temporary layoffs" states a figure of that row, and "layoff"
is in its column's header, but the words beside 13 in the claim ("temporary layoffs") name
another column of the row. So each figure of the claim is read with the words right beside it
(NEAR_AFTER words after, NEAR_BEFORE before: "13 were temporary layoffs", "notices: 71"), and
those words are matched against the headers of the row the figure stands in: when another
column's header shares more of them than the figure's own, the claim gives the figure another
column's meaning. Only rows of purely numeric cells beside a label the claim names are read; a
tie, or a header sharing none, leaves the figure standing, as the figure-role check does in prose
(roles.py).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from rag_pipeline.answers.fields import Facts, terms
from rag_pipeline.answers.figures import NUM, is_year, prepare, value

NEAR_AFTER = 3  # tokens after a figure that say what it counts ("13 were temporary layoffs")
NEAR_BEFORE = 2  # and before it ("notices: 71")
MAX_FIGURES = 50  # figures of a claim read (a claim is at most 4,000 characters; bounds hostile input)

_TOKEN = re.compile(rf"{NUM}|[^\W\d_]+")
_NUMERIC_CELL = re.compile(rf"[\s$€£%]*{NUM}[\s%]*")


@dataclass(frozen=True)
class Misread:
    figure: str  # the claim's figure
    column: str  # the header of the column it stands in
    rival: str  # the header the claim's words name

    def describe(self) -> str:
        return (f"figure {self.figure!r} stands in the table's column {self.column!r}, not in {self.rival!r} "
                f"as the claim's words say")


def misread(claim: str, passage: Facts) -> list[Misread]:
    """The claim's figures that the passage's tables give to another column (module docstring)."""
    if not passage.tables:
        return []
    claim_terms = terms(claim)
    found = []
    for number, near in _figures(claim)[:MAX_FIGURES]:
        verdicts = [verdict for header, body in passage.tables if header
                    for cells in body if (verdict := _read(number, near, header, cells, claim_terms)) is not None]
        if verdicts and all(isinstance(v, Misread) for v in verdicts):
            found.append(verdicts[0])
    return found


def _figures(claim: str) -> list[tuple[str, set[str]]]:
    """(value, words beside it) for each figure of the claim that is no year."""
    tokens = _TOKEN.findall(prepare(claim))
    found = []
    for i, token in enumerate(tokens):
        number = value(token) if token[:1].isdigit() else None
        if number is None or is_year(number):
            continue
        beside = [t for t in tokens[max(0, i - NEAR_BEFORE):i] + tokens[i + 1:i + 1 + NEAR_AFTER] if not t[:1].isdigit()]
        found.append((number, terms(" ".join(beside))))
    return found


def _read(number: str, near: set[str], header: tuple[str, ...], cells: tuple[str, ...],
          claim_terms: set[str]) -> Misread | bool | None:
    """None where the row does not hold the figure in a numeric cell or is not the claim's row;
    else True where the figure's column is the one the claim's words name best, or a Misread."""
    numeric = [bool(_NUMERIC_CELL.fullmatch(cell)) and column < len(header) for column, cell in enumerate(cells)]
    label = terms(" ".join(cell for column, cell in enumerate(cells) if not numeric[column]))
    if not label & claim_terms:
        return None
    own = [column for column, cell in enumerate(cells) if numeric[column] and _value(cell) == number]
    if not own:
        return None
    shared = [len(near & terms(header[column])) if column < len(header) else 0 for column in range(len(cells))]
    best_own = max(own, key=lambda column: shared[column])
    rival = max((column for column in range(len(cells)) if numeric[column] and column not in own),
                key=lambda column: shared[column], default=None)
    if rival is None or shared[rival] <= shared[best_own]:
        return True
    return Misread(number, header[best_own], header[rival])


def _value(cell: str) -> str | None:
    match = re.search(NUM, cell)
    return value(match.group()) if match else None

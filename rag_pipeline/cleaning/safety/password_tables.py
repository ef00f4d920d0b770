"""Password columns in Markdown tables.

The parser emits tables as GitHub-flavoured Markdown, where a password sits in a cell below a
"Password" header, far from its label, so the inline label rule cannot see it. A column headed
"Password"/"Passwort"/"Heslo"... has its cells redacted; `| Password | value |` rows too.
"""

from __future__ import annotations

import re
from collections import Counter

from rag_pipeline.cleaning.safety.passwords import NOT_A_PASSWORD, PASSWORD_LABEL
from rag_pipeline.cleaning.safety.patterns import fold
from rag_pipeline.cleaning.safety.rules import PLACEHOLDER_PREFIX, placeholder
from rag_pipeline.cleaning.safety.template_values import is_template_value
from rag_pipeline.parsing.markdown_cells import table_cells

_TABLE_PASSWORD_CELL = re.compile(r"\|[ \t]{0,64}+(?:" + PASSWORD_LABEL + r")[ \t]{0,64}+\|")
_PASSWORD_CELL = re.compile(PASSWORD_LABEL)
_TABLE_SEPARATOR = re.compile(r"\|?[ \t]*:?-{2,}:?[ \t]*(?:\|[ \t]*:?-{2,}:?[ \t]*)*\|?")
_MAX_TABLE_LINE = 4096


def redact_password_tables(text: str, counts: Counter[str]) -> str:
    """Redact password columns and `| Password | x |` rows in Markdown tables.

    Only tables whose header names a password column are split into cells, so the cost is
    proportional to those tables, not to the document.
    """
    folded = fold(text)
    if _TABLE_PASSWORD_CELL.search(folded) is None:
        return text
    lines = text.split("\n")
    folded_lines = folded.split("\n")
    index = 0
    while index < len(lines):
        line = folded_lines[index]
        if len(line) <= _MAX_TABLE_LINE and _TABLE_PASSWORD_CELL.search(line):
            index = _redact_table_from(lines, index, counts)
        else:
            index += 1
    return "\n".join(lines)


def _join_cells(cells: list[str]) -> str:
    """A row rebuilt from its cells, with outer pipes, whether or not the original had them."""
    return "|" + "|".join(cells) + "|"


def _redact_table_from(lines: list[str], index: int, counts: Counter[str]) -> int:
    """Handle the table row at `index` naming a password cell; return the next line to scan."""
    cells = table_cells(lines[index])
    columns = [i for i, cell in enumerate(cells) if _PASSWORD_CELL.fullmatch(fold(cell.strip()))]
    following = lines[index + 1].strip() if index + 1 < len(lines) else ""
    if len(following) > _MAX_TABLE_LINE or _TABLE_SEPARATOR.fullmatch(following) is None:
        # a key/value row: | Password | s3cret |
        redacted = [_redact_cell(cells, column + 1, counts) for column in columns if column + 1 < len(cells)]
        if any(redacted):
            lines[index] = _join_cells(cells)
        return index + 1
    row = index + 2
    while row < len(lines) and lines[row].lstrip().startswith("|") and len(lines[row]) <= _MAX_TABLE_LINE:
        row_cells = table_cells(lines[row])
        redacted = [_redact_cell(row_cells, column, counts) for column in columns if column < len(row_cells)]
        if any(redacted):
            lines[row] = _join_cells(row_cells)
        row += 1
    return row


def _redact_cell(cells: list[str], column: int, counts: Counter[str]) -> bool:
    """Replace one non-empty, not-yet-redacted cell."""
    value = cells[column].strip()
    if not value or value.startswith(PLACEHOLDER_PREFIX) or is_template_value(value):
        return False
    if value.lower() in NOT_A_PASSWORD:
        return False
    counts["password"] += 1
    cells[column] = f" {placeholder('password')} "
    return True

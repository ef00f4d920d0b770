"""Credential columns and rows in Markdown tables.

The parser emits tables as GitHub-flavoured Markdown, where a password sits in a cell below a
"Password" header, far from its label, so the inline label rules cannot see it. A column whose
header names a credential in any wording ("Password", "Root password", "DB-Passwort",
"API key", "Client secret", "ｐａｓｓｗｏｒｄ", with homoglyphs folded) has its cells redacted;
so has the cell after a label cell in a key/value row (`| Admin password: | value |`). Cells
about a credential rather than holding one ("Password policy", "Token expiry") are not labels.
A header that is exactly a password label keeps the old rule (every non-empty cell below it is
a password); under other wordings a password must be one word (or quoted) and a key or token
must look machine-made, so a "Token" column of a linguistics table keeps its words.
"""

from __future__ import annotations

import re
from collections import Counter

from rag_pipeline.cleaning.safety.labelled import GENERIC_LABEL, label_kind, looks_machine_made
from rag_pipeline.cleaning.safety.passwords import NOT_A_PASSWORD, PASSWORD_LABEL, is_code_expression
from rag_pipeline.cleaning.safety.patterns import fold
from rag_pipeline.cleaning.safety.rules import PLACEHOLDER_PREFIX, placeholder
from rag_pipeline.cleaning.safety.template_values import is_template_value
from rag_pipeline.parsing.markdown_cells import table_cells

_PASSWORD_CELL = re.compile(PASSWORD_LABEL)
_PASSWORD_WORD = re.compile(r"(?P<label>" + PASSWORD_LABEL + r")(?![^\W\d_])")
_GENERIC_WORD = re.compile(r"(?P<label>" + GENERIC_LABEL + r")(?![a-z0-9])")
_ANY_CREDENTIAL_WORD = re.compile(PASSWORD_LABEL + "|" + GENERIC_LABEL)
# Words that make a cell about a credential rather than a label of one.
_ABOUT = re.compile(
    r"(?<![^\W\d_])(?:polic(?:y|ies)|length|min(?:imum)?|max(?:imum)?|expir\w*|age|rotation|reset|change[ds]?"
    r"|manager|hint|requirements?|complexity|history|strength|rules?|format|type|field|hash\w*|algorithm"
    r"|prompt|protected|storage|stored|count|limit|lifetime|validity|lockout|attempts|encoding|scopes?"
    r"|endpoint|url|name|id|usage|used|generator|less|richtlinie|länge|politika|délka|délky)(?![^\W\d_])"
)
_TABLE_SEPARATOR = re.compile(r"\|?[ \t]*:?-{2,}:?[ \t]*(?:\|[ \t]*:?-{2,}:?[ \t]*)*\|?")
_LABEL_TRIM = " \t*_`:=\uff1a"
_MAX_TABLE_LINE = 4096
_MAX_LABEL = 64


def _credential_column(cell: str) -> tuple[str, bool] | None:
    """(kind, exact) when the cell labels a credential; exact: it is just a password label."""
    label = fold(cell).strip(_LABEL_TRIM)
    if not label or len(label) > _MAX_LABEL:
        return None
    if _PASSWORD_CELL.fullmatch(label):
        return "password", True
    if _ABOUT.search(label):
        return None
    if _PASSWORD_WORD.search(label):
        return "password", False
    generic = _GENERIC_WORD.search(label)
    return (label_kind(generic.group("label")), False) if generic else None


def redact_password_tables(text: str, counts: Counter[str]) -> str:
    """Redact credential columns and `| Password | x |` rows in Markdown tables.

    Only table rows that name a credential are split into cells, so the cost is proportional
    to those tables, not to the document.
    """
    if "|" not in text:
        return text
    folded = fold(text)
    if _ANY_CREDENTIAL_WORD.search(folded) is None:
        return text
    lines = text.split("\n")
    folded_lines = folded.split("\n")
    index = 0
    while index < len(lines):
        line = folded_lines[index]
        if "|" in line and len(line) <= _MAX_TABLE_LINE and _ANY_CREDENTIAL_WORD.search(line):
            index = _redact_table_from(lines, index, counts)
        else:
            index += 1
    return "\n".join(lines)


def _join_cells(cells: list[str]) -> str:
    """A row rebuilt from its cells, with outer pipes, whether or not the original had them."""
    return "|" + "|".join(cells) + "|"


def _redact_table_from(lines: list[str], index: int, counts: Counter[str]) -> int:
    """Handle the table row at `index` naming a credential cell; return the next line to scan."""
    cells = table_cells(lines[index])
    columns = {i: found for i, cell in enumerate(cells) if (found := _credential_column(cell)) is not None}
    if not columns:
        return index + 1
    following = lines[index + 1].strip() if index + 1 < len(lines) else ""
    if len(following) > _MAX_TABLE_LINE or _TABLE_SEPARATOR.fullmatch(following) is None:
        # a key/value row: | Password | s3cret |. Unlike a column, a row names no list of values,
        # and `| string | password | A hint to UIs |` (a spec's format table) is no credential:
        # the value must look like one (`_is_row_value`).
        redacted = [_redact_cell(cells, i + 1, columns[i][0], False, counts, row_label_first=i == 0)
                    for i in columns if i + 1 < len(cells)]
        if any(redacted):
            lines[index] = _join_cells(cells)
        return index + 1
    row = index + 2
    while row < len(lines) and lines[row].lstrip().startswith("|") and len(lines[row]) <= _MAX_TABLE_LINE:
        row_cells = table_cells(lines[row])
        redacted = [_redact_cell(row_cells, i, *columns[i], counts) for i in columns if i < len(row_cells)]
        if any(redacted):
            lines[row] = _join_cells(row_cells)
        row += 1
    return row


def _is_row_value(value: str) -> bool:
    """A password of a few words beside a first-column label: `| Password | p@ss w0rd |`."""
    words = value.split()
    return 1 < len(words) <= 4 and any(not (c.isalpha() or c.isspace()) for c in value) and value[-1] not in ".!?"


def _is_secret_value(value: str, kind: str, exact: bool) -> bool:
    """Whether a cell under (or beside) a credential label holds the credential."""
    if not value or value.startswith(PLACEHOLDER_PREFIX) or is_template_value(value):
        return False
    if value.lower() in NOT_A_PASSWORD or _credential_column(value) is not None:
        return False  # "none", or another label (a second header-like row)
    if exact:
        return True
    unquoted = value.strip("`\"'")
    if kind == "password":
        quoted = unquoted != value
        return bool(unquoted) and (quoted or len(value.split()) == 1) and not is_code_expression(unquoted)
    return looks_machine_made(unquoted)


def _redact_cell(cells: list[str], column: int, kind: str, exact: bool, counts: Counter[str], *,
                 row_label_first: bool = False) -> bool:
    """Replace one cell that holds a credential."""
    value = cells[column].strip()
    if not _is_secret_value(value, kind, exact):
        if not (row_label_first and kind == "password" and _is_secret_value(value, kind, True) and _is_row_value(value)):
            return False
    counts[kind] += 1
    cells[column] = f" {placeholder(kind)} "
    return True

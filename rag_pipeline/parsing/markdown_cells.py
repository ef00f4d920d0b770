"""The cells of a GitHub-flavoured Markdown table row: the parsers write tables in this form and
the cleaner reads them back (password columns), so both split rows the same way."""

from __future__ import annotations

import re

_UNESCAPED_PIPE = re.compile(r"(?<!\\)\|")


def table_cells(line: str) -> list[str]:
    """Cells of a table row, keeping escaped pipes inside cells; outer pipes are optional."""
    inner = line.strip()
    inner = inner[1:] if inner.startswith("|") else inner
    inner = inner[:-1] if inner.endswith("|") and not inner.endswith("\\|") else inner
    return _UNESCAPED_PIPE.split(inner)

"""Tables as the UI shows them in asset metadata (Markdown), for every step and source page."""

from __future__ import annotations

from typing import Any

import dagster as dg


def md_table(header: tuple[str, ...], rows: list[tuple[Any, ...]]) -> dg.MetadataValue:
    """A Markdown table; a cell's '|' and line breaks are escaped so one file name or error
    message cannot break the table's layout."""

    def cell(value: Any) -> str:
        return str(value).replace("|", "\\|").replace("\n", " ")

    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in rows]
    return dg.MetadataValue.md("\n".join(lines))

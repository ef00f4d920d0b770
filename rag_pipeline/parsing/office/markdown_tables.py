"""Markdown pre-processing so that python-markdown recognises the tables GitHub renders."""

from __future__ import annotations

import re

from rag_pipeline.parsing.markdown_cells import table_cells

_MD_DELIMITER_RE = re.compile(r"^\s*\|?\s*:?-+:?\s*(?:\|\s*:?-+:?\s*)*\|?\s*$")
_MD_FENCE_RE = re.compile(r"^\s{0,3}(```|~~~)")


def normalize_md_table_delimiters(text: str) -> str:
    """python-markdown drops a table to a paragraph when the delimiter row's cell count or outer
    pipes differ from the header's (e.g. `a | b` over `---|---|`), which GitHub renders fine and
    real specs contain. Rewrite such delimiter rows to match their header row."""
    lines = text.split("\n")
    in_fence = False
    for i, line in enumerate(lines):
        if _MD_FENCE_RE.match(line):
            in_fence = not in_fence
            continue
        if in_fence or i == 0 or "|" not in line or "|" not in lines[i - 1] or not _MD_DELIMITER_RE.match(line):
            continue  # a bare "---" under a line is a setext heading or a rule, not a table
        header = lines[i - 1].strip()
        width = len(table_cells(header))
        aligns = [c.strip() or "---" for c in table_cells(line)][:width]
        aligns += ["---"] * (width - len(aligns))
        row = " | ".join(aligns)
        lines[i] = f"| {row} |" if header.startswith("|") else row
    return "\n".join(lines)

"""Markdown pre-processing so that python-markdown reads what GitHub renders: its tables, and
headings that end in '#' ("C#", "F#")."""

from __future__ import annotations

import re

from rag_pipeline.parsing.markdown_cells import table_cells
from rag_pipeline.parsing.markdown_openers import openers_escaped

_MD_DELIMITER_RE = re.compile(r"^\s*\|?\s*:?-+:?\s*(?:\|\s*:?-+:?\s*)*\|?\s*$")
_MD_FENCE_RE = re.compile(r"^\s{0,3}(```|~~~)")
# An ATX heading whose last word ends in '#': CommonMark (and GitHub) keep those hashes, a closing
# sequence needs a space before it; python-markdown strips them ("# C#" became "C").
_MD_HEADING_HASHES_RE = re.compile(r"^(\s{0,3}#{1,6}[ \t]+.*[^\s#\\])(#+)([ \t]*)$")


def normalize_markdown(text: str) -> str:
    """What both Markdown paths (direct and unstructured) parse: tables and heading hashes
    repaired, fenced code untouched, and in a hostile text the openers python-markdown would
    read to the end escaped (markdown_openers.py)."""
    return openers_escaped(normalize_md_table_delimiters(_keep_heading_hashes(text)))


def _keep_heading_hashes(text: str) -> str:
    if "#" not in text:
        return text
    lines = text.split("\n")
    in_fence = False
    for i, line in enumerate(lines):
        if _MD_FENCE_RE.match(line):
            in_fence = not in_fence
            continue
        match = None if in_fence else _MD_HEADING_HASHES_RE.match(line)
        if match:
            lines[i] = match.group(1) + "\\#" * len(match.group(2)) + match.group(3)
    return "\n".join(lines)


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

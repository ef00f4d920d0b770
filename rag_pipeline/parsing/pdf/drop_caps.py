"""Drop caps: a paragraph's first letter set large beside its first lines ("T" + "he company
was founded ...") read as the word it begins ("The company was founded ...").

PyMuPDF reads the large letter as a line of its own, often a block of its own: the paragraph then
starts with a broken word ("he") that full-text search and the model cannot match, and the
letter, being the largest text on the page, can even be taken for a heading and name a section
"T". A drop cap is told by its shape: one or two characters, at least MIN_RATIO times the size of
the text to its right, whose first line starts within the letter's height and just right of it.
The letter is put back before that line's text: joined to it when the line starts in lower case
("he") or in small capitals ("HE COMPANY"), with a space otherwise ("A" + "Company history").
"""

from __future__ import annotations

from dataclasses import replace

from rag_pipeline.parsing.pdf.model import Line

MIN_RATIO = 1.8  # a drop cap is at least this many times the size of the text it begins
REACH = 1.0  # of the letter's size: how far right of it the text may start
OVERLAP = 0.2  # of the letter's size: how far into its advance box it may start (the glyph's side bearing)


def attach_drop_caps(blocks: list[list[Line]]) -> list[list[Line]]:
    """The page's blocks of rows with each drop cap joined to the first row it begins (module
    docstring); everything else as it was."""
    caps = [(b, i) for b, rows in enumerate(blocks) for i, row in enumerate(rows) if _is_cap_shape(row)]
    if not caps:
        return blocks
    out = [list(rows) for rows in blocks]
    gone: set[tuple[int, int]] = set()
    for b, i in caps:
        cap = blocks[b][i]
        target = _first_line_beside(cap, blocks, gone | {(b, i)})
        if target is None:
            continue
        tb, ti = target
        row = out[tb][ti]
        out[tb][ti] = replace(row, text=_joined(cap.text, row.text), bbox=(cap.bbox[0], min(cap.bbox[1], row.bbox[1]),
                                                                           row.bbox[2], row.bbox[3]))
        gone.add((b, i))
    return [[row for i, row in enumerate(rows) if (b, i) not in gone] for b, rows in enumerate(out)
            if any((b, i) not in gone for i in range(len(rows)))]


def _is_cap_shape(row: Line) -> bool:
    letters = row.text.strip().strip("\"'“‘„«")
    return row.horizontal and 1 <= len(letters) <= 2 and letters[-1].isalpha() and letters[-1].isupper()


def _first_line_beside(cap: Line, blocks: list[list[Line]], skip: set[tuple[int, int]]) -> tuple[int, int] | None:
    """The topmost row that starts just right of the cap, within its height, in smaller type."""
    x0, top, x1, bottom = cap.bbox
    found = None
    for b, rows in enumerate(blocks):
        for i, row in enumerate(rows):
            if (b, i) in skip or not row.horizontal or row.size * MIN_RATIO > cap.size:
                continue
            centre = (row.bbox[1] + row.bbox[3]) / 2
            if not (top <= centre <= bottom and x1 - OVERLAP * cap.size <= row.bbox[0] <= x1 + REACH * cap.size):
                continue
            if not row.text[:1].isalpha():
                continue
            if found is None or row.bbox[1] < blocks[found[0]][found[1]].bbox[1]:
                found = (b, i)
    return found


def _joined(cap: str, text: str) -> str:
    first = text.split(" ", 1)[0]
    whole_word = text[:1].isupper() and not (first.isalpha() and first.isupper() and len(first) > 1)
    return cap.strip() + (" " if whole_word else "") + text

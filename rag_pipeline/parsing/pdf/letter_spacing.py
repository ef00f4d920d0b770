"""Letter-spaced lines read as the words a reader sees: "EXECUTIVE SUMMARY", not
"E X E C U T I V E S U M M A R Y".

Designed documents space out the letters of headings and labels (a PDF's character spacing, Tc).
PyMuPDF then puts a space between every two letters and the word boundaries are lost: the
heading is no word that full-text search, the model or a section path can match. PyMuPDF marks
the spaces it inserts for a gap as synthetic, so a line whose text is mostly single letters
between spaces is rebuilt from its characters (its rawdict of the same text page, asked only for
pages that hold such a line): the spaces the PDF wrote stay, the synthetic ones go unless the
gap is a word's ("S U M M A R Y" set letter by letter with no space glyph: a gap WORD_GAP of the
font size wider than the line's usual one) or too wide for letter spacing (MAX_TRACKING: table
cells or spread labels, left as they are). "A B C D" written with real spaces is not touched.
"""

from __future__ import annotations

import re
from statistics import median

import pymupdf

SPACED_RUN = re.compile(r"(?<!\S)(?:\w ){2,}\w(?!\S)")  # three or more single letters between single spaces
MIN_SHARE = 0.8  # of a line's non-space characters inside spaced runs: a letter-spaced line
WORD_GAP = 0.15  # of the font size beyond the line's usual letter gap: a word boundary (a space is 0.25-0.3)
MAX_TRACKING = 0.6  # of the font size: a wider synthetic gap is no letter spacing (tracking is 0.05-0.5)


def spaced_lines(text_dict: dict) -> list[tuple[int, int]]:
    """(block, line) indices of the horizontal lines of a PyMuPDF text dict that read letter-spaced."""
    found = []
    for b, block in enumerate(text_dict["blocks"]):
        for i, line in enumerate(block.get("lines", ())):
            if abs(line["dir"][1]) < 0.1 and line["dir"][0] > 0 and _letter_spaced("".join(s["text"] for s in line["spans"])):
                found.append((b, i))
    return found


def _letter_spaced(text: str) -> bool:
    letters = sum(not ch.isspace() for ch in text)
    if letters < 3:
        return False
    spaced = sum(sum(not ch.isspace() for ch in m.group()) for m in SPACED_RUN.finditer(text))
    return spaced >= MIN_SHARE * letters


def respace(page: pymupdf.Page, textpage: pymupdf.TextPage, text_dict: dict, flags: int) -> int:
    """Rewrite the letter-spaced lines of `text_dict` (read from `textpage`) in place, word
    boundaries from the characters' gaps; returns how many lines were rewritten."""
    where = spaced_lines(text_dict)
    if not where:
        return 0
    raw = page.get_text("rawdict", flags=flags, textpage=textpage)
    for b, i in where:
        raw_line = raw["blocks"][b]["lines"][i]
        line = text_dict["blocks"][b]["lines"][i]
        if len(raw_line["spans"]) != len(line["spans"]):
            continue  # not the same line after all: leave it as PyMuPDF read it
        texts = _words(raw_line["spans"])
        if texts is not None:
            for span, text in zip(line["spans"], texts):
                span["text"] = text
    return len(where)


def _words(spans: list[dict]) -> list[str] | None:
    """Each span's text without the synthetic spaces of letter spacing (module docstring); None
    when the line holds no synthetic space (its spaces are the PDF's own: nothing to rewrite)."""
    size = median(span["size"] for span in spans) or 1.0
    synthetic = [c["bbox"][2] - c["bbox"][0] for span in spans for c in span["chars"]
                 if c["c"].isspace() and c.get("synthetic")]
    if not synthetic:
        return None
    bar = min(median(synthetic) + WORD_GAP * size, MAX_TRACKING * size)
    texts = []
    for span in spans:
        kept = [c["c"] if not c["c"].isspace() else " "
                for c in span["chars"]
                if not (c["c"].isspace() and c.get("synthetic") and c["bbox"][2] - c["bbox"][0] <= bar)]
        texts.append("".join(kept))
    return texts

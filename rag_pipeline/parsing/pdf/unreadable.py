"""Text a PDF font maps to no readable characters.

A font embedded with its own glyph codes and no Unicode map gives PyMuPDF codes only; read
through a standard encoding they come out as a string of Latin-1 accents and symbols
("]üìÜüéê •ìê °ê£ë†£ûÜüéê †ë ∞†¶£" on page 3 of the corpus' IBM Redbook, a sidebar
set in such a font). Indexed, that is noise no question matches. Worse, a citation can point at
it. Real text in any Latin-script language keeps such characters to a small share of its
letters (French about 15 %, Icelandic about 12 %, German 30 % at the most in a short span), so a font
whose text on a page is mostly made of them is unreadable there. Its spans are left out, and the
document's warnings say which font on which page and what to do.
"""

from __future__ import annotations

import re
from collections import Counter

# The characters a standard single-byte encoding shows for unmapped codes: the upper half of
# Latin-1 and Mac Roman's symbols
_MAPPED_ODDLY = re.compile(
    "[\u00a1-\u00ff\u2020-\u2022\u2030\u2039\u203a\u221e\u2260\u2264\u2265\u2211\u220f\u03c0\u222b\u2126\u0192"
    "\u02c6\u02dc\ufffd]"
)
MIN_CHARS = 24  # a font's text on a page shorter than this says too little to judge
MIN_SHARE = 0.6  # of its characters (whitespace aside) that must be such characters


def unreadable_fonts(text_dict: dict) -> dict[str, int]:
    """Fonts of the page whose text is unreadable, with the characters each holds there."""
    total: Counter = Counter()
    odd: Counter = Counter()
    for span in _spans(text_dict):
        text = "".join(span["text"].split())
        total[span["font"]] += len(text)
        odd[span["font"]] += len(_MAPPED_ODDLY.findall(text))
    return {font: n for font, n in total.items() if n >= MIN_CHARS and odd[font] / n >= MIN_SHARE}


def without_fonts(text_dict: dict, fonts: set[str]) -> None:
    """The spans set in `fonts` taken out of the page's text dictionary (in place)."""
    for block in text_dict["blocks"]:
        if block["type"] == 0:
            for line in block["lines"]:
                line["spans"] = [s for s in line["spans"] if s["font"] not in fonts]


def warning(page: int, fonts: dict[str, int]) -> str:
    names = ", ".join(repr(name[:60]) for name in sorted(fonts))
    return (f"page {page}: {sum(fonts.values()):,} characters set in {names} map to no readable text (the "
            "PDF gives the font no Unicode map) and were left out; OCR the file to index them")


def _spans(text_dict: dict):  # noqa: ANN202 -- PyMuPDF span dicts
    for block in text_dict["blocks"]:
        if block["type"] == 0:
            for line in block["lines"]:
                yield from line["spans"]

"""Text rules every stage shares: how text is pulled out of PyMuPDF, how the rows of a paragraph
join back into one string, how two texts are compared, and the line patterns (bullets, section
numbers) that layout, heading and element code all test. Kept in one place so those stages can
never disagree about, say, what counts as a bullet.
"""

from __future__ import annotations

import re
import unicodedata

import pymupdf

# Ligatures are expanded ("ﬁ" -> "fi") because search queries never contain them; images are
# left out of the text dictionary because decoding them costs up to a second per scanned page.
TEXT_FLAGS = pymupdf.TEXT_PRESERVE_WHITESPACE | pymupdf.TEXT_MEDIABOX_CLIP
# A bullet glyph (including the private-use codes of Symbol/Wingdings bullets), or a dash or
# asterisk followed by a space.
BULLET_RE = re.compile(r"^[\u2022\u2023\u25e6\u2043\u2219\u25aa\u25ab\u25cf\u25cb\u25a0\u25a1\u27a2\u25b8\u25ba\u2713\u2714\uf0b7\uf0a7\uf0d8\uf076\uf0fc]\s*|^[-\u2013\u2014*]\s+")
# Bullets of the Symbol and Wingdings fonts, which PDFs often map to their private-use codes: as
# the glyphs a reader sees (a cell of NIST CSF 1.0's reference tables read "\uf0b7 COBIT 5")
SYMBOL_FONT_BULLETS = str.maketrans({"\uf0b7": "\u2022", "\uf0a7": "\u25aa", "\uf0d8": "\u27a2", "\uf076": "\u2756",
                                     "\uf0fc": "\u2713"})
# A leading section number: "2", "2.3.59", "A.1", "2.3.59-1".
SECTION_NO_RE = re.compile(r"^\s*((?:\d+|[A-Z])(?:[.\-]\d+)*)\.?(?=\s|$)")


def norm_key(text: str) -> str:
    """Comparison key: case-, accent-width- and whitespace-insensitive, letters and digits only."""
    text = unicodedata.normalize("NFKC", text).casefold()
    return "".join(ch for ch in text if ch.isalnum())


def join_lines(texts: list[str]) -> str:
    """Join the rows of a paragraph with spaces, undoing end-of-line hyphenation
    ("infor-" + "mation" -> "information") but keeping real hyphens ("Lucene-" + "BM25",
    "state-of-the-" + "art")."""
    out = ""
    for text in texts:
        if not out:
            out = text
        elif out.endswith("\xad"):
            out = out[:-1] + text
        elif _is_hyphen_break(out, text):
            out = out[:-1] + text
        elif out[-1] in "-\u2010" and out[-2:-1].isalpha():  # a real hyphen at the line end
            out = out + text
        else:
            out = out + " " + text
    return out.replace("\xad", "")


def _is_hyphen_break(before: str, after: str) -> bool:
    """True when `before` ends in a hyphen that only splits a word over two lines."""
    if len(before) < 3 or before[-1] not in "-\u2010" or not before[-2].isalpha():
        return False
    if not after[:1].islower():
        return False
    last_word = before.rsplit(" ", 1)[-1]
    return last_word.count("-") == 1  # "state-of-the-" is a compound, keep its hyphen

"""Signs that legacy fonts draw at an ASCII code, read as the sign the page shows.

The Indian rupee sign entered Unicode in 2010; before that, and in many templates still, Indian
annual reports, filings and invoices draw it with the free "Rupee Foradian" font (and fonts
named after it), which puts the rupee glyph at the backtick. The page shows "₹17,81,841 crore";
the text layer says "`17,81,841 crore", so an amount lost its currency to the figure rules of
the citation checker and to every reader of a chunk. A span in such a font is read with the
sign it draws; on a page that uses one, table cells (read from words, which carry no font) are
read the same way. Matched by font name, so a backtick in any other font (a code sample) stays.
"""

from __future__ import annotations

import re

# (font name pattern, what its ASCII codes draw)
LEGACY_FONTS = ((re.compile(r"rupee", re.IGNORECASE), str.maketrans({"`": "\u20b9"})),)


def read_as_drawn(text_dict: dict) -> dict[int, str] | None:
    """Rewrite, in place, the text of spans in a legacy font to the signs it draws; the
    translation the page's other readings of the same text need (None: no such font here)."""
    used: dict[int, str] = {}
    for block in text_dict.get("blocks", []):
        for line in block.get("lines", []):
            for span in line.get("spans", []):
                table = _table_for(span.get("font") or "")
                if table is not None and span.get("text"):
                    span["text"] = span["text"].translate(table)
                    used.update(table)
    return used or None


def _table_for(font: str) -> dict[int, str] | None:
    return next((table for pattern, table in LEGACY_FONTS if pattern.search(font)), None)

"""The character fold label rules match on: NFKC compatibility forms plus a confusables fold.

A secret's label must be found however it is typed: full-width (`ｐａｓｓｗｏｒｄ：`), in
mathematical letters (`𝐩𝐚𝐬𝐬𝐰𝐨𝐫𝐝`), or with Cyrillic and Greek letters that look Latin
(`раssword` with Cyrillic р and а). The fold maps each such character to the one it imitates,
one character to one character only, so offsets in the folded text are offsets in the original
and a span found there replaces the right characters. Characters whose NFKC form is longer
(`ﬀ`, `…`) are left alone. The homoglyph list is the project's own: the Cyrillic, Greek and
Armenian letters that render like Latin ones in common fonts (after Unicode's confusables data,
restricted to single letters that fold to ASCII).
"""

from __future__ import annotations

import functools
import unicodedata

# Homoglyphs of Latin letters (lower and upper case: the fold lower-cases afterwards).
_HOMOGLYPHS = {
    # Cyrillic
    "а": "a", "в": "b", "е": "e", "к": "k", "м": "m", "н": "h", "о": "o", "р": "p", "с": "c",
    "т": "t", "у": "y", "х": "x", "ѕ": "s", "і": "i", "ј": "j", "һ": "h", "ԁ": "d", "ԛ": "q",
    "ԝ": "w", "ӏ": "l", "ё": "e", "ї": "i",
    "А": "A", "В": "B", "Е": "E", "К": "K", "М": "M", "Н": "H", "О": "O", "Р": "P", "С": "C",
    "Т": "T", "У": "Y", "Х": "X", "Ѕ": "S", "І": "I", "Ј": "J", "Һ": "H", "Ԁ": "D", "Ԛ": "Q",
    "Ԝ": "W", "Ӏ": "I",
    # Greek
    "α": "a", "ε": "e", "ι": "i", "κ": "k", "ν": "v", "ο": "o", "ρ": "p", "τ": "t", "υ": "u",
    "χ": "x", "ω": "w",
    "Α": "A", "Β": "B", "Ε": "E", "Ζ": "Z", "Η": "H", "Ι": "I", "Κ": "K", "Μ": "M", "Ν": "N",
    "Ο": "O", "Ρ": "P", "Τ": "T", "Υ": "Y", "Χ": "X",
    # Armenian, Latin look-alikes
    "օ": "o", "ս": "u", "հ": "h", "ı": "i", "ȷ": "j", "ɡ": "g", "ɑ": "a", "ʀ": "R",
}  # fmt: skip

# Where compatibility forms of letters, digits, spaces and punctuation live: everything but
# surrogates and the private-use area (the cleaner's element boundaries must stay as they are).
_RANGES = ((0x80, 0xD800), (0xF900, 0x10000), (0x1D400, 0x1D800), (0x1F100, 0x1F200))


@functools.cache
def fold_table() -> dict[int, str]:
    """`str.translate` table: each character to the single character it stands for."""
    table: dict[int, str] = {}
    for low, high in _RANGES:
        for code in range(low, high):
            char = chr(code)
            folded = unicodedata.normalize("NFKC", char)
            if len(folded) != 1:
                continue
            folded = _HOMOGLYPHS.get(folded, folded)
            if folded != char:
                table[code] = folded
    return table

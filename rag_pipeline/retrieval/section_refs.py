"""The numbered parts of a document a question names: "§ 12", "section 7.2.1", "Art. 12",
"Item 1A", "clause 7.2", "Note 5", "čl. 12", "Abschnitt 3", "Artikel 5", "article 12".

A question that names a part means that part, not merely its words: the search's structural
branch (store/search_sections.py) fetches the chunks whose section path holds it, and the rerank
stage puts them first. A reference becomes the key its heading has in the index ("s:7.2.1",
"a:12", "i:1a"; migration 022's rag_section_parts parses headings the same way, and a test
holds the two to the same cases). Families, in every language of the corpus: s = section (§,
section, clause, Abschnitt, Paragraph, oddíl, and a bare number of three or more parts such as
"7.2.1"), a = article (article, Art., Artikel, článek, čl.), i = item, n = note, p = part,
c = chapter.

What is never a reference: a number without a keyword ("in 2019", "EUR 165", "3.5 million"),
save a bare dotted number of three parts or more with at most three digits in each (dates like
1.1.2025 are not one; an exhibit number such as 2.3.59-12 is one) that does not follow "version", "v" or "release"; a keyword without a number ("§" alone); a number longer than four digits;
digits other than ASCII 0-9 after NFKC (fullwidth "１２" is 12, Arabic-Indic digits are not
read). "odst. 2" (a subsection of a §) qualifies the § before it and is no reference of its own.
At most MAX_REFS references are read from one question: a list of 500 numbers is not a question
about 500 parts.
"""

from __future__ import annotations

import re
import unicodedata

MAX_REFS = 8

# keyword (folded: lower case, no accents) -> family; "§§", plurals and abbreviations included
_FAMILIES = {
    "§": "s", "§§": "s", "section": "s", "sections": "s", "sec.": "s", "secs.": "s", "clause": "s", "clauses": "s",
    "abschnitt": "s", "abschnitte": "s", "paragraph": "s", "paragraf": "s", "paragrafu": "s", "oddil": "s",
    "oddilu": "s", "article": "a", "articles": "a", "art.": "a", "arts.": "a", "artikel": "a", "clanek": "a",
    "clanku": "a", "cl.": "a", "item": "i", "items": "i", "note": "n", "notes": "n", "part": "p", "parts": "p",
    "teil": "p", "partie": "p", "cast": "p", "casti": "p", "chapter": "c", "chapters": "c", "kapitel": "c",
    "chapitre": "c", "hlava": "c", "hlavy": "c",
}
_KEYWORD = "|".join(sorted((re.escape(k) for k in _FAMILIES), key=len, reverse=True))
_NUMBER = r"[0-9]{1,4}(?:\.[0-9]{1,3}){0,4}[a-z]?(?![0-9a-z])|[ivxlc]{1,7}(?![0-9a-z])"
# a keyword, then one number or a list of them ("§§ 12 a 13", "sections 7.1, 7.2 and 7.4")
_REFERENCE = re.compile(
    rf"(?<![\w.])({_KEYWORD})(?![a-z])\s*((?:{_NUMBER})(?:\s*(?:,|and|und|et|a|or|oder|ou|nebo|-|–)\s*(?:{_NUMBER}))*)")
_ONE_NUMBER = re.compile(_NUMBER)
_BARE = re.compile(r"(?<![\w.])([0-9]{1,2}(?:\.[0-9]{1,3}){2,4}(?:-[0-9]{1,3}(?![0-9]))?)(?![\w.]|\.[0-9])")
VERSION_REACH = 64  # characters before a bare number where "version" is looked for: the word and its spacing
# (searching the whole text before each number made a 2,000-character query of numbers quadratic)
_VERSION_WORD = re.compile(r"(?<![a-z])(?:version|versions|release|rev\.?|v|ver\.?|verze|fassung)\s*$")


def fold(text: str) -> str:
    """NFKC (fullwidth digits become ASCII), lower case, accents removed."""
    decomposed = unicodedata.normalize("NFKD", unicodedata.normalize("NFKC", text).casefold())
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch))


def reference_keys(question: str) -> list[str]:
    """The index keys of the parts `question` names, in the order named, at most MAX_REFS."""
    text = fold(question)
    found: list[tuple[int, str]] = []
    read: list[tuple[int, int]] = []  # spans of the numbers keywords read: never read again as bare
    for match in _REFERENCE.finditer(text):
        family = _FAMILIES[match.group(1)]
        read.append(match.span(2))
        for number in _ONE_NUMBER.finditer(match.group(2)):
            value = _normal(number.group(0))
            if value[0].isdigit() or family != "s":  # "§ ii" is a word after a sign, not a section
                found.append((match.start(2) + number.start(), f"{family}:{value}"))
    for match in _BARE.finditer(text):
        number = _normal(match.group(1))
        if (number.count(".") >= 2 and not any(a <= match.start() < b for a, b in read)  # "1.0.0" is a version
                and not _VERSION_WORD.search(text, max(0, match.start() - VERSION_REACH), match.start())):
            found.append((match.start(), f"s:{number}"))
    keys: list[str] = []
    for _, key in sorted(found):
        if key not in keys:
            keys.append(key)
    return keys[:MAX_REFS]


def _normal(number: str) -> str:
    """"4.0" is section 4, as rag_section_parts reads a heading "4.0 Self-Assessing"."""
    return re.sub(r"(\.0)+$", "", number) if "." in number else number

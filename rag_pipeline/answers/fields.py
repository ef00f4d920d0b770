"""Exact fields of a claim: the numbers, amounts, percentages, dates, durations and identifiers
a cited passage must state for the claim to stand on it.

A support score (similarity and term coverage) cannot tell "EUR 165 a night" from "EUR 195 a
night": both sentences mean nearly the same to a sentence model and share every word but one.
That adjacent-figure citation is the commonest wrong citation, so figures are checked by rule
before any score: every field of the claim must occur in the cited text, after both sides are
normalised the same way, so that writing differs without the fact differing:

- numbers are read in the canonical form of figures.py (`prepare`, `value`): number words as
  digits ("ten working days" = "10 working days"; "one" only before a unit), Unicode digits as
  ASCII, separators gone in English, continental, Indian and space grouping ("19,984,378" =
  "1.500.000" style = "2,32,822" = "1 500 000" as values), decimals compared as values ("0.30" =
  "0.3"), multipliers folded in ("1.5 million" = "1,5 Mio." = "1500000"), percent words as "%";
- an amount is its value and currency whichever side the currency stands on ("EUR 165" =
  "165 EUR" = "€165"); a table row "| Berlin | 165 |" under a "(EUR)" header states it too (the
  value as a number, the currency anywhere in the passage);
- dates become ISO ("1 January 2026" = "January 1, 2026" = "2026-01-01"; "November 2021" =
  "2021-11"), month names in English, German, French and Czech ("31. Dezember 2016", "décembre
  2020", "1. ledna 2026"); a year alone is a number;
- durations are value and unit ("30 days", "30-day"); a qualifier the claim gives ("working")
  must be there too; a frequency ("daily", "every week") is its unit, stated in any of its forms
  (frequencies.py);
- identifiers are tokens mixing letters and digits or dotted numbers ("10-K", "2.3.59", "ID.AM-1"),
  and acronyms ("CEO", "MFA", "LIBOR"): a claim naming another office or system is not supported
  by a passage that never names it; an acronym is named by its letters or by the capitalised
  words it abbreviates ("CEO" by "Chief Executive Officer"); where claim and passage are written
  in different scripts (an English claim on a Korean, Russian or Greek passage) a name is written
  in the passage's script ("COVID-19" is "코로나-19"), so there an identifier stands on its digits
  alone (each digit group of "COVID-19" among the passage's numbers) and an acronym without
  digits is left to the support score; in the same script names and acronyms mostly stay
  ("COVID-19", "SQL" and "OLAP" in a French or German passage) and the rule holds;
- a figure the passage holds only in a Markdown table counts only in a row that shares a word
  with the claim, under a column whose header does too: "Berlin ... EUR 135" is not stated by a
  rate table where 135 is Hamburg's figure, nor "meals ... 140" by the hotel-cap column. A cell
  of prose (PROSE_CELL_WORDS words or more: "This field MUST be enclosed in quotation marks (for
  example, "200")") states its figures as a sentence does, in a row sharing a word with the claim.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

from rag_pipeline.answers import frequencies, rounding
from rag_pipeline.answers.equivalents import NUMERIC_ORDINAL, durations, initialisms, passage_values, quarters, slash_dates
from rag_pipeline.answers.figures import CUR, NUM, arabic_numerals, ascii_digits, normalise, prepare, value, words_to_digits

KINDS = ("date", "amount", "percentage", "duration", "frequency", "identifier", "number")
SCRIPT_SAMPLE = 2000  # characters of a passage whose letters say its script

# Month names by number: English (and its abbreviations), German, French and Czech (nominative
# and the genitive a Czech date uses, "1. ledna 2026"): the corpus's passages write dates in their
# own language while an answer often restates them in English.
_MONTH_NAMES = {name: number for number, names in enumerate((
    "january jan januar jänner janvier leden ledna",
    "february feb februar février únor února",
    "march mar märz mars březen března",
    "april apr avril duben dubna",
    "may mai květen května",
    "june jun juni juin červen června",
    "july jul juli juillet červenec července",
    "august aug août srpen srpna",
    "september sep sept septembre září",
    "october oct oktober octobre říjen října",
    "november nov novembre listopad listopadu",
    "december dec dezember décembre prosinec prosince",
), 1) for name in names.split()}
_MONTH = ("(?P<{n}>" + "|".join(sorted(_MONTH_NAMES, key=len, reverse=True)) + r")\.?")
_DAY_SUFFIX = r"(?:st|nd|rd|th|er|\.)?"  # 1st, 1er, and the German and Czech "1."
_NUM = NUM
_CURRENCIES = {"eur": "EUR", "€": "EUR", "euro": "EUR", "euros": "EUR", "usd": "USD", "$": "USD", "dollar": "USD",
               "dollars": "USD", "us$": "USD", "gbp": "GBP", "£": "GBP", "chf": "CHF", "czk": "CZK", "kč": "CZK",
               "jpy": "JPY", "¥": "JPY", "₹": "INR", "inr": "INR", "rupee": "INR", "rupees": "INR", "sek": "SEK", "nok": "NOK", "dkk": "DKK", "pln": "PLN"}
_CUR = CUR
_MULT = r"(?:\s?(?P<mult>million|billion|thousand|bn|m|k)\b)?"

# Duration units as the corpus' languages write them after a number, each to its English unit:
# a German, French or Czech passage states "3 Monate", "3 mois", "3 měsíce" where an English answer
# restates "3 months". Left out where the form is also a common word after a number in English
# text ("an", "den"); the Czech "let" (genitive plural of "rok", "až 5 let") is kept: after a
# number it is the years of a penalty far more often than the English verb.
_UNIT_WORDS = {
    "second": "second seconds sekunde sekunden seconde secondes sekunda sekundy sekund",
    "minute": "minute minutes minuten minuta minuty minut",
    "hour": "hour hours stunde stunden heure heures hodina hodiny hodin",
    "day": "day days tag tage tagen jour jours dny dnů dní dnech dnu",
    "week": "week weeks woche wochen semaine semaines týden týdny týdnů týdne týdnech",
    "month": "month months monat monate monaten mois měsíc měsíce měsíců měsících měsíci",
    "year": "year years jahr jahre jahren ans année années rok roky roků let letech",
    "working day": "werktag werktage werktagen arbeitstag arbeitstage arbeitstagen",
}
_UNITS = {form: unit for unit, forms in _UNIT_WORDS.items() for form in forms.split()}
_UNIT = "|".join(sorted(_UNITS, key=len, reverse=True))
# "working" before the unit, in English and Czech ("10 pracovních dnů"); the French put it after
# ("10 jours ouvrables", group q2)
_QUALIFIERS = {"working": "working", "business": "working", "calendar": "calendar", "pracovní": "working",
               "pracovních": "working", "kalendářní": "calendar", "kalendářních": "calendar"}
_QUALIFIER = "|".join(sorted(_QUALIFIERS, key=len, reverse=True))

_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("date", re.compile(r"\b(?P<y>\d{4})-(?P<m>\d{1,2})-(?P<d>\d{1,2})\b")),
    ("date", re.compile(r"\b(?P<d>\d{1,2})" + _DAY_SUFFIX + r"\s+(?:of\s+)?" + _MONTH.format(n="mon") + r",?\s+(?P<y>\d{4})\b")),
    ("date", re.compile(r"\b" + _MONTH.format(n="mon") + r"\s+(?P<d>\d{1,2})(?:st|nd|rd|th)?[,.]?\s+(?P<y>\d{4})\b")),  # OCR: "Jan. 23. 2017"
    ("date", re.compile(r"\b(?P<d>\d{1,2})\.\s?(?P<m>\d{1,2})\.\s?(?P<y>\d{4})\b")),
    ("date", re.compile(r"\b" + _MONTH.format(n="mon") + r",?\s+(?:[-–]\s+|of\s+)?(?P<y>\d{4})\b")),  # "January of 2015", "November - 2015"
    ("amount", re.compile(rf"(?P<cur>{_CUR})\s?(?P<num>{_NUM}){_MULT}")),
    ("amount", re.compile(rf"(?<![\w.,])(?P<num>{_NUM}){_MULT}\s?(?P<cur>{_CUR})")),
    ("percentage", re.compile(rf"(?<![\w.,])(?P<num>{_NUM})\s?(?:%|percent\b|per\s+cent\b)")),
    ("duration", re.compile(rf"(?<![\w.,])(?P<num>{_NUM})(?:\s+|-)(?:(?P<q>{_QUALIFIER})\s?)?(?P<unit>{_UNIT})"
                            r"(?:\s(?P<q2>ouvrables?|ouvrés?|calendaires?))?(?!\w)(?![-\s]olds?\b)")),  # "15-year-olds": an age
    # starts only where a token starts (not after "-" or "/" inside one), so the look-aheads scan
    # each token once: "1-1-1-..." of 4,000 characters took 0.2 s when every "1" was a start
    # an ordinal ("2nd") is a number, not an identifier
    ("identifier", re.compile(r"(?<![\w.\-/])(?!" + NUMERIC_ORDINAL + r"(?![\w.\-/]))"
                              r"(?=[\w.\-/]*\d)(?=[\w.\-/]*[a-z])[a-z0-9]+(?:[.\-/][a-z0-9]+)*(?![\w])"
                              r"|(?<![\w.])\d+(?:\.\d+){2,}(?!\w|\.\d)")),
    ("number", re.compile(rf"(?<![\w.,])(?P<num>{_NUM})(?:st|nd|rd|th)?(?![\w])")),
)


@dataclass(frozen=True)
class Field:
    kind: str  # one of KINDS
    key: str  # the normalised value both sides are compared by
    text: str  # as the claim wrote it
    approximate: bool = False  # a figure the claim rounds ("about 1.5 million"): stated by what rounds to it

    def describe(self) -> str:
        return f"{self.kind} {self.text!r}"


@dataclass(frozen=True)
class Facts:
    """What a passage states, normalised: every field it holds by kind, every numeric value
    anywhere in it, and the currencies it names."""

    keys: frozenset[tuple[str, str]]
    values: frozenset[str]
    currencies: frozenset[str]
    has_percent: bool
    text: str  # the normalised passage
    prose_values: frozenset[str] = frozenset()  # numeric values stated outside Markdown tables
    tables: tuple[tuple[tuple[str, ...], tuple[tuple[str, ...], ...]], ...] = ()  # (header cells, rows)
    initialisms: frozenset[str] = frozenset()  # what its capitalised names abbreviate to ("Chief Executive Officer": ceo)
    latin: bool = True  # written mostly in Latin letters (`latin`): else a claim's names are written otherwise there
    heading: str = ""  # the chunk's section path, normalised: it names what the passage is about
    heading_values: frozenset[str] = frozenset()  # the numbers its heading states ("Form 944 Display (page 2)")


def _key(kind: str, match: re.Match[str]) -> str | None:
    groups = match.groupdict()
    if kind == "date":
        month = _MONTH_NAMES[groups["mon"]] if groups.get("mon") else int(groups["m"])
        year = int(groups["y"])
        if not 1 <= month <= 12:
            return None
        if groups.get("d") is None:
            return f"{year:04d}-{month:02d}"
        day = int(groups["d"])
        return f"{year:04d}-{month:02d}-{day:02d}" if 1 <= day <= 31 else None
    if kind == "identifier":
        return match.group()
    number = value(groups["num"], groups.get("mult"))
    if number is None:
        return None
    if kind == "amount":
        return f"{_CURRENCIES.get(groups['cur'], groups['cur'].upper())} {number}"
    if kind == "duration":
        unit = _UNITS[groups["unit"]]
        after = groups.get("q2") or ""
        qualifier = _QUALIFIERS.get(groups["q"] or "", "") or ("calendar" if after.startswith("calendaire") else "working" if after else "")
        if unit == "working day":  # the German compound "Werktage"
            qualifier, unit = "working", "day"
        return " ".join(part for part in (number, qualifier, unit) if part)
    return number


def extract(text: str) -> list[Field]:
    """The claim's fields, each once, in the order the kinds are tried (a date's day and year are
    not also numbers, an amount's value is not also a number)."""
    prepared = prepare(text)
    taken = [False] * len(prepared)
    found: dict[tuple[str, str], Field] = {}
    for kind, pattern in _PATTERNS:
        for match in pattern.finditer(prepared):
            if any(taken[match.start():match.end()]):
                continue
            key = _key(kind, match)
            if key is None:
                continue
            for i in range(match.start(), match.end()):
                taken[i] = True
            rounded = kind in ("amount", "percentage", "number") and rounding.rounded_at(prepared, match.start())
            found.setdefault((kind, key), Field(kind, key, match.group().strip(), rounded))
    for unit, written in frequencies.stated_by_claim(prepared).items():  # "daily", "every week"
        found.setdefault(("frequency", unit), Field("frequency", unit, written))
    plain = unicodedata.normalize("NFKC", arabic_numerals(text))  # "Class III" is the number 3, no acronym
    for code in re.findall(r"(?<![\w.-])[A-Z]{2,5}(?:\.[A-Z]{2,5})+(?![\w-])", plain):
        found.setdefault(("identifier", code.casefold()), Field("identifier", code.casefold(), code))
    plain = re.sub(r"(?<![\w.-])[A-Z]{2,5}(?:\.[A-Z]{2,5})+(?![\w-])", " ", plain)  # "PR.AC" is one code, not PR and AC
    for acronym in re.findall(r"(?<![\w-])[A-Z][A-Z&]{1,7}(?=s?(?![\w-]))", plain):
        key = acronym.casefold()
        if key not in _CURRENCIES and key.upper() not in _CURRENCIES.values():
            found.setdefault(("identifier", key), Field("identifier", key, acronym))
    return list(found.values())


def canonical(text: str) -> str:
    """The text as figures are compared (figures.prepare), with every date, amount and
    percentage rewritten to its key ("2013-02-12", "EUR 165", "15%"): what the support score
    embeds on both sides, so that a figure written differently does not read as other words."""
    prepared = prepare(text)
    spans: list[tuple[int, int, str]] = []
    taken = [False] * len(prepared)
    for kind, pattern in _PATTERNS:
        if kind not in ("date", "amount", "percentage"):
            continue
        for match in pattern.finditer(prepared):
            if any(taken[match.start():match.end()]) or (key := _key(kind, match)) is None:
                continue
            taken[match.start():match.end()] = [True] * (match.end() - match.start())
            spans.append((match.start(), match.end(), key + "%" if kind == "percentage" else key))
    for start, end, key in sorted(spans, reverse=True):
        prepared = prepared[:start] + key + prepared[end:]
    return prepared


def facts(text: str, heading: str = "", document: str = "") -> Facts:
    """Everything a passage states, by kind, plus each numeric value wherever it stands (inside a
    date or an amount too): a claim's bare number is stated by any of them. The chunk's heading
    (its identity line, section path and document name) states names and bare numbers too: "DPR"
    in a passage under "3 Dense Passage Retriever (DPR)", "944" under "Return Form 944 Display";
    the document's name (`document`) names only ("3.0.3" of openapi_spec_3.0.3.md): the year in
    a filing's name is no figure of each of its passages."""
    prepared = prepare(text)
    keys: set[tuple[str, str]] = set()
    for kind, pattern in _PATTERNS:
        for match in pattern.finditer(prepared):
            key = _key(kind, match)
            if key is not None:
                keys.add((kind, key))
    keys |= {("date", iso) for iso in slash_dates(prepared)}  # what the passage states in other words (equivalents.py)
    keys |= {("identifier", quarter) for quarter in quarters(prepared)}
    keys |= {("frequency", unit) for unit in frequencies.stated_by_passage(prepared)}
    values = {v for m in re.finditer(_NUM, prepared) if (v := value(m.group())) is not None}
    values |= passage_values(prepared)
    values |= {k.split(" ")[1] for kind, k in keys if kind == "amount"}
    values |= {k.split(" ")[0] for kind, k in keys if kind in ("duration", "percentage")}
    for kind, k in keys:
        if kind == "date":
            values.update(str(int(part)) for part in k.split("-"))
    currencies = {_CURRENCIES.get(m.group(), m.group().upper()) for m in re.finditer(_CUR, prepared)}
    prose = "\n".join(line for line in _lines(text) if not line.lstrip().startswith("|"))
    return Facts(frozenset(keys), frozenset(values), frozenset(currencies),
                 "%" in prepared or bool(re.search(r"\bper\s?cent", prepared)), prepared,
                 frozenset(_values(prose)), _tables(text), initialisms(text) | initialisms(heading), latin(text[:SCRIPT_SAMPLE]),
                 normalise(f"{heading} / {document}"), frozenset(_values(prepare(_unnumbered(heading)))))


def _unnumbered(heading: str) -> str:
    """A heading's titles without their section numbers ("2.2 Framework Implementation Tiers",
    "2.3.59-65 Command Code ..."): a section's number is where it stands, not a figure it states
    ("Tier 2" is not stated by section 2.2)."""
    return " / ".join(re.sub(r"^\s*(?:§\s*)?\S*\d\S*\s+", "", part) for part in re.split(r"\s*\n\s*|\s+(?:>|/)\s+", heading))


def _lines(text: str) -> list[str]:
    return words_to_digits(unicodedata.normalize("NFKC", ascii_digits(text)).casefold()).splitlines()


def _values(text: str) -> set[str]:
    """Every numeric value of a text, a date's parts and an amount's value among them."""
    return {v for m in re.finditer(_NUM, text) if (v := value(m.group())) is not None}


def _tables(text: str) -> tuple[tuple[tuple[str, ...], tuple[tuple[str, ...], ...]], ...]:
    """The Markdown tables of a passage as (header cells, body rows), cells normalised."""
    found, block = [], []
    for line in [*_lines(text), ""]:
        if line.lstrip().startswith("|"):
            block.append([" ".join(c.split()) for c in line.strip().strip("|").split("|")])
            continue
        if block:
            rule = next((i for i, cells in enumerate(block) if all(re.fullmatch(r":?-{2,}:?", c) for c in cells if c)), None)
            header = tuple(block[rule - 1]) if rule else ()
            body = tuple(tuple(cells) for i, cells in enumerate(block) if rule is None or i > rule)
            found.append((header, body))
            block = []
    return tuple(found)


_STOP = frozenset("the a an and or of in on at to for by with from per is are was were be up this that its it as not "
                  "no any all each must may can will de der die das le la les et und".split())


def terms(text: str) -> set[str]:
    """Content words of a text, crudely stemmed (lower case, a plural 's' off), figures and
    currencies left out: what ties a claim to a table row or column."""
    words = re.findall(r"[^\W\d_]{2,}", normalise(text))
    return {w[:-1] if len(w) > 3 and w.endswith("s") else w for w in words
            if w not in _STOP and w not in _CURRENCIES}


def stem(word: str) -> str:
    """A word without a plural, past, "-ing" or final "e" ("increased" -> "increas", "specified"
    -> "specify"), four letters kept: inflected forms alike, where `terms` drops only a plural."""
    for ending in ("ing", "ied", "ies", "ed", "es", "s", "e"):
        if word.endswith(ending) and len(word) - len(ending) >= 4:
            return word[:-len(ending)] + ("y" if ending in ("ied", "ies") else "")
    return word


PROSE_CELL_WORDS = 8  # a cell this long is prose ("Description"): its figures stand in its sentences


def _in_table(number: str, passage: Facts, claim_terms: set[str]) -> bool:
    for header, body in passage.tables:
        for cells in body:
            for column, cell in enumerate(cells):
                if number not in _values(cell):
                    continue
                prose = len(cell.split()) >= PROSE_CELL_WORDS
                row_terms = terms(" ".join(c for i, c in enumerate(cells) if i != column or prose))
                head_terms = terms(header[column]) if column < len(header) else set()
                if row_terms & claim_terms and (prose or not header or head_terms & claim_terms):
                    return True
    return False


def stated(field: Field, passage: Facts, claim_terms: set[str] | None = None) -> bool:
    """Whether the passage states the field (by the rules of the module docstring); a figure only
    a table holds needs the claim's terms (`terms(claim)`) to find its row and column; a rounded
    figure, a value that rounds to it (and the currency or per cent sign it names)."""
    if field.kind == "number" and field.key in passage.heading_values:
        return True  # "Form 944", "page 2" said by the section the passage is in
    if field.approximate and rounding.rounds_to(field.key.split(" ")[-1], passage.values):
        return field.kind == "number" or (field.kind == "percentage" and passage.has_percent) or (
            field.kind == "amount" and field.key.split(" ")[0] in passage.currencies)
    if field.kind in ("number", "amount", "percentage") and passage.tables:
        number = field.key.split(" ")[-1]
        if number not in passage.prose_values and not _in_table(number, passage, claim_terms or set()):
            return False
    if (field.kind, field.key) in passage.keys:
        return True
    if field.kind == "date":
        return any(kind == "date" and key.startswith(field.key + "-") for kind, key in passage.keys)
    if field.kind == "amount":
        currency, number = field.key.split(" ")
        return number in passage.values and currency in passage.currencies
    if field.kind == "percentage":
        return field.key in passage.values and passage.has_percent
    if field.kind == "duration":
        number, *qualifier, unit = field.key.split(" ")
        if passage.tables and _in_table(number, passage, claim_terms or set()):
            return True  # "| Team leads | up to 2 |" under "Remote days per week"
        if any(kind == "duration" and key.split(" ")[0] == number and key.split(" ")[-1] == unit
               and (not qualifier or qualifier[0] in key.split(" ")) for kind, key in passage.keys):
            return True
        other = durations(number, unit) if "working" not in qualifier else set()  # equivalents.py
        return any(kind == "duration" and (key.split(" ")[0], key.split(" ")[-1]) in other and "working" not in key
                   for kind, key in passage.keys)
    if field.kind == "identifier":
        before = r"(?<![^\W\d])" if field.key[:1].isalpha() else r"(?<!\w)"  # a footnote mark glued on: "10FAISS configuration"
        return (any(re.search(rf"{before}{re.escape(field.key)}(?![\w])", text) for text in (passage.text, passage.heading))
                or field.key in passage.initialisms)
    return field.key in passage.values


_ROUNDED = ("amount", "percentage", "number")


def missing(claim: str, claim_fields: list[Field], passage: Facts) -> list[Field]:
    """The claim's fields the passage does not state (identifiers as written, or by their digits
    where the passage is written in another script than the claim: module docstring)."""
    claim_terms = terms(claim)
    foreign_script = latin(claim) != passage.latin
    return [f for f in claim_fields if not (stated(f, passage, claim_terms) or (
        foreign_script and f.kind == "identifier" and _stated_by_digits(f, passage)))]


def _stated_by_digits(field: Field, passage: Facts) -> bool:
    """An identifier on a passage in another script: stated when each of its digit groups is a
    number the passage holds (an acronym without digits always is)."""
    return all(value(group) in passage.values for group in re.findall(r"\d+", field.key))


def latin(text: str) -> bool:
    """Whether a text is written mostly in Latin letters (one without letters counts as Latin)."""
    letters = [ch for ch in text if ch.isalpha()]
    if not letters:
        return True
    latin = sum(ch.isascii() or unicodedata.name(ch, "").startswith("LATIN") for ch in letters)
    return latin * 2 >= len(letters)

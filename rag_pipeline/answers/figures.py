"""Figures written in one canonical form, so that a claim and a passage that write the same
number, percentage or multiplier differently compare equal: the exact-field rule (fields.py),
the figure-role check (roles.py) and the support score (support.py) all read text through
`prepare`.

What `prepare` does, in order, and why:

- any Unicode decimal digit becomes its ASCII digit ("٣" -> "3"; NFKC alone leaves Arabic-Indic
  and Devanagari digits as they are), the Unicode minus and typographic dashes become "-";
- digit groups joined by a (no-break, narrow, thin) space or an apostrophe lose the separator
  ("1 500 000", "1'500'000" -> "1500000"); plain spaces only with two or more groups, so that
  "in 12 500 cases" is not read as 12500;
- NFKC, case folding, one space per whitespace run (`normalise`);
- number words become digits ("ten working days" -> "10 working days"; "one" only before a unit);
- a written multiplier is folded into its number ("1.5 million" = "1,5 Mio." = "1500000", "12k" =
  "12000");
- "per cent", "percent", "Prozent", "procent", "pour cent" become "%".

`value` reads one written number as a canonical decimal string, with English ("1,500,000.5"),
continental ("1.500.000,5") and Indian ("2,32,822") grouping. Signs are not part of a value: a
fall is said in words ("down 5 %"), and a range "10-15" is two figures, 10 and 15. A number of
more than MAX_DIGITS digits is not a figure (no claim states one; reading it would only cost).
"""

from __future__ import annotations

import re
import unicodedata
from decimal import Context, InvalidOperation

from rag_pipeline.cleaning.safety import as_indexed

MAX_DIGITS = 40  # a longer digit run is an identifier or noise, never compared as a value
_EXACT = Context(prec=MAX_DIGITS + 20)  # no rounding of a value of MAX_DIGITS digits scaled by a multiplier

_UNITS = {"zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
          "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14, "fifteen": 15,
          "sixteen": 16, "seventeen": 17, "eighteen": 18, "nineteen": 19}
_TENS = {"twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80, "ninety": 90}
_SCALES = {"hundred": 100, "thousand": 1000, "million": 10**6, "billion": 10**9}
_WORD = "|".join(sorted([*_UNITS, *_TENS, *_SCALES], key=len, reverse=True))
_NUMBER_WORDS = re.compile(rf"\b(?:{_WORD})(?:(?:[\s-]+|\s+and\s+)(?:{_WORD}))*\b")
UNIT_WORDS = r"(?:second|minute|hour|day|week|month|year|working|business|calendar|percent|per\s+cent|time)s?"
CUR = r"(?:us\$|€|\$|£|¥|₹|kč|\b(?:eur|euros?|usd|dollars?|gbp|chf|czk|jpy|sek|nok|dkk|pln|inr|rupees?)\b)"
NUM = r"\d+(?:[.,]\d+)*"
# Multipliers written after a number, in the corpus's languages: English, German (Mio., Mrd.),
# French (milliard), Czech (milion, milionu, miliardy...).
_MULTIPLIERS = {"thousand": 3, "tausend": 3, "tisíc": 3, "million": 6, "millions": 6, "mio": 6, "milion": 6,
                "miliony": 6, "milionů": 6, "milionu": 6, "billion": 9, "billions": 9, "bn": 9, "mrd": 9,
                "milliard": 9, "milliards": 9, "miliarda": 9, "miliardy": 9, "miliard": 9,
                "lakh": 5, "lakhs": 5, "crore": 7, "crores": 7}  # Indian reports: "₹1,186 crore" = ₹11,860,000,000
_MULTIPLIED = re.compile(rf"(?<![\w.,])(?P<num>{NUM})\s?(?P<mult>"
                         + "|".join(sorted(_MULTIPLIERS, key=len, reverse=True)) + r")\b\.?")
# thousands written "12k" (attached only: "5 k" and "5m" stay as they are, metres or a unit)
_THOUSANDS = re.compile(r"(?<![\w.,])(?P<num>\d+(?:\.\d+)?)k\b")
_AGE = re.compile(r"(?<![\w.,])(\d{1,3})[-\s](years?|months?|weeks?|days?)[-\s]olds?\b")
_PERCENT_WORDS = re.compile(r"(?<=\d)\s?(?:per\s?cent|percent|prozent|procent[aoy]?|pour\s+cent|pct)\b\.?")
_NON_ASCII_DIGIT = re.compile(r"(?![0-9])\d")
_DASHES = re.compile(r"[\u2010-\u2015\u2212\ufe58\ufe63\uff0d]")
_SPACE_GROUPS = re.compile(r"(?<![\d.,])\d{1,3}(?:[\u00a0\u202f\u2009\u2007']\d{3})+(?![\d])"
                           r"|(?<![\d.,])\d{1,3}(?: \d{3}){2,}(?![\d])")


# A superscript the parsers marked (parsing/superscripts.py): "10^6" is a power of ten; any other
# ("2014^1", "Center^3") is a footnote mark, which no claim or quote repeats
_TEN_TO_THE = re.compile(r"(?<![\d.,])10\^(\d{1,2})(?!\d)")
_FOOTNOTE_MARK = re.compile(r"(?<=[^\W_])\^\d{1,3}(?!\d)")


def normalise(text: str) -> str:
    """NFKC, case-folded, one space for any whitespace run, typographic dashes and quotes made
    plain, invisible characters dropped as the clean step drops them from documents (soft hyphens,
    zero-width characters, bidi marks: `as_indexed`), superscript marks read (a footnote mark
    dropped, "10^6" as 1000000): the form quotes and fields compare in."""
    text = unicodedata.normalize("NFKC", as_indexed(text))
    if "^" in text:
        text = _FOOTNOTE_MARK.sub("", _TEN_TO_THE.sub(lambda m: "1" + "0" * int(m.group(1)), text))
    text = _DASHES.sub("-", text)  # fraction slashes and number forms: as_indexed (cleaning/safety/number_forms.py)
    text = re.sub(r"[\u2018\u2019\u201a\u201b\u2032]", "'", text)
    text = re.sub(r"[\u201c\u201d\u201e\u201f\u2033]", '"', text)
    return re.sub(r"\s+", " ", text).strip().casefold()


_TOKEN = re.compile(r"\S+")
_DIGIT = re.compile(r"\d")


def without_figures(text: str) -> str:
    """The text with every word that holds a digit blanked: what is left says the claim's
    language and its terms. Token by token, so a 4,000-letter word costs linear time (the
    pattern `\\S*\\d\\S*` backtracked quadratically: 0.15 s a hostile claim, twice a claim)."""
    return _TOKEN.sub(lambda m: " " if _DIGIT.search(m.group()) else m.group(), text)


def ascii_digits(text: str) -> str:
    """Every Unicode decimal digit as its ASCII digit, digit groups without their separator."""
    if not text.isascii():  # full-width digits too: they are decimal digits (NFKC comes later, in normalise)
        text = _NON_ASCII_DIGIT.sub(lambda m: str(unicodedata.decimal(m.group(), 0)), text)
    return _SPACE_GROUPS.sub(lambda m: re.sub(r"[^\d]", "", m.group()), text)


def words_to_digits(text: str) -> str:
    """Number words as digits, in a normalised (case-folded) text."""
    def replace(match: re.Match[str]) -> str:
        words = [w for w in re.split(r"[\s-]+", match.group()) if w != "and"]
        if words[0] in _SCALES and re.search(r"\d\s?$", text[:match.start()]):
            return match.group()  # "1.5 million": the multiplier of a written figure
        if words == ["one"] and not re.match(rf"\s*-?\s*{UNIT_WORDS}\b|\s*{CUR}", text[match.end():]):
            return match.group()  # "no one", "one of them": not a figure
        total, current = 0, 0
        for word in words:
            if word in _UNITS:
                current += _UNITS[word]
            elif word in _TENS:
                current += _TENS[word]
            elif word == "hundred":
                current = max(current, 1) * 100
            else:
                total += max(current, 1) * _SCALES[word]
                current = 0
        return str(total + current)

    return _NUMBER_WORDS.sub(replace, text)


# a decimal written without its leading zero, as forms and tax tables write rates ("Tax Liability x
# .15"): 0.15. Not after a word character or another point ("v1.15", "file.15", "...5").
_LEADING_POINT = re.compile(r"(?<![\w.])\.(\d+)\b(?![.,]\d)")


def prepare(text: str) -> str:
    """The text every figure is read from (module docstring): digits ASCII and ungrouped,
    normalised, number words as digits, multipliers folded in, percent words as "%"."""
    prepared = _LEADING_POINT.sub(r"0.\1", words_to_digits(normalise(ascii_digits(arabic_numerals(text)))))

    def multiplied(match: re.Match[str]) -> str:
        found = value(match.group("num"), exponent=_MULTIPLIERS[match.group("mult")])
        return found if found is not None else match.group()

    prepared = _MULTIPLIED.sub(multiplied, prepared)
    prepared = _THOUSANDS.sub(lambda m: value(m.group("num"), exponent=3) or m.group(), prepared)
    prepared = _AGE.sub(r"\1 \2 old", prepared)  # "15-year-olds" is an age, 15: no duration, no code
    return _PERCENT_WORDS.sub("%", prepared)


# A part of a document numbered in Roman numerals, capitals only ("PART I", "Rule II", "Title IX"):
# the same number as "Part 1" (I to XXXIX; C, D, L and M are more often letters: "Appendix C")
_ROMAN = re.compile(r"\b(?P<word>part|chapter|rule|title|article|book|volume|annex|schedule|subpart|division|phase|"
                    r"stage|tier|class|level|section)(?P<gap>\s+)(?P<num>X{0,3}(?:IX|IV|V?I{0,3}))(?![\w'’])", re.IGNORECASE)
_ROMAN_VALUES = {"I": 1, "V": 5, "X": 10}


def arabic_numerals(text: str) -> str:
    """The text with each numbered part's Roman numeral as digits ("PART I" -> "PART 1")."""
    return _ROMAN.sub(_arabic, text)


def _arabic(match: re.Match[str]) -> str:
    numeral = match.group("num")
    if not numeral or not numeral.isupper():
        return match.group()
    total = 0
    for i, ch in enumerate(numeral):
        worth = _ROMAN_VALUES[ch]
        total += -worth if i + 1 < len(numeral) and _ROMAN_VALUES[numeral[i + 1]] > worth else worth
    return f"{match.group('word')}{match.group('gap')}{total}"


def is_year(number: str) -> bool:
    """Whether a canonical number reads as a year (1800-2099): a date's part, no figure of a role."""
    return re.fullmatch(r"(?:1[89]|20)\d\d", number) is not None


def value(number: str, mult: str | None = None, *, exponent: int = 0) -> str | None:
    """A written number as a canonical decimal string ("19,984,378" -> "19984378", "0,30" ->
    "0.3", "1.500.000,5" -> "1500000.5", "1.5" + "million" -> "1500000"), or None when it is not
    one number or has more than MAX_DIGITS digits."""
    digits = number
    if sum(c.isdigit() for c in digits) > MAX_DIGITS:
        return None
    if re.fullmatch(r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d{1,2}(?:,\d{2})+,\d{3}(?:\.\d+)?", digits):
        digits = digits.replace(",", "")  # 19,984,378; and the Indian 2,32,822 (lakh grouping)
    elif re.fullmatch(r"\d{1,3}(?:\.\d{3}){2,}(?:,\d+)?|\d{1,3}(?:\.\d{3})+,\d+", digits):
        digits = digits.replace(".", "").replace(",", ".")  # 1.234.567 and 1.234.567,89, 1.500,5
    elif re.fullmatch(r"\d+,\d+", digits):
        digits = digits.replace(",", ".")
    try:
        found = _EXACT.create_decimal(digits)
    except InvalidOperation:
        return None
    exponent += {"thousand": 3, "k": 3, "million": 6, "m": 6, "billion": 9, "bn": 9}.get(mult or "", 0)
    return format(_EXACT.normalize(found.scaleb(exponent, _EXACT)), "f")


def values(text: str) -> set[str]:
    """Every numeric value of a prepared text, a date's parts and an amount's value among them."""
    return {v for m in re.finditer(NUM, text) if (v := value(m.group())) is not None}

"""The same fact written another way, as answers restate passages: what fields.py accepts beyond
its one canonical form per field.

A generated answer rarely copies a figure's spelling. Measured on hand-written restatements of
passages (rag_pipeline_tests/answers/test_equivalents.py), the exact-field rule flagged as
unsupported: "2nd edition" on "second edition", "Q3 2021" on "the third quarter of 2021", "12k
users" on "12,000 users", "two weeks" on "14 days", "90 minutes" on "1.5 hours", "3 March 2021" on
"3/3/2021" and "5 p.m." on "17:00" ("12k" is read as 12000 by figures.prepare). Each rule here adds what a passage states, never what a claim
must show, so a claim that stood before still stands; what is added is read strictly (a unit
converts only within its own kind and never to or from working days; a numeric date with day
and month both under 13 reads both ways, since "04/03/2021" is April in the US and March in
Europe).
"""

from __future__ import annotations

import re
import unicodedata
from decimal import Decimal

_ORDINAL_WORDS = {word: n for n, word in enumerate((
    "first second third fourth fifth sixth seventh eighth ninth tenth eleventh twelfth thirteenth "
    "fourteenth fifteenth sixteenth seventeenth eighteenth nineteenth twentieth").split(), 1)}
_ORDINAL = re.compile(r"\b(" + "|".join(_ORDINAL_WORDS) + r")\b")
# "2nd", "21st": a number, not an identifier (fields.py's identifier pattern skips these)
NUMERIC_ORDINAL = r"\d+(?:st|nd|rd|th)"
_QUARTER_WORDS = {"first": 1, "1st": 1, "second": 2, "2nd": 2, "third": 3, "3rd": 3, "fourth": 4, "4th": 4}
_QUARTER = re.compile(r"\b(?:(?P<word>first|1st|second|2nd|third|3rd|fourth|4th)\s+(?:fiscal\s+|financial\s+)?quarter"
                      r"|quarter\s+(?P<digit>[1-4])|(?P<pre>[1-4])q)\b")
# "3/3/2021" and the US forms' hyphen, "01-17-2023" (an IRS manual's effective date): one separator
_SLASH_DATE = re.compile(r"(?<![\w/.\-])(?P<a>\d{1,2})(?P<sep>[/-])(?P<b>\d{1,2})(?P=sep)(?P<y>\d{4})(?![\w/\-])")
_CLOCK = re.compile(r"(?<![\w:.])(?P<h>\d{1,2})(?::(?P<m>\d{2}))?\s?(?P<half>a\.?m\.?|p\.?m\.?)(?!\w)"
                    r"|(?<![\w:.])(?P<h24>\d{1,2}):(?P<m24>\d{2})(?![\w:])")
# Units of one kind, in the smallest unit fields.py names: working days are not calendar days
# and never convert (two weeks is 10 or 14 of them, depending on who counts)
_IN_SECONDS = {"second": 1, "minute": 60, "hour": 3600}
_IN_DAYS = {"day": 1, "week": 7}
_IN_MONTHS = {"month": 1, "year": 12}


def passage_values(prepared: str) -> set[str]:
    """Numbers a prepared passage states in words or by the clock: ordinal words ("second" = 2)
    and a time's other half of the day ("17:00" = 5, "5 p.m." = 17), with the minutes."""
    found = {str(_ORDINAL_WORDS[m.group(1)]) for m in _ORDINAL.finditer(prepared)}
    for match in _CLOCK.finditer(prepared):
        hour = int(match.group("h") or match.group("h24"))
        minutes = match.group("m") or match.group("m24")
        if hour > 24 or (minutes and int(minutes) > 59):
            continue
        found.add(str(hour))
        found.add(str(int(minutes or 0)))  # "5 p.m." is 17:00
        if match.group("half") and match.group("half").startswith("p") and hour < 12:
            found.add(str(hour + 12))
        elif match.group("h24") and 12 < hour < 24:
            found.add(str(hour - 12))
    return found


def slash_dates(prepared: str) -> set[str]:
    """The ISO dates a passage's "d/m/yyyy" or "m/d/yyyy" dates (or "mm-dd-yyyy") may mean (both
    where both can)."""
    found = set()
    for match in _SLASH_DATE.finditer(prepared):
        a, b, year = int(match.group("a")), int(match.group("b")), int(match.group("y"))
        for month, day in ((a, b), (b, a)):
            if 1 <= month <= 12 and 1 <= day <= 31:
                found.add(f"{year:04d}-{month:02d}-{day:02d}")
    return found


def quarters(prepared: str) -> set[str]:
    """The quarters a passage names in words ("the third quarter", "quarter 3", "3Q"), as "q3"."""
    found = set()
    for match in _QUARTER.finditer(prepared):
        number = _QUARTER_WORDS.get(match.group("word") or "") or int(match.group("digit") or match.group("pre"))
        found.add(f"q{number}")
    return found


def durations(number: str, unit: str) -> set[tuple[str, str]]:
    """The same length in the other units of its kind, where it is a whole or half number there
    ("2 week" = ("14", "day"); "90 minute" = ("1.5", "hour")); none for an unknown unit."""
    for table in (_IN_SECONDS, _IN_DAYS, _IN_MONTHS):
        if unit in table:
            base = Decimal(number) * table[unit]
            found = set()
            for other, size in table.items():
                amount = base / size
                if other != unit and (amount * 2) == (amount * 2).to_integral_value():
                    found.add((format(amount.normalize(), "f"), other))
            return found
    return set()


_CONNECTORS = frozenset({"of", "and", "for", "the", "&"})


def initialisms(text: str) -> frozenset[str]:
    """The initials of every run of two or more capitalised words ("of", "and", "for", "the" may
    sit inside a run without counting): a passage naming the "Chief Executive Officer" or the
    "Business Master File" states the claim's "CEO" or "BMF". Lower-case words break a run, so
    initials of ordinary prose ("the company expects operating ...") never spell an acronym."""
    found: set[str] = set()
    run: list[str] = []
    for word in [*re.findall(r"[^\W\d_]+|&", unicodedata.normalize("NFKC", text)), "."]:
        if word[0].isupper():
            run.append(word[0].casefold())
            continue
        if word.casefold() in _CONNECTORS and run:
            continue
        found.update("".join(run[i:j]) for i in range(len(run)) for j in range(i + 2, min(len(run), i + 8) + 1))
        run = []
    return frozenset(found)

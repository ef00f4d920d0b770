"""How often: "BMFOL sends these transactions to BMF daily" on a passage saying "weekly" differs in
one word, the rest shared, no figure changed, so neither the support score nor the figure rule
saw it. A frequency is a field like a duration (fields.py): the claim's must be stated by the
cited passage, in any of its forms ("daily" = "every day" = "per day" = "each business day").

What a claim must show is read strictly: the adverbs ("daily", "weekly", "quarterly", ...) and
"every/each/per/once a" + unit; not "annual", which names things ("the annual report") more
often than it says how often, nor "a day" ("in a day"). What a passage states is read more
widely, as equivalents.py does: also "a day", "an hour", "/month", "per annum", "annual" and the
adverbs of the corpus's other languages ("täglich", "mensuel", "ročně"), so a claim restating
them in English stands.
"""

from __future__ import annotations

import re

_UNIT = r"(?:(?:calendar|business|working)\s+)?(?P<unit>hour|day|week|fortnight|month|quarter|year)"
_ADVERBS = {"hourly": "hour", "daily": "day", "weekly": "week", "fortnightly": "fortnight", "biweekly": "fortnight",
            "monthly": "month", "quarterly": "quarter", "annually": "year", "yearly": "year",
            "semiannually": "half-year", "semi-annually": "half-year", "biannually": "half-year"}
_PASSAGE_WORDS = {"annual": "year", "täglich": "day", "wöchentlich": "week", "monatlich": "month",
                  "vierteljährlich": "quarter", "quartalsweise": "quarter", "jährlich": "year", "halbjährlich": "half-year",
                  "quotidien": "day", "quotidienne": "day", "quotidiennement": "day", "hebdomadaire": "week",
                  "mensuel": "month", "mensuelle": "month", "mensuellement": "month", "trimestriel": "quarter",
                  "trimestrielle": "quarter", "annuel": "year", "annuelle": "year", "annuellement": "year",
                  "denně": "day", "týdně": "week", "měsíčně": "month", "čtvrtletně": "quarter", "ročně": "year"}
_STRICT = re.compile(r"\b(?P<adverb>" + "|".join(sorted(_ADVERBS, key=len, reverse=True)) + r")\b"
                     r"|\b(?:every|each|per|once\s+a|once\s+an|twice\s+a|times\s+a)\s+" + _UNIT + r"\b")
# a passage word with its inflection ("monatlichen", "mensuelles", "annually")
_WIDE = re.compile(r"\b(?P<word>" + "|".join(sorted(_PASSAGE_WORDS, key=len, reverse=True)) + r")[^\W\d_]{0,3}\b"
                   r"|(?:\ban?\s+|/\s?)" + _UNIT + r"\b|\bper\s+annum\b(?P<annum>)")


def stated_by_claim(prepared: str) -> dict[str, str]:
    """The frequencies a claim states (unit -> as written), read strictly (module docstring)."""
    found: dict[str, str] = {}
    for match in _STRICT.finditer(prepared):
        unit = _ADVERBS[match.group("adverb")] if match.group("adverb") else match.group("unit")
        found.setdefault(unit, match.group().strip())
    return found


def stated_by_passage(prepared: str) -> set[str]:
    """The frequencies a passage states, in any of its forms (module docstring)."""
    found = set(stated_by_claim(prepared))
    for match in _WIDE.finditer(prepared):
        if match.group("word"):
            found.add(_PASSAGE_WORDS[match.group("word")])
        else:
            found.add("year" if match.group("annum") is not None else match.group("unit"))
    return found

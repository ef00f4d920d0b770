"""Opposite words: "Chevron's San Ramon layoffs are temporary" on the row "| Chevron | San Ramon |
430 | Layoff Permanent |". No figure differs and every other word is shared, so neither the
exact-field rule nor the support score tells them apart; the sentence says the opposite as
surely as with a "not". The polarity check (polarity.py) therefore reads a claim word whose
opposite stands in its sentence, where the claim's own word does not, as a difference in
polarity, and a negated opposite ("not temporary" for "permanent") as agreement.

Pairs of words that only oppose each other (a status, a direction, a rule's force or reach: "all"
against "most" or "some"), in English, German and French; words whose opposite depends on what
they qualify ("first", "more", "before", "high") are left out. A word is matched by a crude stem (a plural, past or "-ing"
ending off), so "increased" opposes "decreases". A claim holding both words of a pair compares
nothing of that pair ("the minimum is 5, the maximum 10").
"""

from __future__ import annotations

import re

from rag_pipeline.answers.fields import stem
from rag_pipeline.answers.figures import normalise

_PAIRS = (
    ("temporary", "permanent"), ("mandatory", "optional"), ("compulsory", "optional"), ("required", "optional"),
    ("voluntary", "mandatory"), ("voluntary", "compulsory"), ("allowed", "prohibited"), ("allowed", "forbidden"),
    ("permitted", "prohibited"), ("permitted", "forbidden"), ("increase", "decrease"), ("increase", "reduce"),
    ("higher", "lower"), ("maximum", "minimum"), ("true", "false"), ("enable", "disable"), ("public", "private"),
    ("internal", "external"), ("inbound", "outbound"), ("accept", "reject"), ("approve", "reject"),
    ("approve", "deny"), ("include", "exclude"), ("earliest", "latest"), ("full-time", "part-time"),
    ("profit", "loss"), ("gain", "loss"), ("success", "failure"), ("succeed", "fail"), ("online", "offline"),
    ("synchronous", "asynchronous"), ("upstream", "downstream"), ("ascending", "descending"),
    ("encrypted", "unencrypted"), ("valid", "invalid"), ("legal", "illegal"), ("paid", "unpaid"),
    ("extend", "retract"), ("manual", "automatic"), ("manually", "automatically"), ("add", "remove"), ("added", "removed"),
    ("import", "export"), ("horizontal", "vertical"), ("north", "south"), ("east", "west"), ("male", "female"),
    ("befristet", "unbefristet"), ("erlaubt", "verboten"), ("pflicht", "freiwillig"), ("erhöht", "gesenkt"),
    ("temporaire", "permanent"), ("obligatoire", "facultatif"), ("obligatoire", "facultative"), ("autorisé", "interdit"),
    ("hausse", "baisse"), ("augmentation", "diminution"),
    # a rule's reach: "all of which are larger" restating "most of these competitors are larger"
    ("all", "most"), ("all", "some"), ("every", "some"), ("always", "sometimes"), ("always", "usually"),
    ("always", "often"), ("simple", "complex"), ("simpler", "complex"), ("easier", "harder"),
)
_WORD = re.compile(r"[^\W\d_]+(?:-[^\W\d_]+)*")


_OPPOSITES: dict[str, frozenset[str]] = {}
for _a, _b in _PAIRS:
    _OPPOSITES[stem(_a)] = _OPPOSITES.get(stem(_a), frozenset()) | {stem(_b)}
    _OPPOSITES[stem(_b)] = _OPPOSITES.get(stem(_b), frozenset()) | {stem(_a)}


def _stems(text: str) -> set[str]:
    return {stem(word) for word in _WORD.findall(normalise(text))}


def opposed(sentence: str, claim: str) -> bool:
    """Whether the sentence holds the opposite of a word of the claim and not the word itself
    (an odd number of such words: two opposites say the same as none)."""
    said = _stems(claim)
    holds = _stems(sentence)
    count = sum(1 for word in said & _OPPOSITES.keys()
                if word not in holds and not (_OPPOSITES[word] & said) and _OPPOSITES[word] & holds)
    return count % 2 == 1

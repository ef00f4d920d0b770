"""Denials by reference: a sentence that negates the sentence before it as a whole.

"In the past it was possible to advocate successfully through lobbying. This is no longer the
case since politics in Illinois has become a pay to play game." The first sentence holds every
word of the claim "SUAA can still advocate successfully through lobbying" and no negation; the
negation sits in the next sentence, whose subject only points back ("this", "that", "das", "ce",
"to"). Read alone, each sentence looks like support. The polarity check (polarity.py) therefore
reads a sentence followed by a denial as negated whole, and a denial sentence itself by the
words after its denying phrase ("since politics in Illinois has become ..."), which it does not
negate.

A denial here is a pointing subject, a negation and a predicate that only says "so": "the case",
"true", "possible", "valid", "applies", "holds", in English, German, French and Czech, ending
the sentence or followed by "any more" or a reason ("since ...", "because ..."). "This does not
apply to contractors" restricts the rule before it rather than denying it, so a predicate
followed by anything else is no denial.

A claim that places what it says in the past ("in the past", "used to", "formerly") agrees with
a denied sentence: `looks_back` says so.
"""

from __future__ import annotations

import re

from rag_pipeline.answers.figures import normalise

# Words that may open a denial before its subject: "However, this is no longer the case."
_OPENERS = (r"(?:(?:but|however|yet|today|now|nowadays|currently|unfortunately|sadly|in practice|in fact|in reality"
            r"|aber|doch|jedoch|heute|inzwischen|mittlerweile|leider|mais|cependant|or|aujourd'hui|hélas"
            r"|ale|avšak|však|dnes|nyní|bohužel)\b[,\s]*)*")
_REASON = (r"(?=\s*(?:$|[.,;:!?)]|any\s?more\b|any longer\b|since\b|because\b|as\b|now\b|today\b|nowadays\b"
           r"|these days\b|mehr\b|seit\b|weil\b|da\b|heute\b|depuis\b|car\b|puisque\b|aujourd'hui\b"
           r"|od\b|protože\b|neboť\b|dnes\b))")
_EN = (r"(?:this|that|it|such|which)\s+(?:(?:is|was|are|were|has|have|had|does|do|did|will|would|can|could|may|might"
       r"|should|must)\s+)?(?:(?:also|however|now|today|sadly|unfortunately|clearly|simply)\s+)?"
       r"(?:no\s+longer|not|never)\s+(?:(?:be|been|always)\s+)?"
       r"(?:the\s+case|true|so|correct|accurate|valid|possible|allowed|permitted|in\s+(?:effect|force|place)"
       r"|an\s+option|the\s+rule|the\s+practice|apply|applies|hold|holds|work|works|happen|happens|exist|exists)")
_DE = (r"(?:das|dies|dieses|es|dem)\s+(?:ist|war|sind|waren|gilt|galt|trifft|traf)\s+"
       r"(?:(?:aber|jedoch|heute|inzwischen|mittlerweile|leider)\s+)*(?:nicht|nie)(?:\s+mehr)?"
       r"(?:\s+(?:der\s+fall|so|zu|möglich|gültig|richtig|wahr))?")
_FR = (r"(?:ce|cela|ceci|ça|il)\s+ne\s+(?:est|sont|était|fut|sera|marche|fonctionne|vaut|s'applique)\s+"
       r"(?:plus|pas)(?:\s+(?:le\s+cas|vrai|possible|valable|exact|permis))?")
_CS = (r"(?:to|tak\s+tomu|toto|tohle)\s+(?:(?:už|již|dnes|však|ale)\s+)*"
       r"(?:není|neplatí|nebylo|nebude|nejde)(?:\s+(?:pravda|možné|tak|pravdou))?")
# Applied to a sentence as `polarity` reads it: normalised (case-folded), "n't" and "n'" spelled out
_DENIAL = re.compile(rf"^\W*{_OPENERS}(?:{_EN}|{_DE}|{_FR}|{_CS}){_REASON}")
# "Not any more." / "No longer." as a sentence of its own
_ALONE = re.compile(rf"^\W*{_OPENERS}(?:not\s+any\s?more|no\s+longer|nicht\s+mehr|plus\s+maintenant|už\s+ne)\W*$")
_LOOKS_BACK = re.compile(r"\b(?:in the past|used to|formerly|previously|originally|at one time|at first|historically"
                         r"|früher|ehemals|damals|autrefois|jadis|auparavant|dříve|kdysi|původně)\b")


def _read(text: str) -> str:
    """The text as the patterns read it: normalised, "n't" and "n'" spelled out."""
    return re.sub(r"\bn'", "ne ", re.sub(r"n't\b", " not", normalise(text)))


def remainder(sentence: str) -> str | None:
    """The words after a denial's phrase ("since politics in Illinois has become ..."), or None
    where the sentence denies nothing (module docstring). The text is read normalised: a match
    is looked for in the first 200 characters only, as a denial opens its sentence."""
    read = _read(sentence[:400])
    found = _DENIAL.match(read[:200]) or _ALONE.match(read[:200])
    if found is None:
        return None
    return (_read(sentence)[found.end():]).strip(" ,;:.")


def looks_back(claim: str) -> bool:
    """Whether a claim places what it says in the past, where a denied sentence agrees with it."""
    return bool(_LOOKS_BACK.search(_read(claim)))

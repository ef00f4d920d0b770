"""Polarity: does a claim say "not" where the passage's sentence affirms, or the reverse?

"A trustee may advertise" and "The standing trustee may not advertise" share every content word
and mean nearly the same to a sentence model; no figure differs. What differs is a negation cue.
The claim is compared with the passage sentence that matches it best (support.py picks it by
similarity), and the number of negation cues of each is counted: an odd count negates. When one
side negates and the other does not, the citation carries a polarity flag.

The flag is not a verdict: a paraphrase can turn a negation into an affirmation ("may not exceed
EUR 100" = "is capped at EUR 100"), so the flag lowers the support score by a weight that
calibration fits (support.py), and the score decides.

Cues, in the corpus's languages: English, German, French, Czech, Finnish and Swedish. Czech
negates verbs with the prefix "ne-"; the common negated verb forms are listed rather than the
prefix, which also begins "nebo" (or), "než" (than) and every superlative ("nejvyšší"). Words
that only go with another cue ("ne ... pas", "neither ... nor", "weder ... noch") are not counted
twice: one of each pair is a cue.
"""

from __future__ import annotations

import re

from rag_pipeline.answers.figures import normalise

CUES: dict[str, frozenset[str]] = {
    "en": frozenset("not no never none nobody nothing neither cannot without nowhere".split()),
    "de": frozenset("nicht kein keine keinen keinem keiner keines nie niemals weder nichts ohne".split()),
    "fr": frozenset("ne sans".split()),  # "pas", "jamais", "aucun", "rien" go with a "ne"
    "cs": frozenset("ne není nejsou nebyl nebyla nebylo nebyli nemá nemají nesmí nesmějí nelze nemůže nemohou "
                    "nebude nebudou nikdy žádný žádná žádné žádného bez".split()),
    "fi": frozenset("ei eivät älä".split()),
    "sv": frozenset("inte ej aldrig ingen inget inga utan".split()),
}
_ALL = frozenset().union(*CUES.values())
# Phrases that carry a cue word without negating what follows, and "no longer", one cue of two words.
_NOT_NEGATING = re.compile(r"\bnot only\b|\bno doubt\b|\bnicht nur\b|\bnon seulement\b|\bne \w+ que\b|\bno longer\b")
_WORDS = re.compile(r"[^\W\d_]+")


def cues(text: str) -> int:
    """How many negation cues a text holds ("no longer" counts once; "not only" not at all)."""
    folded = re.sub(r"\bn'", "ne ", re.sub(r"n't\b", " not", normalise(text)))  # can't, n'est
    count = len(re.findall(r"\bno longer\b", folded))
    return count + sum(word in _ALL for word in _WORDS.findall(_NOT_NEGATING.sub(" ", folded)))


def negated(text: str) -> bool:
    return cues(text) % 2 == 1


def mismatch(claim: str, sentence: str) -> bool:
    """Whether one of the two negates and the other does not."""
    return negated(claim) != negated(sentence)

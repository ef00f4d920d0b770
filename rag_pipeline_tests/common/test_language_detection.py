"""The fast detector must tell every text's language exactly as langdetect does: the index
recorded documents' languages (and so their full-text configurations) with langdetect itself,
and a re-sync must not move a document to another configuration because detection got faster."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from langdetect.detector import Detector
from langdetect.lang_detect_exception import LangDetectException

from rag_pipeline.common.language_detection import FastDetector, _factory, new_detector
from rag_pipeline.store.text_search import _sample

PROJECT = Path(__file__).resolve().parents[2]

# Characters from every block langdetect's normaliser treats specially, and a few it does not.
_ALPHABETS = [
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ",
    "áéíóúýčďěňřšťůžÁČĎĚŇŘŠŤŮŽäöüßÄÖÜ",  # Latin-1 and Extended-A
    "\u00a0\u00ab\u00bb\u00b7\u00d7\u00f7",  # Latin-1 characters langdetect drops
    "șțȘȚƀƁ",  # Latin Extended-B (Romanian commas)
    "ạảấầẩẫậắằẳẵặẹẻẽếềểễệ\u1e00\u1e9f",  # Latin Extended Additional (Vietnamese)
    "a\u0300e\u0301o\u0303u\u0309i\u0323",  # Vietnamese with combining marks (normalize_vi)
    "\u2013\u2014\u2018\u2019\u201c\u201d\u2026",  # General Punctuation
    "абвгдежзийклмнопрстуфхцчшщъыьэюяАБВГД",
    "αβγδεζηθικλμνξοπρστυφχψωΑΒΓ",
    "ابتثجحخدذرزسشصضطظعغفقكلمنهوي\u06cc",
    "あいうえおかきくけこアイウエオカキクケコ",
    "ㄅㄆㄇㄈㄉㄊ\u31a0\u31a1",
    "的一是不了人我在有他这中大为上个国",
    "가나다라마바사아자차카타파하한국어",
    "0123456789.,;:!?()[]{}<>@#$%^&*_-+=/\\|'\"`~",
    "        \t\n\r",
]


def _slow(text: str) -> Detector:
    detector = Detector(_factory())
    detector.append(text)
    return detector


def _outcome(detector: Detector) -> object:
    try:
        return [(p.lang, p.prob) for p in detector.get_probabilities()]
    except LangDetectException as error:
        return ("error", str(error))


def _texts() -> list[str]:
    rng = random.Random(20261204)
    texts = ["", " ", "    ", "A", "AB CD EF", "ABC def GHI jkl", "iPhone USB-C HTTP/2", "x" * 20000,
             "see https://example.com/a?b=c&d=e or mail jane.doe@example.org now",
             "\x00\ud800 lone surrogate and NUL", "ÄÖÜ ÄÖÜ äöü", "Ș Ț ș ț", "a  b   c    d",
             # few ASCII letters among many Vietnamese ones: langdetect counts U+1Exx as non-Latin
             "Việt Nam ạảấầẩẫậắằẳẵặẹẻẽếềểễệ", "Москва Moscow Москва"]
    for length in (5, 60, 700, 12000):
        for _ in range(6):
            mixed = "".join(rng.choice(rng.choice(_ALPHABETS)) for _ in range(length))
            one = rng.choice(_ALPHABETS)
            texts += [mixed, "".join(rng.choice(one + "  ") for _ in range(length))]
    return texts


def _documents() -> list[str]:
    """Real text in many languages and scripts, as the chunk step samples it."""
    folders = [PROJECT / "evalsets" / "generalisation" / "docs", PROJECT / "demo"]
    found = []
    for folder in folders:
        for path in sorted(folder.rglob("*")):
            if path.suffix in {".md", ".txt", ".html", ".xml"} and path.is_file():
                found.append(_sample(path.read_text(encoding="utf-8", errors="replace")))
    return found


def test_the_fast_detector_prepares_the_same_text_and_ngrams_as_langdetect() -> None:
    for text in _texts():
        slow, fast = _slow(text), new_detector()
        fast.append(text)
        assert isinstance(fast, FastDetector)
        assert fast.text == slow.text, text[:60]
        slow.cleaning_text()
        fast.cleaning_text()
        assert fast.text == slow.text, text[:60]
        assert fast._extract_ngrams() == slow._extract_ngrams(), text[:60]


@pytest.mark.parametrize("source", ["generated", "documents"])
def test_the_fast_detector_gives_langdetects_languages_and_probabilities(source: str, corpus_dir: Path) -> None:
    texts = _texts() if source == "generated" else _documents() + _corpus_samples(corpus_dir)
    assert len(texts) > 20
    for text in texts:
        fast = new_detector()
        fast.append(text)
        assert _outcome(fast) == _outcome(_slow(text)), text[:60]


def _corpus_samples(corpus_dir: Path) -> list[str]:
    """The shared corpus' text files (HTML, XML, Markdown: German, Czech, Finnish, Swedish,
    English), raw, markup included: hostile to a detector and a fair test of equality."""
    paths = sorted(p for p in (corpus_dir / "docs").rglob("*") if p.suffix in {".md", ".html", ".xml"})
    return [_sample(p.read_text(encoding="utf-8", errors="replace")) for p in paths]

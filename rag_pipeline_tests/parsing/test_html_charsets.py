"""HTML whose declared charset and bytes disagree (parsing/office/text.py decode_html): the text
is indexed as a reader of the page means it, never with replacement characters or mojibake,
through the real HTML parser."""

from __future__ import annotations

import random

import pytest

from rag_pipeline.parsing import parse_document

WESTERN = "Müller’s café — naïve résumé: 10 € per Straße"


def _page(text: str, charset: str | None) -> str:
    meta = f'<meta charset="{charset}">' if charset else ""
    return f"<html><head>{meta}<title>Prices</title></head><body><h1>Prices</h1><p>{text}</p></body></html>"


def _text(data: bytes) -> str:
    return "\n".join(e.text for e in parse_document(data, "page.html").elements)


@pytest.mark.parametrize(("charset", "encoding"), [
    ("iso-8859-1", "utf-8"),  # re-saved as UTF-8, the old declaration kept: was "MÃ¼llerâ€™s"
    ("windows-1252", "utf-8"),
    ("shift_jis", "utf-8"),
    ("iso-8859-1", "cp1252"),  # what browsers read "iso-8859-1" as: curly quotes and the euro sign
    ("us-ascii", "cp1252"),
    ("utf-8", "utf-8"),
    (None, "utf-8"),
])
def test_a_page_reads_as_its_bytes_mean_whatever_its_label_says(charset: str | None, encoding: str) -> None:
    assert WESTERN in _text(_page(WESTERN, charset).encode(encoding))


def test_a_utf8_label_on_latin_text_is_not_read_into_replacement_characters() -> None:
    text = "Die Müller GmbH liefert Käse, Brötchen und Würste an die Filialen in Straßburg und Köln. " * 3
    found = _text(_page(text, "utf-8").encode("latin-1"))
    assert "\ufffd" not in found and "Müller GmbH liefert Käse" in found


def test_a_utf8_label_on_cyrillic_legacy_bytes_is_read_by_the_guess() -> None:
    text = "Съешь же ещё этих мягких французских булок, да выпей чаю. " * 5
    assert text.strip() in _text(_page(text, "utf-8").encode("cp1251"))


def test_declared_legacy_and_seven_bit_charsets_are_honoured() -> None:
    czech = "Příliš žluťoučký kůň úpěl ďábelské ódy"
    assert czech in _text(_page(czech, "windows-1250").encode("cp1250"))
    japanese = "東京の価格は10円です"
    assert japanese in _text(_page(japanese, "iso-2022-jp").encode("iso2022_jp"))  # 7-bit: ASCII to a UTF-8 check
    assert japanese in _text(_page(japanese, "shift_jis").encode("shift_jis"))


def test_a_utf16_label_on_an_ascii_page_is_ignored_as_browsers_do() -> None:
    assert "Plain page text here." in _text(_page("Plain page text here.", "utf-16").encode("ascii"))


def test_huge_hostile_bytes_under_a_lying_label_parse_to_text_without_failing() -> None:
    """2 MB of random bytes in the body of a page that says it is UTF-8."""
    noise = bytes(random.Random(4).randrange(256) for _ in range(2_000_000)).replace(b"<", b" ").replace(b"&", b" ")
    data = _page("START", "utf-8").encode().replace(b"START", b"Intro paragraph. " + noise)
    assert "Intro paragraph." in _text(data)

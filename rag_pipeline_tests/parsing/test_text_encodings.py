"""Plain text and Markdown as Windows and old tools save them (parsing/office/text.py): UTF-16
and UTF-32 with a byte-order mark (Notepad's "Unicode", PowerShell's `>`) were refused as "not
valid UTF-8 at byte 0", and a file of lone "\\r" line ends (classic Mac OS, some exports) was one
paragraph without a heading. Both now read as the UTF-8 file does. A legacy code page is still
refused (a guess corrupts accented text); so is UTF-16 without its mark, with a hint saying so.
And a short line that ends as a sentence ends is no longer guessed a heading in text and mail."""

from __future__ import annotations

import codecs

import pytest

from rag_pipeline.parsing import ParseError, parse_document

TEXT = ("Travel policy\n\nEmployees may travel abroad for up to ninety days; Müller approves.\n\n"
        "Expenses\n\nReceipts are kept for seven years.\n")
MARKDOWN = "# Travel policy\n\nEmployees may travel abroad for up to ninety days; Müller approves.\n\n## Expenses\n\n- Receipts\n"


def _elements(data: bytes, name: str) -> list[tuple[str, str, int | None]]:
    return [(e.kind, e.text, e.level) for e in parse_document(data, name).elements]


@pytest.mark.parametrize("encode", [
    lambda t: codecs.BOM_UTF16_LE + t.encode("utf-16-le"),
    lambda t: codecs.BOM_UTF16_BE + t.encode("utf-16-be"),
    lambda t: t.encode("utf-32"),
    lambda t: codecs.BOM_UTF8 + t.encode(),
    lambda t: t.replace("\n", "\r\n").encode(),
    lambda t: t.replace("\n", "\r").encode(),
    lambda t: codecs.BOM_UTF16_LE + t.replace("\n", "\r\n").encode("utf-16-le"),
], ids=["utf16le", "utf16be", "utf32", "utf8-bom", "crlf", "cr", "utf16le-crlf"])
@pytest.mark.parametrize(("name", "text"), [("policy.txt", TEXT), ("policy.md", MARKDOWN)])
def test_unicode_with_a_mark_and_any_line_end_reads_as_utf8_does(encode, name: str, text: str) -> None:
    assert _elements(encode(text), name) == _elements(text.encode(), name)


def test_a_cr_only_text_keeps_its_headings_and_paragraphs() -> None:
    kinds = [kind for kind, _, _ in _elements(TEXT.replace("\n", "\r").encode(), "mac.txt")]
    assert kinds.count("heading") == 2 and len(kinds) == 4


@pytest.mark.parametrize(("data", "message"), [
    ("Müller approves".encode("latin-1"), "not valid UTF-8 at byte 1; re-save the file as UTF-8"),
    ("Travel policy text".encode("utf-16-le"), "looks like UTF-16 without a byte-order mark.*re-save the file as UTF-8"),
    (codecs.BOM_UTF16_LE + "Travel ".encode("utf-16-le") + b"\x00\xd8" + b"x\x00", "not valid UTF-16 at byte 16"),
], ids=["latin1", "utf16-without-mark", "utf16-lone-surrogate"])
def test_what_is_not_unicode_is_refused_with_what_to_do(data: bytes, message: str) -> None:
    with pytest.raises(ParseError, match=message):
        parse_document(data, "notes.txt")


def test_utf16_without_a_mark_is_not_read_as_utf8_with_nuls() -> None:
    # NUL is valid UTF-8: decoded blindly, "T\x00r\x00a\x00..." would reach the index
    for encoding in ("utf-16-le", "utf-16-be"):
        with pytest.raises(ParseError, match="looks like UTF-16 without a byte-order mark"):
            parse_document(MARKDOWN.encode(encoding), "policy.md")


def test_a_large_utf16_file_reads_every_paragraph() -> None:
    # huge input: 4 MB of UTF-16, 20,000 paragraphs
    text = "".join(f"Paragraph {i} of the exported register, line one.\n\n" for i in range(20_000))
    elements = parse_document(codecs.BOM_UTF16_LE + text.encode("utf-16-le"), "register.txt").elements
    joined = "\n".join(e.text for e in elements)
    assert all(f"Paragraph {i} of" in joined for i in (0, 9_999, 19_999)) and joined.count("Paragraph ") == 20_000


def test_a_short_sentence_is_not_guessed_a_heading_in_text_or_mail() -> None:
    # unstructured guesses every short line a heading; one that ends as a sentence ends is not
    text = ("Travel policy\n\nPlease approve by Friday.\n\nChapter 3.\n\n"
            "Book through the portal; receipts go to finance within thirty days of the trip.\n")
    kinds = {e.text: e.kind for e in parse_document(text.encode(), "notes.txt").elements}
    assert kinds == {"Travel policy": "heading", "Please approve by Friday.": "paragraph", "Chapter 3.": "heading",
                     "Book through the portal; receipts go to finance within thirty days of the trip.": "paragraph"}
    mail = f"Subject: Trip\r\n\r\n{text}".encode()
    mailed = {e.text: e.kind for e in parse_document(mail, "trip.eml").elements}
    assert mailed["Please approve by Friday."] == "paragraph" and mailed["Travel policy"] == "heading"

"""Text printed in pages (parsing/paginated_text.py): an RFC or Internet-Draft as a .txt file or as
the IETF's HTML rendering, a line-printer report. Its running headers and footers never reach an
element, a paragraph a page break cut is one paragraph on both pages, its unindented numbered
lines are headings at the level their number says; text that is not paginated parses exactly as
before. On the real Internet-Draft of the shared corpus, generated RFCs and hostile shapes."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from helpers import query, search, sync_folder

from rag_pipeline.parsing import parse_document
from rag_pipeline.parsing.config import ParseLimits
from rag_pipeline.parsing.paginated_text import read_pages, read_text, split_pages
from rag_pipeline.parsing.text_direct import guessed_text_elements

LIMITS = ParseLimits(ocr=False)
HEADER = "RFC 9999                Widget Transfer Protocol              March 2026"
FOOTER = "Example, et al.             Standards Track                  [Page {n}]"
BODY = [
    "1.  Introduction",
    "   The Widget Transfer Protocol moves widgets between a client and a",
    "   server over any reliable stream.  This document specifies version 1.",
    "",
    "2.  Conventions and Terminology",
    "   The key words MUST and SHOULD are to be interpreted as described in",
    "   BCP 14 when, and only when, they appear in all capitals.",
    "",
    "3.  Widgets",
    "   A widget is an opaque sequence of octets with a name and a version.",
    "",
    "   Each widget carries:",
    "",
    "   *  a name, unique within its folder,",
    "   *  a version, which changes whenever its octets change,",
    "      including a change of its media type, and",
    "   *  a media type.",
    "",
    "4.  Requests",
    "",
    "4.1.  Reading",
    "   A client reads a widget with a GET request to its URL.  The server",
    "   answers with the octets and a strong ETag.",
    "",
    "      GET /widgets/alpha HTTP/1.1",
    "      Host: example.com",
    "",
    "4.2.  Folders",
    "   A folder lists the names and versions of the widgets it contains.  A",
    "   folder that contains no widget is answered with an empty listing and",
    "   never with an error, so that a client can always poll it; servers",
    "   that keep no listing MUST answer 404 instead.",
    "",
    "4.2.1.  Folder Retention",
    "   A server keeps an empty folder for at least thirty days.",
    "",
    "5.  Security Considerations",
    "   Widgets may hold personal data; servers SHOULD require TLS.",
    "",
    "Appendix A.  Changes from Draft 03",
    "   The retention period of empty folders was raised from ten days.",
]
FIRST_PAGE = [
    "Internet Engineering Task Force (IETF)                        A. Example",
    "Request for Comments: 9999                                  Example Corp",
    "Category: Standards Track                                      March 2026",
    "",
    "                        Widget Transfer Protocol",
    "",
    "Abstract",
    "   This document specifies the Widget Transfer Protocol.",
    "",
    "Table of Contents",
    "   1.  Introduction  . . . . . . . . . . . . . . . . . . . . . . . .   2",
    "   2.  Conventions and Terminology . . . . . . . . . . . . . . . . .   2",
    "   4.2.  Folders . . . . . . . . . . . . . . . . . . . . . . . . . .   3",
]


def rfc_text(page_lines: int = 14, form_feeds: bool = True) -> str:
    """An RFC as rfc-editor.org prints it: a first page without running header, then pages of
    `page_lines` body lines, each with the running header and ending in the running footer."""
    lines = list(BODY)
    pages = [FIRST_PAGE]
    while lines:
        pages.append(lines[:page_lines])
        lines = lines[page_lines:]
    printed = []
    for n, body in enumerate(pages, 1):
        head = [] if n == 1 else [HEADER, "", ""]
        printed.append("\n".join(head + body + ["", "", FOOTER.format(n=n)]) + "\n")
    return ("\f" if form_feeds else "").join(printed)


def test_an_rfc_file_reads_as_its_pages_show_it() -> None:
    elements = parse_document(rfc_text().encode(), "rfc9999.txt", LIMITS).elements
    headings = [(e.level, e.text) for e in elements if e.kind == "heading"]
    assert headings == [
        (1, "Abstract"), (1, "Table of Contents"), (1, "1. Introduction"), (1, "2. Conventions and Terminology"),
        (1, "3. Widgets"), (1, "4. Requests"), (2, "4.1. Reading"), (2, "4.2. Folders"), (3, "4.2.1. Folder Retention"),
        (1, "5. Security Considerations"), (1, "Appendix A. Changes from Draft 03"),
    ]
    text = "\n".join(e.text for e in elements)
    assert "[Page" not in text and "Widget Transfer Protocol              March" not in text
    assert "Example, et al." not in text
    items = [e.text for e in elements if e.kind == "list_item"]
    assert items == ["a name, unique within its folder,",
                     "a version, which changes whenever its octets change, including a change of its media type, and",
                     "a media type."]
    code = [e.text for e in elements if e.kind == "code"]
    assert "GET /widgets/alpha HTTP/1.1\nHost: example.com" in code  # the example keeps its lines
    assert any(c.startswith("1.  Introduction  . . .") for c in code)  # the contents are no headings
    assert all(e.page is not None for e in elements)


def test_a_paragraph_cut_by_the_page_break_is_one_paragraph_on_both_pages() -> None:
    elements = parse_document(rfc_text(page_lines=30).encode(), "rfc9999.txt", LIMITS).elements
    folders = next(e for e in elements if e.text.startswith("A folder lists"))
    assert folders.kind == "paragraph"
    assert folders.text.endswith("servers that keep no listing MUST answer 404 instead.")
    assert (folders.page, folders.page_end) == (2, 3)
    heading = next(e for e in elements if e.text == "4.2. Folders")
    assert heading.page == 2


def test_a_copy_without_form_feeds_splits_at_its_page_footers() -> None:
    with_feeds = parse_document(rfc_text().encode(), "a.txt", LIMITS).elements
    without = parse_document(rfc_text(form_feeds=False).encode(), "b.txt", LIMITS).elements
    assert [(e.kind, e.text, e.level, e.page) for e in without] == [(e.kind, e.text, e.level, e.page) for e in with_feeds]
    assert len(split_pages(rfc_text(form_feeds=False))) == len(split_pages(rfc_text()))
    crlf = rfc_text(form_feeds=False).replace("\n", "\r\n")  # the footer check before the line loop sees "\r" too
    assert len(split_pages(crlf)) == len(split_pages(rfc_text()))


def test_the_real_internet_draft_in_its_html_rendering(corpus_dir: Path) -> None:
    path = corpus_dir / "docs" / "html" / "readability_ietf_draft_remotestorage.source.html"
    elements = parse_document(path.read_bytes(), path.name, LIMITS).elements
    headings = {e.text: (e.level, e.page) for e in elements if e.kind == "heading"}
    assert headings["4. Requests"] == (1, 4)
    assert headings["12.1. WebFinger"] == (2, 12)
    assert headings["17.2. Informative References"][0] == 2
    assert len(headings) >= 30
    text = "\n".join(e.text for e in elements)
    assert "[Page" not in text and "Internet-Draft              remoteStorage" not in text
    spanning = next(e for e in elements if e.text.startswith("A folder description is a map"))
    assert (spanning.page, spanning.page_end) == (4, 5)
    assert spanning.text.endswith("representing the folder's current version.")


def test_text_that_is_not_paginated_parses_as_before() -> None:
    """Form feeds without running lines, running lines on too few pages, a line repeated inside
    pages: the plain-text reading, element for element."""
    rng = random.Random(7)
    words = "budget review travel policy approval manager receipt hotel deadline claim".split()
    samples = []
    for _ in range(20):
        pages = ["\n\n".join(" ".join(rng.choices(words, k=rng.randint(4, 30))).capitalize() + "."
                             for _ in range(rng.randint(1, 5))) for _ in range(rng.randint(1, 6))]
        samples.append("\f".join(pages))
    samples.append("\f".join(["Total\n\nfirst body", "a\n\nb\n\nTotal\n\nc\n\nd", "third body\n\nTotal"]))  # two pages hold it at an edge
    samples.append("Report\n\nBody one.\f\nReport\n\nBody two.\n")  # two pages: too few to call it running
    for text in samples:
        assert read_text(text) is None
        assert parse_document(text.encode(), "notes.txt", LIMITS).elements == guessed_text_elements(text)


def test_numbers_that_do_not_follow_the_page_are_headings_not_furniture() -> None:
    """ "Chapter N" opening a page now and then changes with the chapter, not the page: kept."""
    pages = []
    for n in range(1, 13):
        top = [f"Chapter {n // 4 + 1}", ""] if n % 4 == 1 else []
        pages.append("\n".join(["ACME Annual Report 2025", ""] + top + [f"Body text of page {n} goes here.", "",
                                                                        f"- {n} -"]))
    elements = read_pages(pages)
    assert elements is not None
    text = [e.text for e in elements]
    assert [t for t in text if t.startswith("Chapter")] == ["Chapter 1", "Chapter 2", "Chapter 3"]
    assert "ACME Annual Report 2025" not in text and not any(t.startswith("- ") for t in text)


def test_hostile_shapes() -> None:
    # only form feeds: nothing to read, refused as a file without text as before
    assert read_text("\f" * 100_000) is None
    # every line the same: the running line goes, the body lines stay
    pages = ["same\nsame\nsame\nsame\nsame\nsame" for _ in range(5)]
    kept = read_pages(pages)
    assert kept is not None and sum(e.text.count("same") for e in kept) == 5 * 2
    # a megabyte line between running lines is text, not furniture, and is kept whole
    long_line = "word " * 200_000
    text = "\f".join(f"Header\n\n{long_line if n == 2 else 'body'}\n\nPage {n}" for n in range(1, 6))
    read = read_text(text)
    assert read is not None and any(len(e.text) > 900_000 for e in read)
    assert not any(e.text in ("Header", "Page 3") for e in read)
    # a paragraph of 200,000 wrapped lines on one page is one paragraph, every word kept
    wrapped = "\n".join(f"   word{i} of the wrapped paragraph" for i in range(200_000))
    text = "\f".join(f"Header\n\n{wrapped if n == 2 else '   body'}\n\nPage {n}" for n in range(1, 5))
    read = read_text(text)
    assert read is not None
    (big,) = [e for e in read if len(e.text) > 1_000_000]
    assert big.text.startswith("word0 of") and big.text.endswith("word199999 of the wrapped paragraph")
    assert big.text.count(" of the wrapped paragraph") == 200_000


def test_a_huge_paginated_file_reads_to_its_end() -> None:
    """20,000 pages (about 4 MB): every page's running lines gone, the last page's text there,
    a last line that differs only in a number not following the page kept."""
    rng = random.Random(3)
    names = ["Acme Ltd", "Globex", "Initech", "Umbrella", "Hooli", "Stark", "Wayne", "Tyrell", "Cyberdyne", "Soylent"]
    pages = [f"Line Printer Report            Page {n}\n\n   Account {n:05d} of {rng.choice(names)}\n"
             f"   closed the period with {rng.randint(1, 10**6)} units.\n\n   Reviewed on day {rng.randint(1, 28)}.\n" for n in range(1, 20_001)]
    elements = parse_document("\f".join(pages).encode(), "report.txt", LIMITS).elements
    assert len(elements) == 40_000
    assert elements[-2].text.startswith("Account 20000 of ") and elements[-2].page == 20_000
    assert not any("Line Printer" in e.text for e in elements)


@pytest.mark.parametrize("name", ["rfc.txt", "rfc.html"])
def test_both_renderings_give_the_same_sections(name: str) -> None:
    """The .txt and an HTML page of <pre> pages (as the IETF renders RFCs) read the same."""
    text = rfc_text()
    if name.endswith(".html"):
        pages = "".join(f"<pre class='newpage'>{page.replace('&', '&amp;').replace('<', '&lt;')}</pre>"
                        for page in text.split("\f"))
        data = f"<html><head><title>RFC 9999</title></head><body>{pages}</body></html>".encode()
    else:
        data = text.encode()
    elements = parse_document(data, name, LIMITS).elements
    assert [(e.level, e.text) for e in elements if e.kind == "heading"][-3:] == [
        (3, "4.2.1. Folder Retention"), (1, "5. Security Considerations"), (1, "Appendix A. Changes from Draft 03")]
    assert "[Page" not in "\n".join(e.text for e in elements)


def test_a_synced_rfc_answers_a_section_reference_from_its_own_section(capsys, tmp_path: Path, db_url: str) -> None:
    """Through the real job: the chunks hold no running line, carry their section path and
    pages, and "section 4.2.1" of the RFC finds that section's chunk first."""
    config = sync_folder(capsys, tmp_path, db_url, {
        "rfc9999.txt": rfc_text(),
        "handbook.txt": "Widget handbook\n\nWidgets are stored in folders for thirty days after their last use.\n"})
    rows = query(db_url, "SELECT c.text, c.section_path, c.page_start, c.page_end FROM chunks c"
                         " JOIN document_versions v ON v.id = c.version_id JOIN documents d ON d.id = v.document_id"
                         " WHERE d.uri = 'rfc9999.txt' AND v.status = 'live' ORDER BY c.ord")
    assert rows and not any("[Page" in text or "Example, et al." in text for text, *_ in rows)
    assert all(start is not None for _, _, start, _ in rows)
    assert any(path == ["4. Requests", "4.2. Folders", "4.2.1. Folder Retention"] for _, path, _, _ in rows)
    hits = search(capsys, config, "What does section 4.2.1 say about empty folders?", "all-staff")
    assert hits[0]["uri"] == "rfc9999.txt" and hits[0]["section_path"][-1] == "4.2.1. Folder Retention"


def test_short_code_listings_in_html_stay_code() -> None:
    """Three shell scripts on a page, each opening "#!/bin/sh" and closing "exit 0": their
    repeated first and last lines are code, not running lines of printed pages."""
    script = "#!/bin/sh\nset -e\n  echo \"step {n}\"\n  make build-{n}\nexit 0"
    pres = "".join(f"<pre>{script.format(n=n)}</pre>" for n in range(1, 5))
    elements = parse_document(f"<html><body>{pres}</body></html>".encode(), "scripts.html", LIMITS).elements
    assert [e.kind for e in elements] == ["code"] * 4
    assert all(e.text.startswith("#!/bin/sh") and e.text.endswith("exit 0") for e in elements)

"""Heading text is the title a reader would quote, whatever tool published the page.

A heading becomes a section path: shown in citations, matched by section references ("10.8")
and embedded into every chunk's identity line. Permalinks ("¶", "#", "§"), edit links
("[edit]"), zero-width hash links and Markdown attribute lists are not part of it; words that
merely look similar ("C#", "Article 5 §", a heading that links to itself) are."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import PROJECT_ROOT

from rag_pipeline.chunking.chunks import chunk_elements
from rag_pipeline.parsing import parse_document
from rag_pipeline.parsing.config import ParseLimits
from rag_pipeline.parsing.headings import tidy_heading
from rag_pipeline.parsing.markdown_direct import parse_markdown_file
from rag_pipeline.parsing.office import parse_with_unstructured

GENERALISATION_DOCS = PROJECT_ROOT / "evalsets" / "generalisation" / "docs"
BODY = "<p>The paragraph under this heading says what the section is about, at some length.</p>"


def _headings(data: bytes, name: str) -> list[str]:
    return [e.text for e in parse_document(data, name).elements if e.kind == "heading"]


def _page(heading: str, wrapper: str = "main") -> bytes:
    return f"<html><body><{wrapper}>{heading}{BODY}</{wrapper}></body></html>".encode()


# How real publishing tools mark up a heading (copied from their output, ids shortened).
TOOL_HEADINGS = {
    "sphinx": ('<h2><span class="section-number">10.8. </span>Log files<a class="headerlink" '
               'href="#log-files" title="Permalink to this heading">¶</a></h2>', "10.8. Log files"),
    "mkdocs": ('<h2 id="install">Install<a class="headerlink" href="#install" title="Permanent link">&para;</a></h2>',
               "Install"),
    "docusaurus": ('<h2 class="anchor anchorWithStickyNavbar" id="setup">Setup<a href="#setup" class="hash-link" '
                   'aria-label="Direct link to Setup">\u200b</a></h2>', "Setup"),
    "rustdoc": ('<h2 id="examples" class="section-header">Examples<a href="#examples" class="anchor">§</a></h2>',
                "Examples"),
    "mediawiki": ('<h2><span class="mw-headline" id="History">History</span><span class="mw-editsection">'
                  '<span class="mw-editsection-bracket">[</span><a href="/w/index.php?title=X&amp;action=edit&amp;'
                  'section=1">edit</a><span class="mw-editsection-bracket">]</span></span></h2>', "History"),
    "hugo": ('<h2 id="pricing">Pricing <a class="anchor" href="#pricing">#</a></h2>', "Pricing"),
    "vitepress": ('<h2 id="refunds" tabindex="-1">Refunds <a class="header-anchor" href="#refunds" '
                  'aria-label="Permalink to &quot;Refunds&quot;">\u200b</a></h2>', "Refunds"),
    "github": ('<h2><a id="user-content-usage" class="anchor" aria-hidden="true" href="#usage">'
               '<svg class="octicon" viewBox="0 0 16 16"></svg></a>Usage</h2>', "Usage"),
    "anchor.js": ('<h3 id="faq">FAQ<a class="anchorjs-link" aria-label="Anchor" href="#faq">\ue9cb</a></h3>', "FAQ"),
}


@pytest.mark.parametrize("tool", sorted(TOOL_HEADINGS))
def test_a_tools_permalink_or_edit_link_is_not_part_of_the_heading(tool: str) -> None:
    markup, title = TOOL_HEADINGS[tool]
    doc = parse_document(_page(markup), f"{tool}.html")
    assert [e.text for e in doc.elements if e.kind == "heading"] == [title]
    assert "says what the section is about" in " ".join(e.text for e in doc.elements)


@pytest.mark.parametrize(
    ("markup", "title"),
    [
        ('<h2 id="s7"><a href="#s7">7.2 Refunds and returns</a></h2>', "7.2 Refunds and returns"),
        ("<h2>Migrating to C#</h2>", "Migrating to C#"),
        ("<h2>Article 5 §</h2>", "Article 5 §"),
        ('<h2>Fixed in <a href="https://example.org/issues/12">#12</a></h2>', "Fixed in #12"),
        ('<h2>Release <a href="#v2">v2</a> notes</h2>', "Release v2 notes"),
    ],
)
def test_words_that_look_like_decoration_stay_in_the_heading(markup: str, title: str) -> None:
    assert _headings(_page(markup), "page.html") == [title]


def test_a_heading_the_site_calls_a_header_is_still_a_heading() -> None:
    """Readability's "unlikely" class names (header, toc, ...) used to delete rustdoc's and
    WordPress's headings (class "section-header", "entry-header") with their titles."""
    page = _page('<h1 class="entry-header">Annual leave policy</h1><h2 class="toc-heading">Carry-over</h2>')
    assert _headings(page, "page.html") == ["Annual leave policy", "Carry-over"]


def test_sphinx_documents_keep_section_numbers_and_lose_the_pilcrow_in_section_paths(embedder) -> None:
    """The Debian Policy chapters of the generalisation set, through parse and chunking: what a
    citation shows and a section reference matches."""
    data = (GENERALISATION_DOCS / "debian-policy-ch-files.html").read_bytes()
    doc = parse_document(data, "debian-policy-ch-files.html")
    headings = [e.text for e in doc.elements if e.kind == "heading"]
    assert "10.8. Log files" in headings and "10.7.2. Location" in headings
    assert not [h for h in headings if "¶" in h]
    chunks = chunk_elements(doc.elements, embedder.count_tokens, embedder.max_tokens)
    paths = {part for chunk in chunks for part in chunk.section_path}
    assert "10.8. Log files" in paths
    assert not [p for p in paths if "¶" in p]
    assert not [c.text for c in chunks if "¶" in c.text.split("\n", 1)[0]]


def test_wikipedia_headings_lose_their_edit_links(corpus_dir: Path) -> None:
    data = (corpus_dir / "docs" / "html" / "readability_wikipedia_mozilla_en.source.html").read_bytes()
    headings = _headings(data, "mozilla.html")
    assert "History" in headings and "Components" in headings
    assert not [h for h in headings if "edit" in h.lower()]


@pytest.mark.parametrize(
    ("markdown", "title"),
    [
        ("## Refunds {#refunds}\n\ntext", "Refunds"),
        ("## Refunds {#refunds .policy data-x=1}\n\ntext", "Refunds"),
        ("## Refunds ¶\n\ntext", "Refunds"),
        ("## Refunds {#refunds} ¶\n\ntext", "Refunds"),
        ("## Zero\u200bwidth soft\u00adhyphen \U0001f517\n\ntext", "Zerowidth softhyphen"),
        ("# C#\n\ntext", "C#"),
        ("## Learn F# and C##\n\ntext", "Learn F# and C##"),
        ("# Closed heading #\n\ntext", "Closed heading"),
        ("## Sets {a, b}\n\ntext", "Sets {a, b}"),
        ("## {#only-attributes}\n\ntext", "{#only-attributes}"),
        ("## می\u200cخواهم\n\ntext", "می\u200cخواهم"),  # a zero-width non-joiner is Persian spelling
    ],
)
def test_markdown_heading_text(markdown: str, title: str) -> None:
    assert _headings(markdown.encode(), "notes.md") == [title]


def test_hashes_ending_a_heading_are_kept_the_same_way_on_both_markdown_paths() -> None:
    """CommonMark keeps "C#": a closing sequence needs a space before it. The direct parser and
    the unstructured path read the same repaired source, and code blocks are left alone."""
    source = b"# C#\n\n```\n# F#\n```\n\n## Closed ##\n\ntext\n"
    limits = ParseLimits()
    direct = parse_markdown_file(source, name="a.md", limits=limits).elements
    former = parse_with_unstructured(source, name="a.md", kind="markdown", limits=limits).elements
    assert [e.to_dict() for e in direct] == [e.to_dict() for e in former]
    assert [(e.kind, e.text) for e in direct] == [("heading", "C#"), ("code", "# F#"), ("heading", "Closed"),
                                                  ("paragraph", "text")]


def test_a_heading_of_nothing_but_decoration_is_dropped_and_its_text_kept() -> None:
    doc = parse_document(b"# Policy\n\n## \xc2\xb6\n\nThe body of the unnamed section stays.\n", "a.md")
    assert [(e.kind, e.text) for e in doc.elements] == [
        ("heading", "Policy"), ("paragraph", "The body of the unnamed section stays."),
    ]


def test_a_page_of_only_decorated_empty_headings_is_refused_as_textless() -> None:
    page = _page('<h2><a class="headerlink" href="#a">¶</a></h2>', "main").replace(BODY.encode(), b"")
    with pytest.raises(Exception, match="no text found"):
        parse_document(page, "empty.html")


@pytest.mark.parametrize(
    "heading",
    [
        "x" + "{#" * 200_000,  # an unclosed attribute list, repeated: the tidy is linear
        " " * 300_000 + "x",
        "Title" + "¶" * 100_000,
        "Title" + " {#a}" * 50_000,
    ],
)
def test_hostile_huge_headings_are_tidied_in_linear_time(heading: str) -> None:
    tidied = tidy_heading(heading)
    assert tidied and "¶" not in tidied[-1:] and not tidied.endswith(" ")


def test_a_megabyte_heading_line_parses(tmp_path: Path) -> None:
    source = ("# " + "Refunds and returns " * 50_000 + "C# {#r}\n\nbody\n").encode()
    headings = _headings(source, "huge.md")
    assert len(headings) == 1 and headings[0].endswith("C#") and headings[0].startswith("Refunds and returns")


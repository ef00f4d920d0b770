"""Markdown blocks cut where python-markdown splits them (parsing/markdown_blocks.py): the HTML
python-markdown makes is the same, and no block is handed to its processors that they would split
again and again (what made a long block's parse time grow with its square)."""

from __future__ import annotations

import random
from pathlib import Path

import markdown
import pytest

from rag_pipeline.parsing import parse_document
from rag_pipeline.parsing.config import ParseLimits
from rag_pipeline.parsing.markdown_blocks import cut_block, linear_markdown
from rag_pipeline_tests.helpers import bench_module
from rag_pipeline_tests.parsing.test_markdown_direct import CONSTRUCTS

_EXTENSIONS = ["tables", "fenced_code"]

# lines where a cut could change how python-markdown reads a block: headings, rules, underlines and
# definitions beside what its processors test first (code, tables, lists, quotes, fences), inline and
# block HTML, carriage returns, tabs and python-markdown's own placeholder markers
_LINES = [
    "- c", "1. a", "", "", "    b", "# H", "## H2", "#tag", "text", "| a |", "|---|", "```", "~~~", "> q", "\tt", "  c",
    "Setext", "---", ": def", "***", "* * *", "___", "===", "  ---", "- - -", "# a | b", "--|--", "a | b", "#x \\",
    "t\r---", "\t---", "---\t", "\x02---", "   ", "--", "=", "   ***", "****", "-", "# H #", "\\# no", "> ---",
    "> q\n===", "+ + +", "--- ", "    ---", "  # not", "*a*", "**", "   > x", "    # c", "|", "a|b", "\t# t", "#",
    "######## x", "---|---", ":---:|---", "- # h", "> # h", "<b>x</b> t", "<br>", "<img src=x>", "<span>s", "</span>",
    "<http://a.b>", '<a href="x">l</a>', "<sup>1</sup>", "<b", "t <div> mid", "[r]: http://u", '[r]: u "t"', "[r]:",
    '  "title"', "(paren)", "[s]: <x> (t)", "   [t]: v", "[u]:\n  w", "text [r] ref", "[r]: u\n[s]: v", "[a|b]:",
    "<div>", "</div>", "<p>x</p>", "<!-- c -->", ">", "- a\n    # h\n    t", "> - a", "* b\n    ***",
    "        deep", "    [r]: u", "    | a |", "     ", "    - l", "\t\tcode", "    > q", "   x", "    ```",
]


_HTML_LINES = [  # raw HTML python-markdown stashes (the block after it opens with a line break), md_in_html's
    '<details markdown="1">', "</details>", "<div>x</div>", '<div markdown="1">', "</div>", "<summary>s</summary>",
    "<hr>", "<pre>", "</pre>", "<?php x ?>", "<![CDATA[ x ]]>", "<table><tr><td>x</td></tr></table>", "\x02",
]
_BLANKS = ["   ", "\u3000", " \t ", "\u00a0", "\x0c"]  # NormalizeWhitespace empties only the first three


def _html(text: str, extensions: list[str] = _EXTENSIONS) -> str:
    return markdown.markdown(text, extensions=extensions)


def _linear(text: str, extensions: list[str] = _EXTENSIONS) -> str:
    return linear_markdown(extensions).convert(text)


def test_random_documents_render_to_the_same_html() -> None:
    """The lines above, quoted, nested, indented as code or under list items, after raw HTML,
    with md_in_html and without. Drafts that cut at a heading inside a table's block, at a rule
    under a block's first line, around a definition whose URL is on the next line, or in a loose
    list item's first blocks (python-markdown detabs a heading's remainder there) each failed
    some of these."""
    rng = random.Random(22)
    prefixes = ("", "", "> ", "    ", "> > ", "        ", "- ", "  ")
    for _ in range(3000):
        extensions = _EXTENSIONS + (["md_in_html"] if rng.random() < 0.3 else [])
        pool = _LINES if rng.random() < 0.5 else _LINES + _HTML_LINES + _BLANKS
        doc = "\n".join(rng.choice(prefixes) + rng.choice(pool) for _ in range(rng.randint(2, 50)))
        doc += rng.choice(("", "", "\n", "\n\n\n"))
        assert _linear(doc, extensions) == _html(doc, extensions), (extensions, doc)


@pytest.mark.parametrize("name", sorted(CONSTRUCTS))
def test_constructs_render_to_the_same_html(name: str) -> None:
    assert _linear(CONSTRUCTS[name]) == _html(CONSTRUCTS[name])


def test_corpus_markdown_renders_to_the_same_html(corpus_dir: Path) -> None:
    files = sorted((corpus_dir / "docs").rglob("*.md"))
    assert files
    for path in files:
        text = path.read_text(encoding="utf-8")
        assert _linear(text) == _html(text), path.name


SHAPES = bench_module("markdown_shapes")


def _characters_tested(converter: markdown.Markdown, text: str) -> tuple[int, str]:
    """How many characters python-markdown's block processors are handed to test, and the HTML:
    each test reads its block (searching it for a heading, a rule, a quote...), so a block
    re-read after every split makes this grow with the square of the text."""
    total = 0
    for processor in converter.parser.blockprocessors:
        def counted(parent: object, block: str, test=processor.test) -> bool:
            nonlocal total
            total += len(block)
            return test(parent, block)
        processor.test = counted
    html = converter.convert(text)
    return total, html


@pytest.mark.parametrize("shape", sorted(SHAPES.LONG_BLOCKS))
def test_no_block_is_read_again_and_again(shape: str) -> None:
    """At 300 entries python-markdown alone hands its processors hundreds of times the text
    (every shape here is quadratic for it); cut, a few dozen times at most, whatever the length
    (measured: 3.5 to 18.4)."""
    text = SHAPES.long_text(shape, 300)
    alone, expected = _characters_tested(markdown.Markdown(extensions=_EXTENSIONS), text)
    cut, html = _characters_tested(linear_markdown(_EXTENSIONS), text)
    assert html == expected
    assert alone > 300 * len(text)
    assert cut < 40 * len(text)


def test_a_megabyte_of_long_blocks_keeps_every_heading_and_rule() -> None:
    """A 1 MB changelog of the shapes with headings (it took minutes before, past the parse time
    limit, so the file was quarantined): each entry's heading is indexed. Not timed: the figure
    is in bench/bench_markdown_blocks.py."""
    shapes = ["changelog", "definitions between lines", "headings over underlines", "inline HTML and rules",
              "lines between rules", "setext-looking entries", "code under headings"]  # entry i takes shape i % 7
    data = "".join(SHAPES.LONG_BLOCKS[shapes[i % len(shapes)]](i) for i in range(7000)).encode() * 5
    assert len(data) > 1_000_000
    elements = parse_document(data, "changelog.md", ParseLimits(ocr=False)).elements
    headings = [e.text for e in elements if e.kind == "heading"]
    for heading in ("v1.0.0", "Part 2", "Title 2", "Entry 5", "Step 6", "v1.6993.0", "Step 6999"):
        assert headings.count(heading) == 5, heading
    assert sum(e.text == "entry 4 of the log" for e in elements) == 5
    assert sum(e.text == "run step 6999" for e in elements) == 5


def test_where_blocks_are_cut_and_where_not() -> None:
    assert cut_block("a\nb\n---\nc") == ["a\nb", "---", "c"]  # a rule inside a block
    assert cut_block("Title\n---\ntext") == ["Title\n---", "text"]  # an underline: the heading stays whole
    assert cut_block("***\n---\nx") == ["***\n---", "x"]  # a rule over an underline is a heading's text
    assert cut_block("text\n# H\nmore") == ["text", "# H", "more"]
    assert cut_block("a | b\n--|--\n# row\nc") == ["a | b\n--|--\n# row\nc"]  # a table's rows, headings too
    assert cut_block("    code\n# H") == ["    code\n# H"]  # opens indented: read whole
    assert cut_block("t\n[r]: u\nv") == ["t", "[r]: u", "v"]
    assert cut_block("t\n[r]:\n  u\nv") == ["t\n[r]:\n  u\nv"]  # a definition over two lines stays put
    assert cut_block("t\n> q\n[r]: u\nv") == ["t\n> q\n[r]: u\nv"]  # a quote takes the rest of the block
    assert cut_block("<b>x</b>\nz\n---\ny") == ["<b>x</b>\nz", "---", "y"]  # inline HTML is text
    assert cut_block("a\n\x02wzxhzdk:0\x03\n# x") == ["a\n\x02wzxhzdk:0\x03", "# x"]  # raw HTML's placeholder
    assert cut_block("\nt\n***\nu\n") == ["\n", "t", "***", "u\n"]  # after raw HTML; the end stays last
    assert cut_block("# H\n    code\n***\n    more\n\n  \nx") == ["# H\n    code\n***\n    more\n\n  \nx"]  # a blank line
    assert cut_block("# H\n    code\n  \n***\n    c2\nx") == ["# H", "    code\n  ", "***", "    c2", "x"]  # code ends
    assert cut_block("# H\n    code\nx", code=False) == ["# H", "    code\nx"]  # under a list item: its continuation
    assert cut_block("| a\nt\n***\nu") == ["| a\nt", "***", "u"]  # a "|" with no separator row under it
    assert cut_block("| a\n|--\n***") == ["| a\n|--\n***"]  # a table
    assert cut_block("a\f# x\u2028# y\n# z") == ["a\f# x\u2028# y", "# z"]  # lines end at "\n" only

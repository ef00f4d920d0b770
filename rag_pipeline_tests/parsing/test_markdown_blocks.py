"""Markdown blocks set apart where python-markdown splits them (parsing/markdown_blocks.py): the
HTML python-markdown makes is the same, and no block is left that it would split again and again
(what made a long block's parse time grow with its square)."""

from __future__ import annotations

import random
from pathlib import Path

import markdown
import pytest

from rag_pipeline.parsing import parse_document
from rag_pipeline.parsing.config import ParseLimits
from rag_pipeline.parsing.markdown_blocks import _BLOCK_LEVEL, blocks_apart, linear_markdown
from rag_pipeline_tests.parsing.test_markdown_direct import CONSTRUCTS

_EXTENSIONS = ["tables", "fenced_code"]

# lines where a split could change how python-markdown reads a block: headings, rules, underlines and
# definitions beside what its processors test first (code, tables, lists, quotes, fences), inline HTML,
# carriage returns, tabs and python-markdown's own placeholder markers
_LINES = [
    "- c", "1. a", "", "", "    b", "# H", "## H2", "#tag", "text", "| a |", "|---|", "```", "~~~", "> q", "\tt", "  c",
    "Setext", "---", ": def", "***", "* * *", "___", "===", "  ---", "- - -", "# a | b", "--|--", "a | b", "#x \\",
    "t\r---", "\t---", "---\t", "\x02---", "   ", "--", "=", "   ***", "****", "-", "# H #", "\\# no", "> ---",
    "> q\n===", "+ + +", "--- ", "    ---", "  # not", "*a*", "**", "   > x", "    # c", "|", "a|b", "\t# t", "#",
    "######## x", "---|---", ":---:|---", "- # h", "> # h", "<b>x</b> t", "<br>", "<img src=x>", "<span>s", "</span>",
    "<http://a.b>", '<a href="x">l</a>', "<sup>1</sup>", "<b", "t <div> mid", "[r]: http://u", '[r]: u "t"', "[r]:",
    '  "title"', "(paren)", "[s]: <x> (t)", "   [t]: v", "[u]:\n  w", "text [r] ref", "[r]: u\n[s]: v", "[a|b]:",
]


def _html(text: str) -> str:
    return markdown.markdown(text, extensions=_EXTENSIONS)


def test_random_documents_render_to_the_same_html() -> None:
    """A version that split at a heading inside a table's block, at a rule under a block's first
    line, at a line of spaces opening the text, or around a definition whose URL is on the next
    line failed dozens of these."""
    rng = random.Random(22)
    for _ in range(1500):
        doc = "\n".join(rng.choice(_LINES) for _ in range(rng.randint(2, 50)))
        assert _html(blocks_apart(doc)) == _html(doc), repr(doc)
        assert linear_markdown(_EXTENSIONS).convert(doc) == _html(doc), repr(doc)


def test_random_quotes_list_items_and_raw_html_render_to_the_same_html() -> None:
    """The same lines quoted, nested and indented under list items, beside raw HTML blocks:
    the converter cuts blocks inside quotes and list continuations too. A version that also cut
    a list item's first blocks failed here (python-markdown detabs a heading's remainder in a
    loose list item)."""
    lines = [*_LINES, "<div>", "</div>", "<p>x</p>", "<!-- c -->", ">", "- a\n    # h\n    t", "> - a", "* b\n    ***"]
    rng = random.Random(23)
    for _ in range(1500):
        doc = "\n".join(rng.choice(("", "> ", "    ", "> > ")) + rng.choice(lines) for _ in range(rng.randint(2, 50)))
        assert linear_markdown(_EXTENSIONS).convert(doc) == _html(doc), repr(doc)
        assert _html(blocks_apart(doc)) == _html(doc), repr(doc)


@pytest.mark.parametrize("name", sorted(CONSTRUCTS))
def test_constructs_render_to_the_same_html(name: str) -> None:
    assert _html(blocks_apart(CONSTRUCTS[name])) == _html(CONSTRUCTS[name])
    assert linear_markdown(_EXTENSIONS).convert(CONSTRUCTS[name]) == _html(CONSTRUCTS[name])


def test_corpus_markdown_renders_to_the_same_html(corpus_dir: Path) -> None:
    files = sorted((corpus_dir / "docs").rglob("*.md"))
    assert files
    for path in files:
        text = path.read_text(encoding="utf-8")
        assert _html(blocks_apart(text)) == _html(text), path.name
        assert linear_markdown(_EXTENSIONS).convert(text) == _html(text), path.name


_LONG_BLOCKS = {  # what python-markdown re-read to the end at every split: time growing with the square
    "changelog": lambda i: f"## v1.{i}.0\n- fixed bug {i}\n- added option {i}\n",
    "lines between rules": lambda i: f"entry {i} of the log\n* * *\n",
    "setext-looking entries": lambda i: f"Entry {i}\n--------\nitem text {i}\n",
    "definitions between lines": lambda i: f"text {i}\n[r{i}]: http://example.com/{i}\n",
    "inline HTML and rules": lambda i: f"<b>entry</b> {i}\n---\n",
    "headings over underlines": lambda i: f"# Part {i}\nTitle {i}\n=====\n",
}


@pytest.mark.parametrize("shape", sorted(_LONG_BLOCKS))
def test_no_block_is_left_that_python_markdown_splits_again(shape: str) -> None:
    """Each block python-markdown reads holds at most one line it splits at, so no remainder is
    read twice; before, each of these shapes was one block of 900 lines."""
    text = "".join(_LONG_BLOCKS[shape](i) for i in range(300))
    apart = blocks_apart(text)
    assert _html(apart) == _html(text)
    assert max(len(block.split("\n")) for block in apart.split("\n\n")) <= 3


def test_blocks_inside_quotes_and_list_items_are_cut_too(monkeypatch: pytest.MonkeyPatch) -> None:
    """What python-markdown reads inside a quote or a list item's continuation, it reads by the
    same processors, re-reading each remainder: the blocks it is handed there are cut as well
    (counted where its own parseBlocks receives them)."""
    from markdown.blockparser import BlockParser

    sizes: list[list[int]] = []  # per call, the lines of each block handed over
    original = BlockParser.parseBlocks

    def counted(self: BlockParser, parent: object, blocks: list[str]) -> None:
        sizes.append([len(block.split("\n")) for block in blocks])
        original(self, parent, blocks)

    monkeypatch.setattr(BlockParser, "parseBlocks", counted)
    quoted = "".join(f"> entry {i}\n> * * *\n> [r{i}]: http://x/{i}\n" for i in range(300))
    listed = "- item\n\n" + "".join(f"    # h{i}\n    text {i}\n" for i in range(300))
    for text in (quoted, listed):
        expected = _html(text)
        sizes.clear()
        assert linear_markdown(_EXTENSIONS).convert(text) == expected
        assert max(max(call) for call in sizes[1:]) <= 3  # below the document's own blocks, each handed over cut
        sizes.clear()
        _html(text)
        assert max(max(call) for call in sizes[1:]) >= 600  # python-markdown alone: the quote or item as one block


def test_a_megabyte_of_long_blocks_keeps_every_heading_and_rule() -> None:
    """A 1 MB changelog of every shape above (it took minutes before, past the parse time limit,
    so the file was quarantined): each entry's heading is indexed. Not timed: the figure is in
    bench/bench_markdown_blocks.py."""
    shapes = sorted(_LONG_BLOCKS)  # entry i takes shape i % 6: 0 changelog, 2 headings over underlines, ...
    data = "".join(_LONG_BLOCKS[shapes[i % len(shapes)]](i) for i in range(6000)).encode() * 6
    assert len(data) > 1_000_000
    elements = parse_document(data, "changelog.md", ParseLimits(ocr=False)).elements
    headings = [e.text for e in elements if e.kind == "heading"]
    for heading in ("v1.0.0", "Part 2", "Title 2", "entry 3", "Entry 5", "v1.5994.0", "Title 5996"):
        assert headings.count(heading) == 6, heading
    assert sum(e.text == "entry 4 of the log" for e in elements) == 6


def test_where_blank_lines_go_and_where_none_do() -> None:
    assert blocks_apart("a\nb\n---\nc") == "a\nb\n\n---\n\nc"  # a rule inside a block: set apart
    assert blocks_apart("Title\n---\ntext") == "Title\n---\n\ntext"  # an underline: the heading stays whole
    assert blocks_apart("***\n---\nx") == "***\n---\n\nx"  # a rule over an underline is a heading's text
    assert blocks_apart("text\n# H\nmore") == "text\n\n# H\n\nmore"
    assert blocks_apart("a | b\n--|--\n# row\nc") == "a | b\n--|--\n# row\nc"  # a table's rows, headings too
    assert blocks_apart("    code\n# H") == "    code\n# H"  # opens indented: read whole
    assert blocks_apart("a\n```\n# x\n---\n```\nb") == "a\n```\n# x\n---\n```\nb"  # fenced code
    assert blocks_apart("t\n[r]: u\nv") == "t\n\n[r]: u\n\nv"
    assert blocks_apart("t\n[r]:\n  u\nv") == "t\n[r]:\n  u\nv"  # a definition over two lines stays put
    assert blocks_apart("t\n> q\n[r]: u\nv") == "t\n> q\n[r]: u\nv"  # a quote takes the rest of the block
    assert blocks_apart("<b>x</b>\nz\n---\ny") == "<b>x</b>\nz\n\n---\n\ny"  # inline HTML is text
    assert blocks_apart("<div>\n# x\n</div>\n---") == "<div>\n# x\n</div>\n---"  # raw HTML: as it is
    assert blocks_apart("a <!-- c\n# x\n--> b") == "a <!-- c\n# x\n--> b"
    assert blocks_apart("a\r\n# x\tb\n---") == "a\n\n# x b\n\n---"  # python-markdown's own line endings and tabs
    assert blocks_apart("a\f# x\u2028# y\n# z") == "a\f# x\u2028# y\n\n# z"  # lines end at "\n" only


def test_the_block_level_tags_are_python_markdowns() -> None:
    """A line opening with one of these may be taken out as raw HTML, so such a text is left as it
    is; the list must cover python-markdown's."""
    import re

    ours = re.compile(rf"(?:{_BLOCK_LEVEL})")
    assert all(ours.fullmatch(tag) for tag in markdown.Markdown().block_level_elements)

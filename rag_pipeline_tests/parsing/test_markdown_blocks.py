"""Markdown blocks cut where python-markdown splits them (parsing/markdown_blocks.py): the HTML
python-markdown makes is the same, and no block is handed to its processors that they would split
again and again (what made a long block's parse time grow with its square)."""

from __future__ import annotations

import random
from pathlib import Path

import markdown
import pytest
from markdown.blockparser import BlockParser

from rag_pipeline.parsing import parse_document
from rag_pipeline.parsing.config import ParseLimits
from rag_pipeline.parsing.markdown_blocks import cut_block, linear_markdown
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
]


def _html(text: str) -> str:
    return markdown.markdown(text, extensions=_EXTENSIONS)


def _linear(text: str) -> str:
    return linear_markdown(_EXTENSIONS).convert(text)


def test_random_documents_render_to_the_same_html() -> None:
    """The lines above, quoted, nested and indented under list items. Drafts that cut at a
    heading inside a table's block, at a rule under a block's first line, at a first line of
    spaces, around a definition whose URL is on the next line, or in a loose list item's first
    blocks (python-markdown detabs a heading's remainder there) each failed some of these."""
    rng = random.Random(22)
    for _ in range(3000):
        doc = "\n".join(rng.choice(("", "", "> ", "    ", "> > ")) + rng.choice(_LINES) for _ in range(rng.randint(2, 50)))
        assert _linear(doc) == _html(doc), repr(doc)


@pytest.mark.parametrize("name", sorted(CONSTRUCTS))
def test_constructs_render_to_the_same_html(name: str) -> None:
    assert _linear(CONSTRUCTS[name]) == _html(CONSTRUCTS[name])


def test_corpus_markdown_renders_to_the_same_html(corpus_dir: Path) -> None:
    files = sorted((corpus_dir / "docs").rglob("*.md"))
    assert files
    for path in files:
        text = path.read_text(encoding="utf-8")
        assert _linear(text) == _html(text), path.name


_LONG_BLOCKS = {  # what python-markdown re-read to the end at every split: time growing with the square
    "changelog": lambda i: f"## v1.{i}.0\n- fixed bug {i}\n- added option {i}\n",
    "lines between rules": lambda i: f"entry {i} of the log\n* * *\n",
    "setext-looking entries": lambda i: f"Entry {i}\n--------\nitem text {i}\n",
    "definitions between lines": lambda i: f"text {i}\n[r{i}]: http://example.com/{i}\n",
    "inline HTML and rules": lambda i: f"<b>entry</b> {i}\nmore\n---\n",
    "headings over underlines": lambda i: f"# Part {i}\nTitle {i}\n=====\n",
    "rules and definitions in a quote": lambda i: f"> entry {i}\n> * * *\n> [r{i}]: http://x/{i}\n",
    "headings in a list item": lambda i: ("- item\n\n" if i == 0 else "") + f"    # h{i}\n    text {i}\n",
}


@pytest.mark.parametrize("shape", sorted(_LONG_BLOCKS))
def test_no_block_is_handed_over_that_python_markdown_splits_again(shape: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Counted where python-markdown's own parseBlocks receives its blocks: each holds at most
    three lines (one it splits at), except a quote and a list item's indented continuation,
    which its quote and list processors take whole before handing their inner blocks over (cut
    then); python-markdown alone is handed each of these shapes as one block of 600 lines or
    more."""
    handed: list[str] = []
    original = BlockParser.parseBlocks

    def counted(self: BlockParser, parent: object, blocks: list[str]) -> None:
        handed.extend(blocks)
        original(self, parent, blocks)

    monkeypatch.setattr(BlockParser, "parseBlocks", counted)
    text = "".join(_LONG_BLOCKS[shape](i) for i in range(300))
    expected = _html(text)
    assert max(len(block.split("\n")) for block in handed) >= 600
    handed.clear()
    assert _linear(text) == expected
    assert max(len(block.split("\n")) for block in handed if not block.startswith(("    ", ">"))) <= 3


def test_a_megabyte_of_long_blocks_keeps_every_heading_and_rule() -> None:
    """A 1 MB changelog of every shape above (it took minutes before, past the parse time limit,
    so the file was quarantined): each entry's heading is indexed. Not timed: the figure is in
    bench/bench_markdown_blocks.py."""
    shapes = ["changelog", "definitions between lines", "headings over underlines", "inline HTML and rules",
              "lines between rules", "setext-looking entries"]  # entry i takes shape i % 6
    data = "".join(_LONG_BLOCKS[shapes[i % len(shapes)]](i) for i in range(6000)).encode() * 6
    assert len(data) > 1_000_000
    elements = parse_document(data, "changelog.md", ParseLimits(ocr=False)).elements
    headings = [e.text for e in elements if e.kind == "heading"]
    for heading in ("v1.0.0", "Part 2", "Title 2", "Entry 5", "v1.5994.0", "Title 5996"):
        assert headings.count(heading) == 6, heading
    assert sum(e.text == "entry 4 of the log" for e in elements) == 6


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
    assert cut_block("a\n\x02wzxhzdk:0\x03\n# x") == ["a\n\x02wzxhzdk:0\x03\n# x"]  # raw HTML's placeholder
    assert cut_block("a\f# x\u2028# y\n# z") == ["a\f# x\u2028# y", "# z"]  # lines end at "\n" only

"""Long Markdown blocks that python-markdown alone reads in time growing with their square: it
splits a block at a heading, rule, setext underline, link definition or the end of indented code,
then reads the remainder again from the top. One generator per shape, entry i of each; the
bench (bench_markdown_blocks.py) times them, the tests (parsing/test_markdown_blocks.py) check
the HTML and how much the block processors are handed."""

from __future__ import annotations

from collections.abc import Callable

LONG_BLOCKS: dict[str, Callable[[int], str]] = {
    "changelog": lambda i: f"## v1.{i}.0\n- fixed bug {i}\n- added option {i}\n",
    "lines between rules": lambda i: f"entry {i} of the log\n* * *\n",
    "setext-looking entries": lambda i: f"Entry {i}\n--------\nitem text {i}\n",
    "definitions between lines": lambda i: f"text {i}\n[r{i}]: http://example.com/{i}\n",
    "inline HTML and rules": lambda i: f"<b>entry</b> {i} and text\nmore\n---\n",
    "headings over underlines": lambda i: f"# Part {i}\nTitle {i}\n=====\n",
    "rules and definitions in a quote": lambda i: f"> entry {i}\n> * * *\n> [r{i}]: http://x/{i}\n",
    "headings in a list item": lambda i: ("- item\n\n" if i == 0 else "") + f"    # h{i}\n    text {i}\n",
    "code lines between rules": lambda i: f"    code line {i}\n***\n",
    "code under headings": lambda i: f"# Step {i}\n    run step {i}\n",
    "code and underlines in a quote": lambda i: f">     code {i}\n> Title {i}\n> ---\n",
    "rules after raw HTML": lambda i: ("<div>x</div>\n" if i == 0 else "") + f"entry {i}\n***\n",
    "rules under a line with a pipe": lambda i: ("a | b\n" if i == 0 else "") + f"entry {i}\n***\n",
    "definitions in a list item": lambda i: ("- item\n" if i == 0 else "") + f"text {i}\n[r{i}]: http://x/{i}\n",
    "definitions in a loose list": lambda i: ("- a\n\n- b\n" if i == 0 else "") + f"text {i}\n[r{i}]: http://x/{i}\n",
    "rules in a nested list": lambda i: ("- x\n    - y\n" if i == 0 else "") + f"      entry {i}\n      ***\n",
}


def long_text(shape: str, entries: int) -> str:
    """`entries` entries of one shape, entry i from its generator."""
    return "".join(LONG_BLOCKS[shape](i) for i in range(entries))

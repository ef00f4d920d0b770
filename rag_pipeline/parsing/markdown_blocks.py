"""Blocks cut where python-markdown splits them anyway, so that it reads a long block in linear
time: `linear_markdown` is the python-markdown converter both Markdown paths use.

python-markdown splits a block at a heading, a horizontal rule, a setext underline or a link
reference definition, hands the remainder back and reads it again from the top: each of its
block tests scans the remainder, so a block of many such lines costs time growing with the
square of the block. Changelogs, logs and exported notes are written that way (no blank lines);
4,000 lines between rules took 6.9 s, 4,000 definitions between lines of text 26 s, and a
megabyte of either went past the parse time limit. The cuts go only where python-markdown
splits, so the HTML is the same (tested against python-markdown itself)."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from xml.etree.ElementTree import Element

    from markdown import Markdown

_SETEXT_UNDERLINE = re.compile(r"(?:=+|-+) *")  # python-markdown's, read on a block's second line only
_LIST_ITEM = re.compile(r"[ ]{0,3}(?:\d+\.|[*+-])[ ]+")  # python-markdown's OList and UList tests
# a line that splits a block before references are looked for (heading, rule); tested per block
_SPLIT_OR_QUOTE = re.compile(r"(?m)^(?:#|[ ]{0,3}(?:(?:-[ ]{0,2}){3,}|(?:_[ ]{0,2}){3,}|(?:\*[ ]{0,2}){3,})[ ]*$)")


def linear_markdown(extensions: list[str]) -> Markdown:
    """A python-markdown converter that cuts every list of blocks it reads where it would split
    them anyway: the document's blocks, and those inside block quotes and a list item's indented
    continuation, which it reads by the same processors (a long quote of rules or definitions was
    as quadratic as a long block). Left as they are: blocks holding a raw-HTML placeholder, and a
    list item's first blocks, where a heading's remainder is detabbed (a loose list) or a
    paragraph joins the item's text (a tight one)."""
    import markdown

    converter = markdown.Markdown(extensions=extensions)
    read, state = converter.parser.parseBlocks, converter.parser.state

    def parse_blocks(parent: Element, blocks: list[str]) -> None:
        if state and state[-1] not in ("blockquote", "detabbed"):
            return read(parent, blocks)
        return read(parent, [piece for block in blocks for piece in cut_block(block)])

    converter.parser.parseBlocks = parse_blocks
    return converter


def cut_block(block: str) -> list[str]:
    """`block` in the pieces python-markdown would split it into anyway: cut around its headings,
    rules and setext underlines, then around one-line link definitions. A block holding a raw-HTML
    placeholder, or opening or ending with a line break (python-markdown's own blocks do not), is
    left whole."""
    if "\n" not in block or "\x02" in block or "\n\n" in block or block.strip("\n") != block:
        return [block]
    parts = _split_lines_apart(block).split("\n\n")
    return [piece for part in parts for piece in _at_definitions(part)] if "]:" in block else parts


def _split_lines_apart(text: str) -> str:
    """Blank lines around headings, rules and underlines, where python-markdown's processors'
    order splits. A block opening indented (code, a list item's
    continuation) or with a "|" (a table, whose rows may be headings) is read whole. Otherwise
    every heading line splits it, wherever it is; between headings, an underline under a part's
    first line makes a setext heading (so a rule over an underline is a heading's text), and a
    rule splits the part unless the part opens indented or with a "|"."""
    from markdown.blockprocessors import HashHeaderProcessor, HRProcessor

    out: list[str] = []
    opens_block, whole, part_whole = True, False, False  # a block after a blank line or heading; read whole
    position, pending = 0, ""  # the line's index in its part; what the line after a split gets
    for line in text.split("\n"):  # "\n" only: str.splitlines would also break at \f, \x1c, \u2028 ...
        underline = position == 1 and _SETEXT_UNDERLINE.fullmatch(line) is not None
        if pending == "split" or (pending == "unless underline" and not underline):
            out.append("")
            position, underline = 0, False
        pending = ""
        if opens_block:
            whole, opens_block = _read_whole(line), False
        if whole:
            out.append(line)
            continue
        if line[:1] == "#" and HashHeaderProcessor.RE.match(line + "\n"):
            if position > 0:
                out.append("")
            out.append(line)
            opens_block, position, pending = True, 0, "split"
            continue
        if position == 0:
            part_whole = _read_whole(line)
        rule = not part_whole and not underline and HRProcessor.SEARCH_RE.match(line) is not None
        if rule and position > 0:  # set apart on both sides: alone, it can be neither a table nor setext
            out.append("")
            pending = "split"
        elif rule:
            pending = "unless underline"
        elif underline and not part_whole:
            pending = "split"
        out.append(line)
        position = 0 if pending == "split" else position + 1
    return "\n".join(out)


def _read_whole(first_line: str) -> bool:
    """Whether python-markdown reads a block opening with this line as one piece (code, a list
    item's continuation, a table) before looking for headings or rules in it; any indentation
    or "|" counts, which leaves some splittable blocks as they are and never splits a whole one."""
    return first_line[:1] == " " or "|" in first_line


def _at_definitions(block: str) -> list[str]:
    """`block` cut before and after its definitions as python-markdown's ReferenceProcessor cuts
    it: the first match, with the definitions right after it, then the rest read as a new block.
    Only a block that reaches that processor is cut: none opening as code, a table or a list,
    under a setext underline, or holding a heading, rule or quote line (those processors come first
    and would read the lines differently); the rest of a cut block is checked the same way. Only
    definitions of one line each are set apart, since alone they can be read as nothing else."""
    from markdown.blockprocessors import BlockQuoteProcessor, ReferenceProcessor

    if "]:" not in block or _SPLIT_OR_QUOTE.search(block) or BlockQuoteProcessor.RE.search(block):
        return [block]
    pieces, at = [], 0
    while _reaches_references(block, at):
        match = ReferenceProcessor.RE.search(block, at)
        if match is None:
            break
        start = end = match.start()
        for match in ReferenceProcessor.RE.finditer(block, start):  # ReferenceProcessor.run's own loop
            if match.start() > start and (block[end:match.start()].strip("\n") or "\n" in match.group()):
                break
            end = match.end()
        if "\n" in block[start:end]:  # a definition over lines (a title or URL below): alone it might read
            break  # as a setext heading or table, so this one stays where python-markdown finds it
        before = block[at:start].rstrip("\n")
        if before.strip():
            pieces.append(before)
            at = start
        rest = len(block) - len(block[end:].lstrip("\n"))
        if not block[rest:].strip():
            break
        pieces.append(block[at:end])
        at = rest
    pieces.append(block[at:])
    return pieces


def _reaches_references(core: str, at: int) -> bool:
    """Whether the block starting at `at` gets past the processors tested before references:
    not indented (code, a list's continuation), no "|" (a table), not a list item, no setext
    underline on its second line."""
    first_end = core.find("\n", at)
    first = core[at:] if first_end < 0 else core[at:first_end]
    second_end = -1 if first_end < 0 else core.find("\n", first_end + 1)
    second = "" if first_end < 0 else core[first_end + 1:] if second_end < 0 else core[first_end + 1:second_end]
    return not (_read_whole(first) or _LIST_ITEM.match(first) or _SETEXT_UNDERLINE.fullmatch(second))

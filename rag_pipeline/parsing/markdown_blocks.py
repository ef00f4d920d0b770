"""Blocks cut where python-markdown splits them anyway, so that it reads a long block in linear
time: `linear_markdown` is the python-markdown converter both Markdown paths use.

python-markdown splits a block at a heading, a horizontal rule, a setext underline, a link
reference definition or the end of indented code, hands the remainder back and reads it again
from the top: each of its block tests scans the remainder, so a block of many such lines costs
time growing with the square of the block. Changelogs, logs and exported notes are written that
way (no blank lines); 4,000 lines between rules took 6.9 s, 4,000 definitions between lines of
text 26 s, 8,000 code lines between rules 18 s, and a megabyte of any went past the parse time
limit. The cuts go only where python-markdown splits, so the HTML is the same (tested against
python-markdown itself)."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from xml.etree.ElementTree import Element

    from markdown import Markdown

_SETEXT_UNDERLINE = re.compile(r"(?:=+|-+) *")  # python-markdown's, read on a block's second line only
_CODE_INDENT = " " * 4  # python-markdown's tab_length, which linear_markdown leaves at its default
_LIST_ITEM = re.compile(r"[ ]{0,3}(?:\d+\.|[*+-])[ ]+")  # python-markdown's OList and UList tests
# a line that splits a block before references are looked for (heading, rule); tested per block
_SPLIT_OR_QUOTE = re.compile(r"(?m)^(?:#|[ ]{0,3}(?:(?:-[ ]{0,2}){3,}|(?:_[ ]{0,2}){3,}|(?:\*[ ]{0,2}){3,})[ ]*$)")


def linear_markdown(extensions: list[str]) -> Markdown:
    """A python-markdown converter that cuts every list of blocks it reads where it would split
    them anyway: the document's blocks, those inside block quotes, list items and raw HTML read
    as Markdown, and what follows indented code (handed back as one block). Left whole: a loose
    list item's first block holding a heading, since python-markdown detabs what follows the
    heading there, and an indented part under a list item, which is its continuation."""
    import markdown
    from markdown.blockprocessors import HashHeaderProcessor

    converter = markdown.Markdown(extensions=extensions)
    read, state = converter.parser.parseBlocks, converter.parser.state
    code_processor = converter.parser.blockprocessors["code"]
    read_code = code_processor.run

    def code_may_follow(parent: Element) -> bool:
        """Whether an indented block after a heading or rule is code: under an <li> not yet
        detabbed, python-markdown reads it as the item's continuation instead."""
        return parent.tag != "li" or state.isstate("detabbed")

    def cuts(parent: Element, block: str) -> list[str]:
        """In a loose list item's first blocks python-markdown detabs what follows a heading:
        a block with a heading is left whole there (its part before the heading comes back
        through parse_blocks and is cut then)."""
        if state.isstate("looselist") and HashHeaderProcessor.RE.search(block):
            return [block]
        return cut_block(block, code=code_may_follow(parent))

    def parse_blocks(parent: Element, blocks: list[str]) -> None:
        read(parent, [piece for block in blocks for piece in cuts(parent, block)])

    def read_code_then_cut(parent: Element, blocks: list[str]) -> None:
        """python-markdown hands back what follows an indented code block's last line as one
        block; it is cut here, once (what follows code in it is cut by `cut_block` itself)."""
        code, rest = _code_and_rest(blocks[0])
        if rest:
            blocks[0:1] = [code, *cuts(parent, rest)]
        read_code(parent, blocks)

    converter.parser.parseBlocks = parse_blocks
    code_processor.run = read_code_then_cut
    return converter


def cut_block(block: str, *, code: bool = True) -> list[str]:
    """`block` in the pieces python-markdown would split it into anyway: cut around its headings,
    rules, setext underlines and the ends of indented code, then around one-line link
    definitions. A block after raw HTML or after two blank lines opens with a line break, which
    python-markdown's empty-block processor takes off alone; line breaks at its end stay with
    the last piece, the remainder python-markdown reads last. A block holding a blank line (a
    list item's) is left whole."""
    if "\n\n" in block:
        return [block]
    if block[:1] == "\n" and block[1:]:
        return ["\n", *cut_block(block[1:], code=code)]
    core = block.rstrip("\n")
    if "\n" not in core:
        return [block]
    parts = _split_lines_apart(core, code).split("\n\n")
    pieces = [piece for part in parts for piece in _at_definitions(part)] if "]:" in core else parts
    pieces[-1] += block[len(core):]
    return pieces


def _split_lines_apart(text: str, code_may_follow: bool) -> str:
    """Blank lines around headings, rules, underlines and indented code, where python-markdown's
    processors' order splits. A block that may open as code, a list item's continuation or a
    table (a "|" over a separator row; its rows may be headings) is read whole. Otherwise every
    heading line splits it, wherever it is; between headings, an underline under a part's first
    line makes a setext heading (so a rule over an underline is a heading's text), a rule splits
    the part unless the part may be a table, and an indented part after a split is code (no list
    precedes it) unless `code_may_follow` is false; the code ends at its first line neither
    indented nor blank."""
    from markdown.blockprocessors import HashHeaderProcessor, HRProcessor

    out: list[str] = []
    opens_block, whole, part_whole = True, False, False  # a block after a blank line or heading; read whole
    position, pending = 0, ""  # the line's index in its part; what the line after a split gets
    code, code_opens = False, False  # in indented code (it ends at a line neither indented nor blank); opening a block
    lines = text.split("\n")  # "\n" only: str.splitlines would also break at \f, \x1c, \u2028 ...
    for index, line in enumerate(lines):
        following = lines[index + 1] if index + 1 < len(lines) else ""
        if code and (line.startswith(_CODE_INDENT) or not line.strip()):
            out.append(line)
            continue
        if code:  # python-markdown reads the rest as a new block: with its headings if the code opened
            out.append("")  # one (after a heading); else they were split off before the code was read
            code, opens_block = False, code_opens
        underline = position == 1 and _SETEXT_UNDERLINE.fullmatch(line) is not None
        if pending == "split" or (pending == "unless underline" and not underline):
            out.append("")
            position, underline = 0, False
        pending = ""
        # indented after a split: code, not a list's continuation (a heading or rule precedes it)
        if position == 0 and out and not whole and code_may_follow and line.startswith(_CODE_INDENT):
            code, code_opens = True, opens_block
            out.append(line)
            continue
        if opens_block:
            whole, opens_block = _read_whole(line, following), False
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
            part_whole = _read_whole(line, following)
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


def _read_whole(first_line: str, second_line: str) -> bool:
    """Whether python-markdown may read a block opening with these lines as one piece (code, a
    list item's continuation, a table) before looking for headings or rules in it: one opening
    indented as code, or a table, which needs a "|" in its first line and a separator row
    ("--|:-:") under it. Erring towards whole leaves a splittable block as it is, never the
    reverse."""
    if first_line.startswith(_CODE_INDENT):
        return True
    return "|" in first_line and not second_line.strip(" ").strip("|:- ")


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
    return not (_read_whole(first, second) or _LIST_ITEM.match(first) or _SETEXT_UNDERLINE.fullmatch(second))


def _code_and_rest(block: str) -> tuple[str, str]:
    """An indented code block and what follows its last line, where python-markdown's
    CodeBlockProcessor.detab splits them; found line by line, without reading the rest."""
    at = 0
    while True:
        end = block.find("\n", at)
        line = block[at:] if end < 0 else block[at:end]
        if at and not line.startswith(_CODE_INDENT) and line.strip():
            return block[:at - 1], block[at:]
        if end < 0:
            return block, ""
        at = end + 1

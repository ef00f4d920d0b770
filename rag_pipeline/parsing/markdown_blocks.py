"""Blocks set apart where python-markdown splits them anyway, so that it reads a long block in
linear time: `linear_markdown` for the direct Markdown parser (markdown_direct.py), which also
reaches inside quotes and list items, and `blocks_apart` on the text for the unstructured path.

python-markdown splits a block at a heading, a horizontal rule, a setext underline or a link
reference definition, hands the remainder back and reads it again from the top: each of its
block tests scans the remainder, so a block of many such lines costs time growing with the
square of the block. Changelogs, logs and exported notes are written that way (no blank lines);
4,000 lines between rules took 6.9 s, 4,000 definitions between lines of text 26 s, and a
megabyte of either went past the parse time limit. The blank lines go only where
python-markdown splits, so the HTML is the same (tested against python-markdown itself)."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from xml.etree.ElementTree import Element

    from markdown import Markdown

_TAB = 4  # python-markdown's tab_length
# a line python-markdown's HTML block preprocessor may take out of the text: a block-level tag (its list, 3.x),
# a closing tag, a comment, declaration or processing instruction; inline tags (<b>, <img>, <br>) stay text
_BLOCK_LEVEL = ("address|article|aside|blockquote|body|canvas|center|colgroup|dd|details|div|dl|dt|fieldset|"
                "figcaption|figure|footer|form|group|h[1-6]|header|hgroup|hr|html|iframe|legend|li|main|map|math|"
                "menu|nav|noscript|object|ol|option|output|p|pre|progress|script|section|style|summary|table|tbody|"
                "td|textarea|tfoot|th|thead|tr|ul|video")
_RAW_HTML_LINE = re.compile(rf"(?mi)^ {{0,3}}<(?:[!?/]|(?:{_BLOCK_LEVEL})(?![\w:-]))")
_SETEXT_UNDERLINE = re.compile(r"(?:=+|-+) *")  # python-markdown's, read on a block's second line only
_LIST_ITEM = re.compile(r"[ ]{0,3}(?:\d+\.|[*+-])[ ]+")  # python-markdown's OList and UList tests
# a line that splits a block before references are looked for (heading, rule); tested per block
_SPLIT_OR_QUOTE = re.compile(r"(?m)^(?:#|[ ]{0,3}(?:(?:-[ ]{0,2}){3,}|(?:_[ ]{0,2}){3,}|(?:\*[ ]{0,2}){3,})[ ]*$)")


def _as_python_markdown_reads_lines(text: str) -> str:
    """python-markdown's own first step (NormalizeWhitespace, less its trailing blank lines), so
    that the lines read here are the lines it reads; it does the same again, to no effect."""
    text = text.replace("\x02", "").replace("\x03", "").replace("\r\n", "\n").replace("\r", "\n")
    return re.sub(r"(?<=\n) +(?=\n|\Z)", "", text.expandtabs(_TAB))


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
        return read(parent, [piece for block in blocks for piece in _block_apart(block)])

    converter.parser.parseBlocks = parse_blocks
    return converter


def _block_apart(block: str) -> list[str]:
    if "\n" not in block or "\x02" in block:
        return [block]
    return _apart(block, []).split("\n\n")


def blocks_apart(text: str) -> str:
    """`text` with blank lines where python-markdown splits a block anyway: around each ATX
    heading, horizontal rule and setext underline, and around link reference definitions
    (markdown_blocks' docstring says why). A text with raw HTML blocks or comments, whose blocks
    python-markdown reads by other rules, is returned unchanged."""
    from markdown.extensions.fenced_code import FencedBlockPreprocessor

    if "<!--" in text or _RAW_HTML_LINE.search(text):
        return text
    text = _as_python_markdown_reads_lines(text)
    return _apart(text, [m.span() for m in FencedBlockPreprocessor.FENCED_BLOCK_RE.finditer(text)])


def _apart(text: str, fences: list[tuple[int, int]]) -> str:
    """`text` (its lines as python-markdown reads them) cut around headings, rules and
    underlines, then around definitions, outside `fences`."""
    text = _split_lines_apart(text, fences)
    if "]:" not in text:
        return text
    if fences:
        from markdown.extensions.fenced_code import FencedBlockPreprocessor

        fences = [m.span() for m in FencedBlockPreprocessor.FENCED_BLOCK_RE.finditer(text)]
    return _references_apart(text, fences)


def _split_lines_apart(text: str, fences: list[tuple[int, int]]) -> str:
    """Blank lines around headings, rules and underlines, outside `fences`. Where follows
    python-markdown's processors' order. A block opening indented (code, a list item's
    continuation) or with a "|" (a table, whose rows may be headings) is read whole. Otherwise
    every heading line splits it, wherever it is; between headings, an underline under a part's
    first line makes a setext heading (so a rule over an underline is a heading's text), and a
    rule splits the part unless the part opens indented or with a "|"."""
    from markdown.blockprocessors import HashHeaderProcessor, HRProcessor

    out: list[str] = []
    at, fence = 0, 0
    opens_block, whole, part_whole = True, False, False  # a block after a blank line or heading; read whole
    position, pending = 0, ""  # the line's index in its part; what the line after a split gets
    for line in text.split("\n"):  # "\n" only: str.splitlines would also break at \f, \x1c, \u2028 ...
        end = at + len(line) + 1
        while fence < len(fences) and fences[fence][1] <= at:
            fence += 1
        if not line or (fence < len(fences) and fences[fence][0] < end):  # a fence is a block of its own
            out.append(line)
            at, opens_block, position, pending = end, True, 0, ""
            continue
        at = end
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




def _references_apart(text: str, fences: list[tuple[int, int]]) -> str:
    """Blank lines around link reference definitions, block by block (fenced code is a block of
    its own: python-markdown sets it apart before reading blocks)."""
    out, at = [], 0
    for start, end in [*fences, (len(text), len(text))]:
        out.append("\n\n".join(_block_references_apart(block) for block in text[at:start].split("\n\n")))
        out.append(text[start:end])
        at = end
    return "".join(out)


def _block_references_apart(block: str) -> str:
    """`block` cut before and after its definitions as python-markdown's ReferenceProcessor cuts
    it: the first match, with the definitions right after it, then the rest read as a new block.
    Only a block that reaches that processor is cut: none opening as code, a table or a list,
    under a setext underline, or holding a heading, rule or quote line (those processors come first
    and would read the lines differently); the rest of a cut block is checked the same way. Only
    definitions of one line each are set apart, since alone they can be read as nothing else."""
    from markdown.blockprocessors import BlockQuoteProcessor, ReferenceProcessor

    core = block.strip("\n")
    if "]:" not in core or _SPLIT_OR_QUOTE.search(core) or BlockQuoteProcessor.RE.search(core):
        return block
    lead = block[: len(block) - len(block.lstrip("\n"))]
    pieces, at = [], 0
    while _reaches_references(core, at):
        match = ReferenceProcessor.RE.search(core, at)
        if match is None:
            break
        start = end = match.start()
        for match in ReferenceProcessor.RE.finditer(core, start):  # ReferenceProcessor.run's own loop
            if match.start() > start and (core[end:match.start()].strip("\n") or "\n" in match.group()):
                break
            end = match.end()
        if "\n" in core[start:end]:  # a definition over lines (a title or URL below): alone it might read
            break  # as a setext heading or table, so this one stays where python-markdown finds it
        before = core[at:start].rstrip("\n")
        if before.strip():
            pieces.append(before)
            at = start
        rest = len(core) - len(core[end:].lstrip("\n"))
        if not core[rest:].strip():
            break
        pieces.append(core[at:end])
        at = rest
    pieces.append(core[at:])
    return lead + "\n\n".join(pieces) + block[len(lead) + len(core):]


def _reaches_references(core: str, at: int) -> bool:
    """Whether the block starting at `at` gets past the processors tested before references:
    not indented (code, a list's continuation), no "|" (a table), not a list item, no setext
    underline on its second line."""
    first_end = core.find("\n", at)
    first = core[at:] if first_end < 0 else core[at:first_end]
    second_end = -1 if first_end < 0 else core.find("\n", first_end + 1)
    second = "" if first_end < 0 else core[first_end + 1:] if second_end < 0 else core[first_end + 1:second_end]
    return not (_read_whole(first) or _LIST_ITEM.match(first) or _SETEXT_UNDERLINE.fullmatch(second))

"""Small lxml helpers shared by the chrome filter and the main-content chooser."""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from lxml import etree
from lxml import html as lxml_html

from rag_pipeline.parsing.office.text import normalize_whitespace
from rag_pipeline.parsing.types import ParseError

_WS_RE = re.compile(r"\s+")


# libxml2's HTML parser, without huge_tree (unstructured's partition_html), stops reading at 256
# levels of nesting and silently drops the rest of the page; trees are flattened below that.
MAX_NESTING = 250
_BLOCK_TAGS = frozenset((
    "address", "article", "aside", "blockquote", "body", "br", "dd", "div", "dl", "dt", "figcaption", "figure",
    "h1", "h2", "h3", "h4", "h5", "h6", "header", "hr", "li", "main", "ol", "p", "pre", "section", "table", "tbody",
    "td", "tfoot", "th", "thead", "tr", "ul",
))  # fmt: skip


def parse_html_tree(text: str) -> Any | None:
    """The page as an lxml document without comments or processing instructions (they are never
    content), or None when lxml cannot make a tree of it at all. The page is read to 2,048
    levels of nesting (huge_tree; `flatten_deep_nesting` makes that readable to unstructured);
    a page nested deeper is refused with a ParseError, since the rest of it cannot be read."""
    parser = lxml_html.HTMLParser(remove_comments=True, remove_pis=True, huge_tree=True)
    try:
        root = lxml_html.document_fromstring(text, parser=parser)
    except (etree.ParserError, ValueError):
        return None
    beyond = [error.message for error in parser.error_log if error.type_name == "ERR_RESOURCE_LIMIT"]
    if beyond:  # even huge_tree stops at 2,048 levels: what follows is lost, so refuse rather than truncate
        raise ParseError(f"HTML beyond what its parser reads ({beyond[0].strip()}): the text after that point would be "
                         "lost -- close the page's tags or flatten its nesting")
    return root


def flatten_deep_nesting(root: Any) -> int:
    """Every element nested deeper than MAX_NESTING replaced by what it holds, so no text sits
    where unstructured's parser stops reading: legacy pages of unclosed <font> or <b> tags, or a
    hostile page of thousands of nested <div>s, lost everything after the 256th level without a
    word. Block elements leave a line break, so their words stay apart; the text is kept, the
    structure that deep is not. Call it after hidden elements and scripts are dropped. Returns
    how many elements were unwrapped."""
    boundary: list[Any] = []
    stack = [(root, 0)]
    while stack:
        node, depth = stack.pop()
        if depth == MAX_NESTING:
            boundary.append(node)
            continue
        stack.extend((child, depth + 1) for child in node if isinstance(child.tag, str))
    unwrapped = 0
    for top in boundary:
        for node in list(top.iterdescendants()):
            if not isinstance(node.tag, str):
                continue
            if node.tag in _BLOCK_TAGS:
                node.text = "\n" + (node.text or "")
                node.tail = "\n" + (node.tail or "")
            node.drop_tag()
            unwrapped += 1
    return unwrapped


_TOGGLE_LABEL = re.compile(
    r"^(?:click (?:here )?to |tap to )?(?:expand|collapse|show|hide|toggle|view|see|more|details|open|close)"
    r"(?: (?:more|less|all|details|description|code|source|answer|contents?|this|section|here))?[.:!…]*$",
    re.I,
)


def open_figures_and_details(root: Any) -> set[str]:
    """Figures and collapsed sections opened for unstructured, which drops a <figure> and a
    <details> with everything inside: a Jekyll or Hugo code block (<figure class="highlight">),
    a table or quotation with its caption, an FAQ's answers, a README's "click to expand"
    sections. Each becomes a <section> holding what it held; its <figcaption> or <summary> a
    paragraph in place. Returns the caption texts (whitespace-normalised) so their elements can
    be typed "caption"; a figure with nothing but an image and no caption goes."""
    captions: set[str] = set()
    for figure in list(root.iter("figure")):
        caption = figure.find(".//figcaption")
        text = normalize_whitespace(" ".join(caption.itertext())) if caption is not None else ""
        if not text and not normalize_whitespace(" ".join(figure.itertext())):
            drop(figure)
            continue
        figure.tag = "section"  # not "div": the content chooser scores divs up, and a figure is no container
        if caption is not None:  # one paragraph of its text: a caption often holds a <p> per part
            paragraph = caption.makeelement("p", {})
            paragraph.text, paragraph.tail = text, caption.tail
            caption.getparent().replace(caption, paragraph)
            captions.add(text)
    for details in list(root.iter("details")):
        details.tag = "section"
        for summary in list(details.iterchildren("summary")):
            if _TOGGLE_LABEL.match(normalize_whitespace(" ".join(summary.itertext()))):
                drop(summary)  # "Expand description" (every rustdoc page), "Click to expand": a control, not content
            else:
                summary.tag = "p"
    for caption in list(root.iter("figcaption", "summary")):  # outside their parents: read as paragraphs
        caption.tag = "p"
    return captions


def math_and_ruby_as_read(root: Any) -> None:
    """MathML given a text unstructured reads, and ruby without its pronunciation guide.
    unstructured reads a <math> element only through its TeX annotation or `alttext`; a
    presentation-only formula ("E = mc²" as <mi>/<msup>) was dropped, so its `alttext` is set
    here to the formula's linear form (c^2, (a+b)/2, √(x)). Ruby text (<rt>, <rp>: the reading
    of each kanji) ran into the words it annotates ("漢kan字ji"): it goes."""
    for math in list(root.iter("math")):
        annotated = any((a.get("encoding") or "").strip().lower() in ("application/x-tex", "text/x-tex", "latex")
                        for a in math.iter("annotation"))
        if not (math.get("alttext") or "").strip() and not annotated:
            linear = normalize_whitespace(_math_linear(math))
            if linear:
                math.set("alttext", linear)
    for annotation in list(root.iter("rt", "rp")):
        drop(annotation)


def _math_linear(node: Any) -> str:
    """The linear form of a MathML element (Word's "Linear" style, as docx_math.py writes OMML)."""
    tag = node.tag.split("}")[-1] if isinstance(node.tag, str) else ""
    children = [child for child in node if isinstance(child.tag, str)]
    parts = [_math_linear(child) for child in children]
    if tag in ("annotation", "annotation-xml"):
        return ""
    if tag == "semantics":
        return parts[0] if parts else ""
    if tag in ("msup", "msub") and len(parts) == 2:
        return parts[0] + ("^" if tag == "msup" else "_") + _math_group(parts[1]) + " "
    if tag == "msubsup" and len(parts) == 3:
        return parts[0] + "_" + _math_group(parts[1]) + "^" + _math_group(parts[2]) + " "
    if tag == "mfrac" and len(parts) == 2:
        return _math_group(parts[0]) + "/" + _math_group(parts[1])
    if tag == "msqrt":
        return "√" + _math_group("".join(parts))
    if tag == "mroot" and len(parts) == 2:
        return parts[1] + "√" + _math_group(parts[0])
    if tag == "mtable":
        return "[" + "; ".join(parts) + "]"
    if tag == "mtr":
        return ", ".join(parts)
    if not children:
        return node.text or ""
    return (node.text or "") + "".join(parts)


def _math_group(text: str) -> str:
    text = text.strip()
    return text if re.fullmatch(r"[\w.,]+", text) else f"({text})"


def class_and_id(node: Any) -> str:
    """The class and id attributes as one string, which is what the name patterns match."""
    return f"{node.get('class') or ''} {node.get('id') or ''}"


def drop(node: Any) -> None:
    """Remove `node` and its subtree, keeping its tail text (which belongs to the parent): lxml.html's
    drop_tree, for plain lxml trees too (the Markdown parser's)."""
    parent = node.getparent()
    if parent is None:
        return
    if node.tail:
        previous = node.getprevious()
        if previous is None:
            parent.text = (parent.text or "") + node.tail
        else:
            previous.tail = (previous.tail or "") + node.tail
    parent.remove(node)


def has_ancestor(node: Any, tags: Iterable[str]) -> bool:
    wanted = set(tags)
    return any(a.tag in wanted for a in node.iterancestors())


def text_len(node: Any) -> int:
    """Visible characters, not counting whitespace (indentation would skew every ratio)."""
    return len(_WS_RE.sub("", "".join(node.itertext())))


def link_density(node: Any) -> float:
    """Share of the node's text that is link text: near 1 for menus, near 0 for prose."""
    total = text_len(node)
    if not total:
        return 0.0
    linked = sum(text_len(a) for a in node.iter("a"))
    return min(1.0, linked / total)

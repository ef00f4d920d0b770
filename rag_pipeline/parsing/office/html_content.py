"""HTML main-content extraction (a small Readability).

HTML pages lose their navigation, sidebars, ads and footers before partitioning, so the index
holds the page's content and not the site's chrome; figures become caption paragraphs and
table colspans are written out, both of which unstructured would otherwise lose."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from lxml import etree

from rag_pipeline.parsing.office.html_chrome import drop_hidden, strip_chrome
from rag_pipeline.parsing.office.html_tree import (
    MAX_NESTING,
    class_and_id,
    flatten_deep_nesting,
    has_ancestor,
    link_density,
    math_and_ruby_as_read,
    open_figures_and_details,
    parse_html_tree,
    text_len,
)
from rag_pipeline.parsing.office.tables import tables_as_read
from rag_pipeline.parsing.superscripts import mark_sup_elements

_POSITIVE_RE = re.compile(r"article|body|content|entry|hentry|h-entry|main|page|post|text|blog|story", re.I)
_NEGATIVE_RE = re.compile(
    r"-ad-|hidden|^hid$| hid$| hid |^hid |banner|combx|comment|com-|contact|footer|gdpr|masthead|"
    r"media|meta|outbrain|promo|related|scroll|share|shoutbox|sidebar|skyscraper|sponsor|shopping|"
    r"tags|widget|teaser",
    re.I,
)
_PARAGRAPH_TAGS = ("p", "pre", "td", "blockquote", "li", "dd")
_TAG_SCORES = {"div": 5, "pre": 3, "td": 3, "blockquote": 3, "th": -5}
_TAG_SCORES.update(dict.fromkeys(("form", "ol", "ul", "li", "dl", "dd", "dt", "address"), -3))


@dataclass
class _Candidate:
    node: Any
    score: float = 0.0


def extract_main_content(text: str) -> tuple[str, set[str], int]:
    """The page's main content as an HTML string, the (whitespace-normalised) texts of its
    figure captions (html_tree.open_figures_and_details: unstructured drops a <figure> or
    <details> whole, with the code, table or answer inside), and how
    many elements nested too deep for unstructured were unwrapped (html_tree.flatten_deep_nesting).

    Structural chrome (nav, aside, footer, forms, ARIA landmarks that are not main, hidden
    elements, Readability's "unlikely" class names) is always removed. Then, if the page says
    where its content is (<main>, role=main, a single <article>) that wins; otherwise the densest
    block of paragraph text is chosen Readability-style -- but only when it clearly dominates,
    so long documents spread over many sibling blocks (a 10-K, a manual) are kept whole."""
    root = parse_html_tree(text)
    if root is None:
        return text, set(), 0
    body = root.find(".//body")
    body = body if body is not None else root
    strip_chrome(body)
    mark_sup_elements(body)
    flattened = flatten_deep_nesting(root)
    math_and_ruby_as_read(body)  # after flattening: its walk recurses
    tables_as_read(body)  # unstructured drops spans (columns would shift) and reads a layout table as text
    captions = open_figures_and_details(body)
    chosen = _declared_main(body)
    if chosen is None:
        chosen = _densest_block(body)
    if chosen is None or chosen is body:
        return etree.tostring(root, encoding="unicode", method="html"), captions, flattened
    return _wrap_as_document([*_page_title(chosen, body), chosen]), captions, flattened


# What makes an e-mail's HTML worth parsing before unstructured reads it: a <sup>, or anything
# that can hide an element (the `hidden` attribute, display/visibility/opacity/font-size/colour styles)
_NEEDS_TREE = re.compile(r"<sup[\s>/]|<figure|<details|<math|<ruby|hidden|display|opacity|font-size|transparent"
                         r"|rowspan|colspan|<table", re.I)


def html_as_shown(text: str) -> str:
    """An HTML text that does not go through `extract_main_content` (an e-mail's HTML part, the
    HTML of Markdown the direct parser defers) as a reader is shown it: hidden elements dropped (`html_chrome.drop_hidden`: a hidden block of
    instructions in a mail reaches no index), `<sup>` digits marked, figures and collapsed
    sections opened (html_tree.open_figures_and_details), nesting too deep for unstructured
    flattened and tables as read (tables.tables_as_read: layout tables unwrapped, spans written out); the text itself when it holds
    none of these."""
    deep = text.count("<") > MAX_NESTING  # cheap: fewer tags cannot nest that deep
    root = parse_html_tree(text) if deep or _NEEDS_TREE.search(text) else None
    if root is None:
        return text
    dropped = drop_hidden(root)
    marked = mark_sup_elements(root)
    flattened = deep and flatten_deep_nesting(root)
    opened = any(root.find(f".//{tag}") is not None for tag in ("figure", "details", "math", "ruby"))
    open_figures_and_details(root)
    math_and_ruby_as_read(root)  # after flattening: its walk recurses
    spanned = tables_as_read(root)
    if not (marked or dropped or opened or flattened or spanned):
        return text
    return etree.tostring(root, encoding="unicode", method="html")


def _declared_main(body: Any) -> Any | None:
    """<main>, role=main, or the only <article> -- when it actually holds text."""
    for xpath in (".//main", ".//*[@role='main']", ".//article"):
        found = body.xpath(xpath)
        if xpath == ".//article":
            found = [a for a in found if not has_ancestor(a, ("article",))]
            if len(found) != 1:
                continue
        if found and text_len(found[0]) >= 200:
            return found[0]
    return None


def _densest_block(body: Any) -> Any | None:
    """Readability's scoring: each paragraph scores its parent (fully) and grandparent (half)
    by length and commas; the best container, discounted by link density, is the content.
    Returns None (keep everything) unless that container holds most of the page's prose."""
    candidates: dict[Any, _Candidate] = {}
    total_prose = 0.0
    for para in body.iter(*_PARAGRAPH_TAGS):
        text = "".join(para.itertext()).strip()
        if len(text) < 25:
            continue
        score = 1 + text.count(",") + min(len(text) / 100, 3)
        total_prose += len(text)
        for depth, ancestor in enumerate(list(para.iterancestors())[:3]):
            cand = candidates.setdefault(ancestor, _Candidate(ancestor, _initial_score(ancestor)))
            cand.score += score / (1 if depth == 0 else depth * 2)
    if not candidates or total_prose == 0:
        return None
    for cand in candidates.values():
        cand.score *= 1 - link_density(cand.node)
    best = max(candidates.values(), key=lambda c: c.score).node
    best = _widen(best, body)
    if _prose_len(best) < 0.6 * total_prose:
        return None
    return best


def _initial_score(node: Any) -> float:
    """Readability's prior: divs and cells tend to hold prose, lists and forms do not."""
    base = _TAG_SCORES.get(node.tag, 0)
    match = class_and_id(node)
    if _POSITIVE_RE.search(match):
        base += 25
    if _NEGATIVE_RE.search(match):
        base -= 25
    return base


def _prose_len(node: Any) -> int:
    """Characters in the node's paragraphs long enough to count as prose (as in scoring)."""
    return sum(len(t) for p in node.iter(*_PARAGRAPH_TAGS) if len(t := "".join(p.itertext()).strip()) >= 25)


def _widen(node: Any, body: Any) -> Any:
    """Climb while the parent adds little text: that picks up the article's own title and lead
    paragraph, which usually sit just outside the densest block."""
    while node is not body and node.getparent() is not None:
        parent = node.getparent()
        if text_len(parent) > 1.3 * max(1, text_len(node)):
            break
        node = parent
    return node


def _page_title(chosen: Any, body: Any) -> list[Any]:
    """The page's single <h1> when the content block lacks it: news sites put the headline in a
    header band above the article body, and the headline is the best heading the content has."""
    if chosen.find(".//h1") is not None:
        return []
    titles = body.xpath(".//h1")
    return titles if len(titles) == 1 else []


def _wrap_as_document(nodes: list[Any]) -> str:
    """The chosen nodes as a standalone page, so unstructured partitions only them."""
    inner = "".join(etree.tostring(n, encoding="unicode", method="html", with_tail=False) for n in nodes)
    return f"<html><body>{inner}</body></html>"

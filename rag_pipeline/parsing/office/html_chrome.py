"""Removal of what is site chrome on any HTML page: navigation, sidebars, ads, footers, forms,
hidden elements, and link lists. The index must hold the page's content, not the site's."""

from __future__ import annotations

import re
from typing import Any

from rag_pipeline.parsing.office.html_tree import class_and_id, drop, has_ancestor, link_density, text_len

# Always chrome, never content.
_REMOVE_TAGS = (
    "script", "style", "noscript", "template", "iframe", "svg", "canvas", "nav", "aside",
    "footer", "form", "button", "select", "textarea", "dialog", "object", "embed",
)  # fmt: skip
_REMOVE_ROLES = {"navigation", "banner", "contentinfo", "complementary", "search", "menu", "menubar", "dialog", "alert"}
# Mozilla Readability's class/id patterns, which its test pages (our ground truth) were built for.
_UNLIKELY_RE = re.compile(
    r"-ad-|ai2html|banner|breadcrumbs|combx|comment|community|cover-wrap|disqus|extra|footer|gdpr|"
    r"header|legends|menu|related|remark|replies|rss|shoutbox|sidebar|skyscraper|social|sponsor|"
    r"supplemental|ad-break|agegate|pagination|pager|popup|yom-remote|navbox|catlinks|mw-jump|"
    r"printfooter|noprint|mw-editsection|hatnote|(?:^|[\s_-])toc(?:$|[\s_-])",
    re.I,
)
_MAYBE_RE = re.compile(r"and|article|body|column|content|main|mathjax|shadow", re.I)
# Inline styles that leave an element's text unseen: not displayed, hidden, fully transparent or
# in a transparent colour, or at font size 0 where no element inside sets a size of its own (the
# inline-block spacing idiom sets 0 on the parent and the size back on the children): text
# planted for a model, not for the reader.
_HIDDEN_STYLE_RE = re.compile(
    r"display\s*:\s*none|visibility\s*:\s*hidden"
    r"|(?<![\w-])opacity\s*:\s*(?:0+\.?0*|\.0+)\s*(?:!important\s*)?(?:;|$)"
    r"|(?<![\w-])color\s*:\s*transparent",
    re.I,
)
_ZERO_SIZE_RE = re.compile(r"(?<![\w-])font-size\s*:\s*(?:0+\.?0*|\.0+)(?:px|pt|em|rem|%)?\s*(?:!important\s*)?(?:;|$)", re.I)
_HEADING_TAGS = ("h1", "h2", "h3", "h4", "h5", "h6")
# Class names documentation tools give a heading's permalink or edit link (Sphinx and MkDocs
# "headerlink", Docusaurus "hash-link", anchor.js, VuePress/VitePress "header-anchor",
# MediaWiki "mw-editsection"): what they hold is never part of the heading's title.
_HEADING_DECORATION_RE = re.compile(
    r"(?:^|\s)(?:headerlink|hash-link|anchorjs-link|header-anchor|heading-anchor|anchor-link|"
    r"permalink|mw-editsection|editsection)(?:$|\s)",
    re.I,
)
_DECORATION_MAX_CHARS = 12  # "[edit source]" is the longest such text seen


def strip_chrome(body: Any) -> None:
    """Remove everything that is chrome on any page. Removal keeps the text that follows a
    removed element (its "tail"), which belongs to the parent."""
    for node in list(body.iter(*_REMOVE_TAGS)):
        drop(node)
    drop_hidden(body)
    strip_heading_anchors(body)
    for node in list(body.iter("header")):
        if not has_ancestor(node, ("article", "main")):
            drop(node)
    total = max(1, text_len(body))
    for node in list(body.iter()):
        if not isinstance(node.tag, str) or node.getparent() is None:
            continue
        if _is_chrome(node) and text_len(node) < 0.5 * total:
            drop(node)
    for node in list(body.iter("ul", "ol")):
        if node.getparent() is not None and _is_link_list(node):
            drop(node)


def drop_hidden(root: Any) -> int:
    """Remove every element a reader is not shown (`_is_hidden`), whatever its size: a hidden
    payload larger than the visible text is the attack, not the page. Returns how many went."""
    dropped = 0
    for node in list(root.iter()):
        if isinstance(node.tag, str) and node.tag not in ("html", "body") and node.getparent() is not None and _is_hidden(node):
            drop(node)
            dropped += 1
    return dropped


def strip_heading_anchors(body: Any) -> None:
    """Remove the permalink and edit links that tools put inside headings ("¶", "#", "§",
    "[edit]"), so a heading's text is its title. A link inside a heading goes when its class
    says it is such a decoration, or when it points into the page ("#...") and holds no letter
    or digit; a heading that links to itself with words ("<a href='#s7'>7. Refunds</a>") keeps
    them."""
    for heading in list(body.iter(*_HEADING_TAGS)):
        for node in list(heading.iterdescendants()):
            if isinstance(node.tag, str) and node.getparent() is not None and _is_heading_decoration(node):
                drop(node)


def _is_heading_decoration(node: Any) -> bool:
    text = "".join(node.itertext()).strip()
    if _HEADING_DECORATION_RE.search(node.get("class") or "") and len(text) <= _DECORATION_MAX_CHARS:
        return True
    href = (node.get("href") or "").strip()
    return node.tag == "a" and href.startswith("#") and not any(ch.isalnum() for ch in text)


def _is_chrome(node: Any) -> bool:
    """A non-main ARIA landmark, a hidden element, or a Readability "unlikely" class name --
    but never a heading (rustdoc's "section-header", WordPress's "entry-header" name headings,
    not page headers), a heading's part, or something inside a table or code block."""
    if node.tag in ("body", "html", "a", "main", "article") or has_ancestor(node, _HEADING_TAGS):
        return False
    if (node.get("role") or "").lower() in _REMOVE_ROLES or _is_hidden(node):
        return True
    if node.tag in _HEADING_TAGS:
        return False
    match = class_and_id(node)
    if not _UNLIKELY_RE.search(match) or _MAYBE_RE.search(match):
        return False
    return not has_ancestor(node, ("table", "code", "pre"))


def _is_hidden(node: Any) -> bool:
    return (
        node.get("hidden") is not None
        or node.get("aria-hidden") == "true"
        or bool(_HIDDEN_STYLE_RE.search(node.get("style") or ""))
        or (bool(_ZERO_SIZE_RE.search(node.get("style") or ""))
            and not any("font-size" in (child.get("style") or "") for child in node.iterdescendants() if isinstance(child.tag, str)))
    )


def _is_link_list(node: Any) -> bool:
    """A list of short links -- menus, language switchers, tables of contents, "see also" --
    is navigation even when no class name says so."""
    items = node.xpath("./li")
    if len(items) < 5 or has_ancestor(node, ("table",)):
        return False
    average = text_len(node) / len(items)
    return average < 50 and link_density(node) > 0.8

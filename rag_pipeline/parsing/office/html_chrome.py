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
_HIDDEN_STYLE_RE = re.compile(r"display\s*:\s*none|visibility\s*:\s*hidden", re.I)
_HEADING_TAGS = ("h1", "h2", "h3", "h4", "h5", "h6")


def strip_chrome(body: Any) -> None:
    """Remove everything that is chrome on any page. Removal keeps the text that follows a
    removed element (its "tail"), which belongs to the parent."""
    for node in list(body.iter(*_REMOVE_TAGS)):
        drop(node)
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


def _is_chrome(node: Any) -> bool:
    """A non-main ARIA landmark, a hidden element, or a Readability "unlikely" class name --
    but never a heading's part or something inside a table or code block."""
    if node.tag in ("body", "html", "a", "main", "article") or has_ancestor(node, _HEADING_TAGS):
        return False
    if (node.get("role") or "").lower() in _REMOVE_ROLES or _is_hidden(node):
        return True
    match = class_and_id(node)
    if not _UNLIKELY_RE.search(match) or _MAYBE_RE.search(match):
        return False
    return not has_ancestor(node, ("table", "code", "pre"))


def _is_hidden(node: Any) -> bool:
    return (
        node.get("hidden") is not None
        or node.get("aria-hidden") == "true"
        or bool(_HIDDEN_STYLE_RE.search(node.get("style") or ""))
    )


def _is_link_list(node: Any) -> bool:
    """A list of short links -- menus, language switchers, tables of contents, "see also" --
    is navigation even when no class name says so."""
    items = node.xpath("./li")
    if len(items) < 5 or has_ancestor(node, ("table",)):
        return False
    average = text_len(node) / len(items)
    return average < 50 and link_density(node) > 0.8

"""Small lxml helpers shared by the chrome filter and the main-content chooser."""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from lxml import etree
from lxml import html as lxml_html

_WS_RE = re.compile(r"\s+")


def parse_html_tree(text: str) -> Any | None:
    """The page as an lxml document without comments or processing instructions (they are never
    content), or None when lxml cannot make a tree of it at all."""
    parser = lxml_html.HTMLParser(remove_comments=True, remove_pis=True)
    try:
        return lxml_html.document_fromstring(text, parser=parser)
    except (etree.ParserError, ValueError):
        return None


def class_and_id(node: Any) -> str:
    """The class and id attributes as one string, which is what the name patterns match."""
    return f"{node.get('class') or ''} {node.get('id') or ''}"


def drop(node: Any) -> None:
    """Remove `node` and its subtree, keeping its tail text (which belongs to the parent)."""
    if node.getparent() is not None:
        node.drop_tree()


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

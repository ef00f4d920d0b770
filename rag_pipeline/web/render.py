"""Templates and what they show: every value from a document, an answer or a reviewer is text.
Jinja2 escapes it (autoescape on for every template) and `visible` turns what a browser would
not show (control characters: a terminal escape, a bidi override) into a visible escape first."""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any

from jinja2 import Environment, PackageLoader
from markupsafe import Markup, escape

from rag_pipeline.common.text import storable

_CONTROLS = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def visible(value: Any) -> str:
    """Text with control characters as visible escapes (`\\x1b`); escaped later by Jinja2."""
    if value is None:
        return ""
    return _CONTROLS.sub(lambda m: f"\\x{ord(m.group()):02x}", storable(str(value)))


def marked(text: str, span: tuple[int, int] | None) -> Markup:
    """The passage with the quoted span in <mark>; every part escaped."""
    if span is None:
        return Markup(escape(visible(text)))
    start, end = span
    return Markup("{}<mark id=\"quoted\">{}</mark>{}").format(visible(text[:start]), visible(text[start:end]),
                                                             visible(text[end:]))


def when(value: datetime | None) -> str:
    return value.isoformat(timespec="seconds") if value else "-"


def pages(value: Any) -> str:
    start, end = (list(value) + [None, None])[:2] if value else (None, None)
    if start is None:
        return "-"
    return str(start) if end in (None, start) else f"{start}-{end}"


def environment() -> Environment:
    env = Environment(loader=PackageLoader("rag_pipeline.web", "templates"), autoescape=True, trim_blocks=True, lstrip_blocks=True)
    env.filters.update(visible=visible, when=when, pages=pages, marked=marked)
    return env

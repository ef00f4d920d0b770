"""How the CLI prints: one JSON document with --json, else a Rich console. Everything that comes
from a document or a file name is data: `shown()` strips what a terminal would obey (escape
sequences, control characters) and what Rich would read as markup."""

from __future__ import annotations

import json
import re
import sys
from datetime import date, datetime
from pathlib import Path
from typing import Any

from rag_pipeline.common.text import storable

_SURROGATE = re.compile("[\ud800-\udfff]")
_CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def _json_default(value: Any) -> Any:
    if isinstance(value, (datetime, date)):
        return value.isoformat()
    if isinstance(value, Path):
        return str(value)
    if isinstance(value, set):
        return sorted(value)
    return str(value)


def emit_json(data: Any) -> None:
    text = json.dumps(data, default=_json_default, ensure_ascii=False)
    if _SURROGATE.search(text):  # a lone surrogate (undecodable input echoed back) cannot be written as UTF-8
        text = json.dumps(data, default=_json_default)
    sys.stdout.write(text + "\n")


def console():  # noqa: ANN201 -- rich is imported lazily: --json never pays for it
    from rich.console import Console

    return Console(highlight=False)


def shown(value: object, *, one_line: bool = True) -> str:
    """Text from documents and file names, safe inside Rich markup and on a terminal: control
    characters (ESC, BEL, CR, bidi overrides...) become visible escapes, '[' cannot open a tag."""
    from rich.markup import escape

    text = _visible(storable(str(value)))
    if one_line:
        text = text.replace("\n", "\\n").replace("\t", " ")
    return escape(text)


def _visible(text: str) -> str:
    """Control characters as visible escapes (\\x1b), so a terminal shows them instead of obeying."""
    return _CONTROLS.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


def err(message: str) -> None:
    """One line on stderr, whatever the message quotes (a driver's multi-line error, a name with
    undecodable bytes)."""
    line = " ".join(part.strip() for part in message.splitlines() if part.strip())
    sys.stderr.write(f"rag-pipeline: {_visible(storable(line))}\n")


def pages(start: int | None, end: int | None) -> str:
    if start is None:
        return "-"
    return str(start) if start == end or end is None else f"{start}-{end}"


def when(value: datetime | None) -> str:
    return value.isoformat(timespec="seconds") if value else "-"

"""Skipping unstructured's spaCy heuristics where their answer is thrown away.

unstructured runs spaCy (sentence split + POS tags) on every paragraph only to choose between
NarrativeText and Text -- both become "paragraph" here. That is ~90% of DOCX time (18 s of 20 s
for the 870-page DOJ handbook) and, on one 5 MB paragraph, ~20 s and ~3 GB of memory. So, while
one of *our* parse calls runs (a ContextVar, so other callers in the process are unaffected):

* DOCX and HTML (Markdown and e-mail bodies go through HTML): the narrative test is skipped;
* PPTX: the answer matters there (a short line that is not narrative may become a title), so
  only long blocks -- which can never be titles (> 12 words) -- skip it.

Plain text does not come here: parsing/text_direct.py types its paragraphs itself and asks
spaCy only about the short lines that could be headings.
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import importlib
from collections.abc import Callable, Iterator
from typing import Any

_FAST_HEURISTICS: contextvars.ContextVar[bool] = contextvars.ContextVar("rag_fast_heuristics", default=False)
_TITLE_MAX_WORDS = 12


@contextlib.contextmanager
def fast_heuristics() -> Iterator[None]:
    """Within the block (and only in this context), the patched heuristics take the shortcut."""
    _install_heuristic_shortcuts()
    token = _FAST_HEURISTICS.set(True)
    try:
        yield
    finally:
        _FAST_HEURISTICS.reset(token)


def _narrative_always(text: str) -> bool | None:
    return True


def _narrative_if_long(text: str) -> bool | None:
    if len(text) > 400 or len(text.split(" ")) > _TITLE_MAX_WORDS:
        return True
    return None  # ask the real heuristic


def _shortcut(original: Callable[..., bool], fast: Callable[[str], bool | None]) -> Callable[..., bool]:
    """`original`, answered by `fast` instead whenever the shortcut is on and `fast` knows."""

    @functools.wraps(original)
    def wrapper(text: str, *args: Any, **kwargs: Any) -> bool:
        if _FAST_HEURISTICS.get():
            answer = fast(text)
            if answer is not None:
                return answer
        return original(text, *args, **kwargs)

    wrapper._rag_shortcut = True  # type: ignore[attr-defined]
    return wrapper


@functools.lru_cache(maxsize=1)
def _install_heuristic_shortcuts() -> None:
    """Idempotent. If a future unstructured renames these internals, nothing is patched and
    parsing stays correct, only slower."""
    targets = {
        "unstructured.partition.docx": _narrative_always,
        "unstructured.partition.html.parser": _narrative_always,
        "unstructured.partition.pptx": _narrative_if_long,
    }
    for module_name, fast in targets.items():
        try:
            module = importlib.import_module(module_name)
        except ImportError:
            continue
        original = getattr(module, "is_possible_narrative_text", None)
        if callable(original) and not getattr(original, "_rag_shortcut", False):
            module.is_possible_narrative_text = _shortcut(original, fast)

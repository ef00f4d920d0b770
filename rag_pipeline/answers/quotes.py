"""Whether a citation's quote is in its chunk: the `quote_not_found` check of verify.py.

Both sides are compared normalised (fields.normalise: NFKC, case, whitespace runs, typographic
dashes and quotes). Beyond that, a quote is read as people and generators write quotes:

- marks around the whole quote are not part of it (`"\\"approved in advance\\""`, «...»);
- an ellipsis ("...", "…", "[...]", "[…]", "(...)") stands for words left out: each part must be
  in the chunk, in order, and each must say something on its own (two words or more), so that
  "the ... of" cannot pass by fragments any text holds;
- a full stop or comma at the end of a part is the writer's, not the quote's.

A quote changed in any other way ("ten" for "10", a word swapped) is still not found.
"""

from __future__ import annotations

import re

from rag_pipeline.answers.fields import normalise

_ELLIPSIS = re.compile(r"\s*(?:\[\s*(?:\.\s*){3}\]|\[\s*…\s*\]|\(\s*(?:\.\s*){3}\)|\(\s*…\s*\)|(?:\.\s*){3}|…)\s*")
_AROUND = "\"'«»‹›„“”‚‘’"


def quoted(quote: str, text: str) -> bool:
    """Whether the chunk text `text` holds the quote (module docstring)."""
    wanted, haystack = normalise(quote).strip(_AROUND + " "), normalise(text)
    if not wanted:
        return False  # only quotation marks: nothing quoted
    if wanted in haystack:
        return True
    parts = [p.strip(_AROUND + " ").rstrip(".,;:") for p in _ELLIPSIS.split(wanted)]
    parts = [p for p in parts if p]
    if not parts or (len(parts) > 1 and any(len(p.split()) < 2 for p in parts)):
        return False
    start = 0
    for part in parts:
        found = haystack.find(part, start)
        if found < 0:
            return False
        start = found + len(part)
    return True

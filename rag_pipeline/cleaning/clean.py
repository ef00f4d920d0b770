"""The clean step for one document: page boilerplate out, control characters neutralised,
secrets redacted. Returns what was removed, by kind, so operators can see it per document."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import replace

from rag_pipeline.cleaning.boilerplate import CLEANER_VERSION as BOILERPLATE_VERSION
from rag_pipeline.cleaning.boilerplate import strip_page_boilerplate
from rag_pipeline.cleaning.notices import NOTICES_VERSION, strip_notices
from rag_pipeline.cleaning.safety import SAFETY_VERSION, neutralise_controls, redact_secrets
from rag_pipeline.cleaning.safety.rules import BOUNDARY_CHARS
from rag_pipeline.parsing.types import Element

CLEANER_VERSION = f"{BOILERPLATE_VERSION}+{NOTICES_VERSION}+{SAFETY_VERSION}"

# Elements are redacted as ONE text, so a secret split over elements (a key pasted one line
# per paragraph, a "Recovery codes:" line followed by list items) is seen whole. Before
# element i stands a boundary line naming i in private-use "digits": a redaction that
# swallows boundaries leaves its placeholder in the element where the secret began, and the
# elements it consumed come back empty. Nothing is ever redacted element by element.
_OPEN, _DIGIT0 = "\ue000", 0xE010
_BOUNDARY = re.compile("\n\ue000([\ue010-\ue01f]{1,12})\n")
_PRIVATE_USE = re.compile(f"[{BOUNDARY_CHARS}]")


def _boundary(index: int) -> str:
    return "\n" + _OPEN + "".join(chr(_DIGIT0 + int(d, 16)) for d in format(index, "x")) + "\n"


def _index(digits: str) -> int:
    return int("".join(format(ord(c) - _DIGIT0, "x") for c in digits), 16)


def make_safe(elements: Sequence[Element]) -> tuple[list[Element], Counter]:
    """Neutralise control characters and redact secrets across element boundaries; elements
    left empty (wholly part of a secret) are dropped. The counts are what was really removed."""
    counts: Counter = Counter()
    texts = []
    for element in elements:
        text, changed = neutralise_controls(_PRIVATE_USE.sub("", element.text))
        counts["control_characters"] += changed
        texts.append(text)
    joined = "".join((_boundary(i) if i else "") + t for i, t in enumerate(texts))
    redacted, secrets = redact_secrets(joined)
    counts.update({f"secret:{kind}": n for kind, n in secrets.items()})
    pieces = [""] * len(texts)
    current, position = 0, 0
    for match in _BOUNDARY.finditer(redacted):
        pieces[current] += redacted[position : match.start()]
        current, position = _index(match.group(1)), match.end()
    pieces[current] += redacted[position:]
    cleaned = [replace(e, text=_PRIVATE_USE.sub("", t).strip()) for e, t in zip(elements, pieces)]
    return [e for e in cleaned if e.text], +counts


def clean_elements(elements: list[Element], notices: set[str] = frozenset(), *, already_safe: bool = False) -> tuple[list[Element], Counter]:
    """`notices`: digests of paragraphs found repeated across the source (notices.py).
    `already_safe`: the elements went through `make_safe` (the parse step does that before
    anything is stored), so only boilerplate is removed here."""
    counts: Counter = Counter()
    kept, removed = strip_page_boilerplate(elements)
    counts.update(removed)
    kept, counts["corpus_notice"] = strip_notices(kept, set(notices))
    if not already_safe:
        kept, safety = make_safe(kept)
        counts.update(safety)
    return kept, +counts

"""The clean step for one document: page boilerplate out, control characters neutralised,
secrets redacted. Returns what was removed, by kind, so operators can see it per document."""

from __future__ import annotations

from collections import Counter
from dataclasses import replace

from rag_pipeline.cleaning.boilerplate import CLEANER_VERSION as BOILERPLATE_VERSION
from rag_pipeline.cleaning.boilerplate import strip_page_boilerplate
from rag_pipeline.cleaning.notices import NOTICES_VERSION, strip_notices
from rag_pipeline.cleaning.safety import SAFETY_VERSION, neutralise_controls, redact_secrets
from rag_pipeline.parsing.types import Element

CLEANER_VERSION = f"{BOILERPLATE_VERSION}+{NOTICES_VERSION}+{SAFETY_VERSION}"
# Elements are redacted as one text so a secret split over elements (a "Recovery codes:" line
# followed by list items) is still seen whole; this line marks where each element ends.
_SEPARATOR = "\n\ue000\n"


def clean_elements(elements: list[Element], notices: set[str] = frozenset()) -> tuple[list[Element], Counter]:
    """`notices`: fingerprints of paragraphs found repeated across the source (notices.py)."""
    counts: Counter = Counter()
    kept, removed = strip_page_boilerplate(elements)
    counts.update(removed)
    kept, counts["corpus_notice"] = strip_notices(kept, set(notices))
    neutralised = []
    for element in kept:
        text, changed = neutralise_controls(element.text.replace("\ue000", ""))
        counts["control_characters"] += changed
        neutralised.append(text)
    joined, secrets = redact_secrets(_SEPARATOR.join(neutralised))
    counts.update({f"secret:{kind}": n for kind, n in secrets.items()})
    texts = joined.split(_SEPARATOR)
    if len(texts) != len(kept):  # a redaction swallowed a separator: fall back to per-element
        texts = []
        for text in neutralised:
            redacted, _ = redact_secrets(text)
            texts.append(redacted)
    cleaned = [replace(e, text=t.strip()) for e, t in zip(kept, texts)]
    return [e for e in cleaned if e.text], +counts

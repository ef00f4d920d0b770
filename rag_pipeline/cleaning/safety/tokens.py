"""Vendor credentials whose prefix alone identifies them (the formats in secret_patterns.py).

These need no label: `ghp_...` or `AKIA...` is a credential wherever it appears. They run
before the label rules so that `password = ghp_...` counts once, as the more specific kind.
Matching is case-sensitive, on the original text. A JWT wrapped over several lines is joined
and judged whole (jwt_lines.py) after the one-line formats.
"""

from __future__ import annotations

import re
from collections import Counter

from rag_pipeline.cleaning.safety.jwt_lines import redact_split_jwts
from rag_pipeline.cleaning.safety.rules import Rule, apply_rules
from rag_pipeline.cleaning.safety.secret_patterns import SECRET_PATTERNS

_SHAPED_TOKEN_RULES: tuple[Rule, ...] = tuple(Rule(p.kind, re.compile(p.regex)) for p in SECRET_PATTERNS)


def redact_shaped_tokens(text: str, counts: Counter[str]) -> str:
    """Tokens whose prefix alone identifies them (secret_patterns.py), then JWTs split over lines."""
    return redact_split_jwts(apply_rules(_SHAPED_TOKEN_RULES, text, counts), counts)

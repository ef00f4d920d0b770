"""Vendor credentials whose prefix alone identifies them: GitHub, Slack, Google, Stripe, AWS, JWT.

These need no label: `ghp_...` or `AKIA...` is a credential wherever it appears. They run
before the label rules so that `password = ghp_...` counts once, as the more specific kind.
Matching is case-sensitive, on the original text.
"""

from __future__ import annotations

import re
from collections import Counter

from rag_pipeline.cleaning.safety.patterns import token_start
from rag_pipeline.cleaning.safety.rules import Rule, apply_rules

_B64URL = r"A-Za-z0-9_\-"

_SHAPED_TOKEN_RULES: tuple[Rule, ...] = (
    Rule(
        "jwt",
        re.compile(
            token_start("eyJ", 3, _B64URL + ".")
            + f"[{_B64URL}]{{5,8192}}+\\.[{_B64URL}]{{5,8192}}+\\.[{_B64URL}]{{8,8192}}+(?![{_B64URL}])"
        ),
    ),
    Rule(
        "github_token",
        re.compile(
            "(?:"
            + token_start("gh[pousr]_", 4, "A-Za-z0-9_")
            + "[A-Za-z0-9]{36,251}+|"
            + token_start("github_pat_", 11, "A-Za-z0-9_")
            + "[A-Za-z0-9_]{22,251}+)(?![A-Za-z0-9_])"
        ),
    ),
    Rule("slack_token", re.compile(token_start("xox[abposr]-", 5, "A-Za-z0-9-") + "[A-Za-z0-9-]{10,251}+")),
    Rule("slack_webhook", re.compile(r"https://hooks\.slack\.com/(?:services|workflows)/[A-Za-z0-9/_-]{20,200}+")),
    Rule("google_api_key", re.compile(token_start("AIza", 4, _B64URL) + f"[{_B64URL}]{{35}}(?![{_B64URL}])")),
    Rule(
        "stripe_key",
        re.compile(token_start("[sr]k_(?:live|test)_", 8, "A-Za-z0-9_") + "[A-Za-z0-9]{16,247}+(?![A-Za-z0-9_])"),
    ),
    Rule("aws_access_key", re.compile(token_start("A(?:KIA|SIA)", 4, "A-Za-z0-9") + "[A-Z0-9]{16}(?![A-Za-z0-9])")),
)


def redact_shaped_tokens(text: str, counts: Counter[str]) -> str:
    """Tokens whose prefix alone identifies them (GitHub, Slack, Google, Stripe, AWS, JWT)."""
    return apply_rules(_SHAPED_TOKEN_RULES, text, counts)

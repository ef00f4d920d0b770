"""The safety passes in the order they must run: the order is part of what makes them correct.

Controls go before redaction (`clean_text`), and redactors run most specific first
(`_REDACTORS`). Each module the passes come from owns one kind of secret or character.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable

from rag_pipeline.cleaning.safety.cards import redact_cards
from rag_pipeline.cleaning.safety.command_lines import redact_command_lines
from rag_pipeline.cleaning.safety.connection_strings import redact_connection_strings
from rag_pipeline.cleaning.safety.controls import neutralise_controls
from rag_pipeline.cleaning.safety.ibans import redact_ibans
from rag_pipeline.cleaning.safety.keys import redact_private_keys
from rag_pipeline.cleaning.safety.labelled import redact_labelled
from rag_pipeline.cleaning.safety.next_line import redact_values_below_labels
from rag_pipeline.cleaning.safety.password_tables import redact_password_tables
from rag_pipeline.cleaning.safety.passwords import redact_passwords
from rag_pipeline.cleaning.safety.recovery_codes import redact_recovery_codes
from rag_pipeline.cleaning.safety.report import SafetyReport
from rag_pipeline.cleaning.safety.tokens import redact_shaped_tokens

# Most specific first: a value consumed by a vendor rule is already a placeholder, which the
# label rules skip, so `password = ghp_...` counts once, as github_token.
_REDACTORS: tuple[Callable[[str, Counter[str]], str], ...] = (
    redact_private_keys,
    redact_shaped_tokens,
    redact_connection_strings,  # before passwords: `;Password=a b;` ends at its `;`
    redact_command_lines,  # before passwords: `mysql -pX`, `--password X`
    redact_labelled,
    redact_passwords,
    redact_values_below_labels,  # after the inline rules: only labels left without a value
    redact_password_tables,
    redact_recovery_codes,
    redact_ibans,
    redact_cards,
)


def redact_secrets(text: str) -> tuple[str, Counter[str]]:
    """Replace every secret found with `[REDACTED:<kind>]`; return the text and counts per kind.

    The counts are all that leaves this function about what was removed: no secret, hash or
    prefix is kept, so neither the index nor logs can leak it.
    """
    counts: Counter[str] = Counter()
    for redactor in _REDACTORS:
        text = redactor(text, counts)
    return text, counts


def clean_text(text: str) -> tuple[str, SafetyReport]:
    """Neutralise controls first, then redact: a zero-width space inside "pass\\u200bword:" or
    an escape sequence splitting a key must not let a secret slip past the patterns."""
    text, neutralised = neutralise_controls(text)
    text, secrets = redact_secrets(text)
    return text, SafetyReport(controls_neutralised=neutralised, secrets=secrets)

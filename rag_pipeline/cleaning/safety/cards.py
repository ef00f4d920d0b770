"""Payment card numbers: redacted only when Luhn-valid, with a real brand prefix and length.

Order, invoice, phone and ISBN numbers are long digit runs too; the checksum, the issuer's
prefix and length, and the way cards are printed (groups of four) tell them apart, so those
numbers stay in the text.
"""

from __future__ import annotations

import re
from collections import Counter

from rag_pipeline.cleaning.safety.checksums import luhn_is_valid
from rag_pipeline.cleaning.safety.rules import Rule, apply_rule

# Starts at a digit that does not continue a number, word, decimal or phone number ("+49..."),
# and may not run on ("4111 1111 1111 1111 2222" is something else). The look-behinds sit
# after the first digit so the engine still skips non-digits quickly.
_CARD_PATTERN = re.compile(
    r"[2-6](?<![A-Za-z0-9_.,+/][2-6])(?<![0-9][ -][2-6])[0-9]{3}(?:[ -]?[0-9]){9,15}(?![ -]?[0-9])"
)

# (first-digits range, allowed lengths) for brands that issue 13-19 digit numbers.
_CARD_BRANDS: tuple[tuple[int, int, frozenset[int]], ...] = (
    (4, 4, frozenset({13, 16, 19})),  # Visa
    (51, 55, frozenset({16})),  # Mastercard
    (2221, 2720, frozenset({16})),  # Mastercard 2-series
    (34, 34, frozenset({15})),  # American Express
    (37, 37, frozenset({15})),
    (300, 305, frozenset({14, 16, 19})),  # Diners Club
    (36, 36, frozenset({14, 16, 19})),
    (38, 39, frozenset({14, 16, 19})),
    (3528, 3589, frozenset(range(16, 20))),  # JCB
    (6011, 6011, frozenset(range(16, 20))),  # Discover
    (644, 649, frozenset(range(16, 20))),
    (65, 65, frozenset(range(16, 20))),
    (62, 62, frozenset(range(16, 20))),  # UnionPay
    (2200, 2204, frozenset(range(16, 20))),  # Mir
    (50, 50, frozenset(range(13, 20))),  # Maestro
    (56, 58, frozenset(range(13, 20))),
    (63, 63, frozenset(range(13, 20))),
    (67, 67, frozenset(range(13, 20))),
)


def _card_brand_matches(digits: str) -> bool:
    """A real issuer prefix with a length that issuer uses; rules out most long numbers."""
    for low, high, lengths in _CARD_BRANDS:
        width = len(str(low))
        if low <= int(digits[:width]) <= high and len(digits) in lengths:
            return True
    return False


def _card_grouping_ok(candidate: str) -> bool:
    """Separators, if any, are one kind and group as cards are printed: 4-4-4-4(-n), 4-6-5, 4-6-4.
    Phone numbers ("0170 123 4567 89") and ISBNs group differently."""
    separators = {c for c in candidate if c in " -"}
    if not separators:
        return True
    if len(separators) > 1:
        return False
    groups = [len(group) for group in candidate.split(separators.pop())]
    if groups in ([4, 6, 5], [4, 6, 4]):
        return True
    return len(groups) >= 4 and all(g == 4 for g in groups[:-1]) and 1 <= groups[-1] <= 4


def _accept_card(match: re.Match[str], value: str) -> bool:
    """Printed like a card, issued like a card, and carrying a card's checksum."""
    digits = value.replace(" ", "").replace("-", "")
    return _card_grouping_ok(value) and _card_brand_matches(digits) and luhn_is_valid(digits)


_CARD = Rule("payment_card", _CARD_PATTERN, accept=_accept_card)


def redact_cards(text: str, counts: Counter[str]) -> str:
    """Luhn-valid numbers with a plausible brand prefix; order and invoice numbers stay."""
    return apply_rule(_CARD, text, counts)

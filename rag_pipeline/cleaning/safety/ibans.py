"""IBANs: redacted only when the ISO 13616 checksum holds.

Bank account numbers identify people and enable fraud, but documentation is full of IBAN-shaped
examples and typos; the mod-97 check removes the real ones and keeps the rest readable. Printed
IBANs come in groups of four, so spaces (and no-break spaces) between characters are allowed.
"""

from __future__ import annotations

import re
from collections import Counter

from rag_pipeline.cleaning.safety.checksums import IBAN_LENGTHS, iban_is_valid
from rag_pipeline.cleaning.safety.rules import Rule, apply_rule

_ALNUM = re.compile("[A-Za-z0-9]")


def _iban_pattern() -> re.Pattern[str]:
    """Per country: code, two check digits, then exactly length-4 BBAN characters, each
    optionally preceded by one space (printed IBANs come in groups of four).

    Alternatives are grouped by first letter (`D(?:E...|K...)|G(?:B...)...`) so that every
    top-level alternative starts with a literal and the engine skips non-candidates quickly.
    """
    by_letter: dict[str, list[str]] = {}
    for country, length in sorted(IBAN_LENGTHS.items()):
        bban = f"(?:[ \u00a0]?[A-Z0-9]){{{length - 4}}}"
        by_letter.setdefault(country[0], []).append(f"{country[1]}[0-9]{{2}}{bban}")
    branches = [f"{letter}(?:{'|'.join(rest)})" for letter, rest in by_letter.items()]
    return re.compile(f"(?:{'|'.join(branches)})(?![A-Za-z0-9])")


def _starts_token(source: str, start: int) -> bool:
    """The country code must not continue a word or number ("XDE89..." is something else)."""
    return start == 0 or _ALNUM.match(source, start - 1) is None


def _accept_iban(match: re.Match[str], value: str) -> bool:
    """Shape alone proves nothing; the checksum does."""
    return iban_is_valid(value)


_IBAN = Rule("iban", _iban_pattern(), boundary=_starts_token, accept=_accept_iban)


def redact_ibans(text: str, counts: Counter[str]) -> str:
    """Only checksum-valid IBANs go: "IBAN format explained" and typos stay readable."""
    return apply_rule(_IBAN, text, counts)

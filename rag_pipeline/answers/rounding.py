"""Rounded figures: "Total interest expense rose to about $1.5 million" on a passage stating
$1,505,386. A generated answer rounds where it says "about", and the exact-field rule (fields.py)
read the figure as exact: every such correct claim was refused. A figure after a word of
approximation ("about", "approximately", "roughly", "nearly", "some", "~", and their German,
French and Czech forms) is stated by a passage value that rounds to it at the place of its last
significant digit: "1.5 million" to the nearest 100,000, "120%" to the nearest 10, "120.3%" to
the nearest 0.1. A figure without such a word stays exact, and "about $1.6 million" is not
stated by $1,505,386.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from decimal import Decimal

_APPROXIMATELY = re.compile(r"(?:\babout|\bapproximately|\bapprox\.?|\baround|\broughly|\bnearly|\balmost|\bcirca"
                            r"|\bca\.|~|\bclose to|\bsome|\ban estimated|\bungefähr|\betwa|\bpresque|\benviron"
                            r"|\bzhruba|\bpřibližně)\s*(?:\$|€|£|¥|us\$|eur|usd)?\s*$")
_DECIMAL = re.compile(r"-?\d+(?:\.\d+)?")


def rounded_at(prepared: str, start: int) -> bool:
    """Whether the figure starting at `start` of a prepared claim follows a word of approximation."""
    return _APPROXIMATELY.search(prepared[max(0, start - 20):start]) is not None


def rounds_to(number: str, values: Iterable[str]) -> bool:
    """Whether one of the passage's canonical values rounds to the claim's canonical `number` at
    the place of its last significant digit (module docstring)."""
    if not _DECIMAL.fullmatch(number):
        return False
    claimed = Decimal(number)
    decimals = number.split(".")[1] if "." in number else ""
    unit = Decimal(1).scaleb(-len(decimals)) if decimals else Decimal(1).scaleb(len(number) - len(number.rstrip("0")))
    return any(abs(Decimal(found) - claimed) * 2 <= unit for found in values if _DECIMAL.fullmatch(found))

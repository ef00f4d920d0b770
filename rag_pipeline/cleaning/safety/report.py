"""What the safety pass removed, per text and per document, and under which rules.

Only counts per kind are reported: the secrets themselves never leave the redactors, so neither
the index, the logs nor an operator's dashboard can leak them. `SAFETY_VERSION` is recorded with
cleaned text so that a change to the rules re-cleans what was cleaned under the old ones.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

SAFETY_VERSION = "safety6"  # safety6: number forms as typed: fractions "1/2", fraction slash "/", superscript powers "10^6", subscripts "H2O", Roman numeral characters (safety/number_forms.py); safety5: typographic hyphens and full-width ASCII written as ASCII; safety2: keys across element boundaries, PuTTY keys; safety3: issue 22 formats; safety4: every invisible character that splits a word (soft hyphens, bidi marks, fillers)


@dataclass
class SafetyReport:
    """What the safety pass removed from one text, countable per kind for operators."""

    controls_neutralised: int = 0
    secrets: Counter[str] = field(default_factory=Counter)
    version: str = SAFETY_VERSION

    @property
    def secrets_redacted(self) -> int:
        """All kinds together, for the one number a log line or a metric shows."""
        return sum(self.secrets.values())

    @property
    def changed(self) -> bool:
        """Whether the text differs from what the parser produced (so a reviewer may look)."""
        return self.controls_neutralised > 0 or self.secrets_redacted > 0

    def merge(self, other: SafetyReport) -> None:
        """Accumulate per-element reports into a per-document one."""
        self.controls_neutralised += other.controls_neutralised
        self.secrets.update(other.secrets)

    def to_dict(self) -> dict:
        """JSON-ready form for storage; kinds sorted so equal reports serialise equally."""
        return {
            "version": self.version,
            "controls_neutralised": self.controls_neutralised,
            "secrets": dict(sorted(self.secrets.items())),
        }

"""Safety cleaning: the last pass over parsed text before anything is chunked, embedded or indexed.

Two jobs, both about what must never reach the index or a reviewer's terminal:

* `neutralise_controls` removes characters that let a document act on whoever displays it
  (terminal escape sequences, C0/C1 controls) or hide text from a human reviewer while a model
  still reads it (bidi overrides, zero-width characters, Unicode "tag" characters used for
  ASCII smuggling, variation-selector runs used to smuggle bytes).
* `redact_secrets` replaces credentials and financial identifiers with `[REDACTED:<kind>]`.
  The secret itself is never stored or returned: only counts per kind leave this package.

Every pattern here runs on untrusted input of arbitrary size, so each one is written to be
linear and cheap: it begins with a literal keyword or prefix (so the engine skips ahead with its
fast search), repetitions are bounded and possessive, scans from neighbouring candidates cannot
overlap (shaped tokens carry a look-behind right after their prefix), case-insensitive labels
are matched on a lower-cased copy instead of with IGNORECASE, and block-shaped secrets (PEM keys,
recovery-code lists) are examined inside explicitly bounded windows. A 20 MB hostile input costs
a handful of passes over the text, never a quadratic search.

`SAFETY_VERSION` is recorded with cleaned text so that a change to these rules re-cleans.

Layout: `controls` (control characters, escapes, invisible text); `pipeline` (the order of the
passes); one module per kind of secret: `keys`, `tokens`, `labelled`, `passwords`,
`password_tables`, `recovery_codes`, `ibans`, `cards`; shared pieces: `rules` (the
search-confirm-replace loop and the placeholder), `patterns` (linear pattern builders),
`template_values`, `checksums`; `report` (counts and version).
"""

from rag_pipeline.cleaning.safety.checksums import iban_is_valid, luhn_is_valid
from rag_pipeline.cleaning.safety.controls import as_indexed, neutralise_controls
from rag_pipeline.cleaning.safety.pipeline import clean_text, redact_secrets
from rag_pipeline.cleaning.safety.report import SAFETY_VERSION, SafetyReport
from rag_pipeline.cleaning.safety.rules import placeholder

__all__ = [
    "SAFETY_VERSION",
    "SafetyReport",
    "as_indexed",
    "clean_text",
    "iban_is_valid",
    "luhn_is_valid",
    "neutralise_controls",
    "placeholder",
    "redact_secrets",
]

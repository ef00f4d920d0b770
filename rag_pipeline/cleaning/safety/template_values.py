"""Recognising template values that fill a secret's slot in documentation.

Docs show `password: ****`, `api_key = <your key>`, `token: ${API_TOKEN}`. These are not
secrets, and redacting them would only inflate the counts operators watch, so every
label-based redactor asks here before it replaces a value.
"""

from __future__ import annotations

import re

_TEMPLATE_VALUE = re.compile(r"[*_.\-x•·]+|<.*|\$\{?[A-Za-z_][A-Za-z0-9_]*\}?|%[sd(].*|\{\{.*", re.IGNORECASE)
# "your-api-key", "YOUR_TOKEN_HERE", "sk_xxxx": narrow on purpose, "YourName2024!" is a password.
_TEMPLATE_MARKER = re.compile(r"(?:^|[_\-])your[_\-]|[_\-]here$|xxxx", re.IGNORECASE)


def is_template_value(value: str) -> bool:
    """Template and form values (`****`, `<token>`, `${API_KEY}`, `your-key-here`) are not
    secrets; redacting them would only inflate the counts operators watch."""
    return _TEMPLATE_VALUE.fullmatch(value) is not None or _TEMPLATE_MARKER.search(value) is not None

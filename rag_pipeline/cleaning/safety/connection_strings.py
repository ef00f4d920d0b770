"""Passwords inside connection strings: URLs of every scheme and ODBC/ADO.NET key=value lists.

`scheme://user:password@host` for any scheme (`postgres`, `mongodb+srv`, `jdbc:mysql`, `amqp`,
`redis://:password@host` without a user); only the password is replaced, user and host stay.
A password holding an unencoded `@` (`p@ss`) is taken up to the last `@` before the host, so no
part of it is left. ODBC-style strings (`Server=...;User ID=sa;Password=...;`, `Pwd={...}`)
have values that end at `;` or a closing brace (`Pwd={pass word;1}`), which the inline password
rule cannot know; these run before it. The rules are the project's own (detect-secrets'
`basic_auth` plugin covers the URL form with a pattern that stops at the first `@`).
"""

from __future__ import annotations

import re
from collections import Counter

from rag_pipeline.cleaning.safety.passwords import NOT_A_PASSWORD, is_code_expression
from rag_pipeline.cleaning.safety.patterns import NOT_REDACTED, word_start
from rag_pipeline.cleaning.safety.rules import Rule, apply_rules
from rag_pipeline.cleaning.safety.template_values import is_template_value


def _after_scheme(source: str, start: int) -> bool:
    """`postgres://user:pw@host`: the "://" must follow a URL scheme."""
    return start > 0 and source[start - 1].isalnum()


_URL_DELIMITERS = "\\s/?#\"'<>"
# The password runs (lazily, bounded) to the `@` after which a host follows with no further `@`.
_URL_CREDENTIALS = Rule(
    "url_credentials",
    re.compile(
        f"://[^{_URL_DELIMITERS}:@]{{0,256}}+:" + NOT_REDACTED
        + f"(?P<v>[^{_URL_DELIMITERS}]{{1,256}}?)@(?=[^{_URL_DELIMITERS}@]{{1,256}}+(?!@))"
    ),
    boundary=_after_scheme,
)


def _accept_odbc_value(match: re.Match[str], value: str) -> bool:
    """A value, not code: `password = getpass();` and `pwd = newPassword;` are assignments."""
    value = value.strip().strip("{}").strip()
    if not value or is_template_value(value) or value.lower() in NOT_A_PASSWORD:
        return False
    if is_code_expression(value):
        return False
    return not (re.fullmatch(r"[A-Za-z_$][\w$]*", value) and re.search("pass|pwd", value, re.IGNORECASE))


_ODBC_PASSWORD = Rule(
    "password",
    re.compile(
        word_start(["password", "pwd"], "a-z0-9_")
        + r"[ \t]{0,4}+=[ \t]{0,4}+"
        + NOT_REDACTED
        + r"""(?:\{(?P<v>[^}\n]{1,256}+)\}|(?P<bare>[^;\s"'{}=]{1,256}+)(?=;))"""
    ),
    folded=True,
    accept=_accept_odbc_value,
)

_CONNECTION_STRING_RULES = (_URL_CREDENTIALS, _ODBC_PASSWORD)


def redact_connection_strings(text: str, counts: Counter[str]) -> str:
    """The password of `scheme://user:password@host` and of `...;Password=...;` lists."""
    return apply_rules(_CONNECTION_STRING_RULES, text, counts)

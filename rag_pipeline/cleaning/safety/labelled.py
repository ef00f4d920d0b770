"""Credentials recognised by what they are assigned to rather than by their own shape.

`api_key = ...`, `client_secret: ...`, `Authorization: Bearer ...`, `aws_secret_access_key=...`
(connection strings are connection_strings.py's). The label proves intent but says
nothing about the value, so a value must also look machine-made: "token: a unit of text"
and `token = request.headers.get` stay. Labels are matched on case-folded text.
"""

from __future__ import annotations

import re
from collections import Counter

from rag_pipeline.cleaning.safety.patterns import LETTER, NOT_REDACTED, SEP, word_start
from rag_pipeline.cleaning.safety.rules import TRAILING_PUNCTUATION, Rule, apply_rules
from rag_pipeline.cleaning.safety.template_values import is_template_value

_TOKEN = re.compile(r"[A-Za-z0-9_\-+/=.~:]+")


def accept_token(match: re.Match[str], value: str) -> bool:
    """The value after a key or token label must look machine-made (`looks_machine_made`)."""
    return looks_machine_made(value)


def looks_machine_made(value: str) -> bool:
    """A machine-generated credential: at least 8 characters, no spaces, and letters mixed with
    digits (or, rarely without digits, long and mixed-case). Keeps "token: a unit of text",
    "secret: family recipe" and `token = request.headers.get` untouched."""
    value = value.rstrip(TRAILING_PUNCTUATION)
    if len(value) < 8 or _TOKEN.fullmatch(value) is None or is_template_value(value):
        return False
    if any(c.isdigit() for c in value):
        return any(c.isalpha() for c in value)
    return len(value) >= 32 and any(c.isupper() for c in value) and any(c.islower() for c in value)


# Two rules rather than one alternation: a pattern that starts with a single literal gets the
# engine's fastest search, which matters on long runs of the first letter ("aaaa...").
_AWS_SECRET_RULES = tuple(
    Rule(
        "aws_secret_key",
        re.compile(
            word_start([label], "a-z0-9") + r"(?![a-z0-9])" + SEP + r"""["']?(?P<v>[a-z0-9/+]{40})(?![a-z0-9/+=])"""
        ),
        folded=True,
    )
    for label in (r"aws[ _-]?secret[ _-]?(?:access[ _-]?)?key", r"secret[ _-]?access[ _-]?key")
)

_BEARER_VALUE = NOT_REDACTED + r"(?P<v>[a-z0-9._~+/=-]{8,4096}+)"
_AUTHORIZATION = Rule(
    "token",
    re.compile(
        word_start(["authorization"], LETTER)  # also inside "Proxy-Authorization"
        + r"[\"']?[ \t]{0,8}+[:=][ \t]{0,8}+[\"']?(?:(?:bearer|basic|token|bot|apikey)[ \t]{1,8}+)?"
        + _BEARER_VALUE
    ),
    folded=True,
    accept=accept_token,
)
_BEARER = Rule(
    "token",
    re.compile(word_start(["bearer"], LETTER) + r"[ \t]{1,8}+" + _BEARER_VALUE),
    folded=True,
    accept=accept_token,
)

GENERIC_LABEL = word_start(
    [r"api[ _-]?(?:key|token|secret)", r"secret(?:[ _-]?key)?", "token"]
    + [prefix + r"[ _-]?secret" for prefix in ("app", "client", "consumer", "shared", "signing", "webhook")]
    + [prefix + r"[ _-]?token" for prefix in ("access", "auth", "refresh", "id", "private", "session", "bot")],
    "a-z0-9",
)
_GENERIC_VALUE = (
    NOT_REDACTED
    + r"""(?:"(?P<dq>[^"\s]{1,1024}+)"|'(?P<sq>[^'\s]{1,1024}+)'|(?P<bare>[^\s"'<>()\[\]{},;|]{1,1024}+))"""
)


def _generic_kind(match: re.Match[str]) -> str:
    """api_key / secret / token, from the label the value was assigned to."""
    return label_kind(match.group("label"))


def label_kind(label: str) -> str:
    """api_key / secret / token, from a (folded) generic credential label."""
    if "secret" in label:
        return "secret"
    if "key" in label:
        return "api_key"
    return "token"


_GENERIC_ASSIGNMENT = Rule(
    _generic_kind,
    re.compile(r"(?P<label>" + GENERIC_LABEL + r")(?![a-z0-9])" + SEP + _GENERIC_VALUE),
    folded=True,
    accept=accept_token,
)

_LABELLED_RULES = (*_AWS_SECRET_RULES, _AUTHORIZATION, _BEARER, _GENERIC_ASSIGNMENT)


def redact_labelled(text: str, counts: Counter[str]) -> str:
    """Credentials recognised by what they are assigned to rather than by their own shape."""
    return apply_rules(_LABELLED_RULES, text, counts)

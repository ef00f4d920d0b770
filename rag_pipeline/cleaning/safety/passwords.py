"""Passwords after a label, in the languages our documents use: `password: hunter2`,
`Passwort: ...`, `mot de passe : ...`, `heslo: ...`, `contraseña = ...`.

Unlike API keys, passwords are chosen by people and can be plain words, so the value cannot be
judged by shape alone; `accept_password` weighs the value against the prose and code that
also follow such labels ("Password: must be 12 characters", `password = os.environ["PW"]`).
The label is kept, the value replaced. Markdown tables are handled in `password_tables`.
"""

from __future__ import annotations

import re
from collections import Counter

from rag_pipeline.cleaning.safety.patterns import LETTER, NOT_REDACTED, SEP, fold, word_start
from rag_pipeline.cleaning.safety.rules import TRAILING_PUNCTUATION, Rule, apply_rule
from rag_pipeline.cleaning.safety.template_values import is_template_value

# Lower-case, and folded like the text they are matched against (so "пароль" reads as the
# folded text spells it, its Cyrillic а, р, о folded to Latin).
PASSWORD_LABEL = word_start(
    [
        fold(label)
        for label in (
            r"pass(?:word|wd|wort|phrase|code)s?", r"pass[ _-]word", "pwd", r"kennw[oö]rt(?:er)?",  # English, German
            r"p a s s w o r d",  # letter-spaced
            r"pgpassword", "sshpass", r"rediscli_auth",  # environment variables of command-line clients
            r"mots?[ \t\u00a0]de[ \t\u00a0]passe", "mdp", r"hesl[oa]", "hasło",  # French, Czech, Polish
            r"contrase[ñn]a", "wachtwoord", "senha", "lösenord", "salasana", "пароль", "jelszó",
        )
    ],
    LETTER,
)

# Words that fill a password field in documentation without being a password.
NOT_A_PASSWORD = frozenset(
    """none null nil n/a na empty required optional unknown unset same see below above hidden
    redacted true false yes no keins keine leer aucun aucune vide žádné nic""".split()
)


def _rest_of_line_is_blank(text: str, position: int) -> bool:
    """True when nothing but spaces follows `position` on its line (bounded look-ahead)."""
    end = text.find("\n", position, position + 256)
    if end < 0:
        end = min(len(text), position + 256)
        if end < len(text):
            return False
    return text[position:end].strip() == ""


# `password = os.environ["PW"]`, `pwd := getpass()`, `password: settings.DB_PASSWORD`.
_CODE_EXPRESSION = re.compile(r"(?:[A-Za-z_]\w*\.)+[A-Za-z_]\w*(?:[(\[].*)?|[A-Za-z_]\w*\((?:\)|[\"'].*)")


_IDENTIFIER = re.compile(r"[A-Za-z_$][\w$]*")


def is_code_expression(word: str) -> bool:
    """`os.environ["PW"]`, `settings.DB_PASSWORD`, `getpass()`: code that reads a password."""
    return _CODE_EXPRESSION.fullmatch(word) is not None


def accept_password(match: re.Match[str], value: str) -> bool:
    """Decide whether the value after `password:` is a password rather than prose.

    Quoted values are always accepted. A bare value is accepted when it looks chosen (digit,
    symbol or inner capital) or when it is the whole rest of the line ("Heslo: tajne").
    "Password: must be 12 characters" keeps its text.
    """
    if match.group("bare") is None:
        return True
    word = value.rstrip(TRAILING_PUNCTUATION)
    if not word or is_template_value(word) or word.lower() in NOT_A_PASSWORD:
        return False
    if match.group("bare").endswith(";") and _IDENTIFIER.fullmatch(word) and ("pass" in word.lower() or "pwd" in word.lower()):
        return False  # `this.password = newPassword;`: a variable, in code
    if word[0] in "|;,&" or not any(c.isalnum() for c in word):
        return False  # `| Password: | x |`, `Pwd=;Uid=`: the next cell or field, not a value; "!!": none
    if match.group("label") == "pwd" and word[0] in "/~":
        return False  # PWD=/home/user is a working directory
    if word[0] in "([{<" or is_code_expression(word):
        return False  # "MDP = (S, A, P, R)", `password = os.environ["PW"]`: code, not a value
    if any(not (c.isalpha() or c in "-'’") for c in word) or any(c.isupper() for c in word[1:]):
        return True
    return _rest_of_line_is_blank(match.string, match.end())


def _accept_inline_password(match: re.Match[str], value: str) -> bool:
    """A query parameter's value is the query rule's to judge (it ends at `&`)."""
    start = match.start()
    if start > 0 and match.string[start - 1] in "?&":
        return False
    return accept_password(match, value)


_PASSWORD = Rule(
    "password",
    re.compile(
        r"(?P<label>"
        + PASSWORD_LABEL
        + r")(?![^\W\d_])"
        + r"(?:[ \t]{0,4}+\([^()\n]{0,40}+\))?"  # "Passwort (Produktion): ..."
        + SEP
        + NOT_REDACTED
        + r"""(?:"(?P<dq>[^"\n]{1,256}+)"|'(?P<sq>[^'\n]{1,256}+)'|(?P<bare>[^\s"']{1,256}+))"""
    ),
    folded=True,
    accept=_accept_inline_password,
)


# A query parameter (`?user=a&password=x&next=/`): the value ends at the next `&`, and is judged
# on its own, so `&password=something&allow=...` in an example request keeps its text.
_QUERY_PASSWORD = Rule(
    "password",
    re.compile(r"[?&](?P<label>password|passwd|pwd|pass)=" + NOT_REDACTED + r"(?P<bare>[^&\s#\"'<>]{1,256}+)"),
    folded=True,
    accept=accept_password,
)


def redact_passwords(text: str, counts: Counter[str]) -> str:
    """`password: hunter2`, `Passwort: ...`, `mot de passe : ...`, `heslo: ...` and relatives."""
    return apply_rule(_PASSWORD, apply_rule(_QUERY_PASSWORD, text, counts), counts)

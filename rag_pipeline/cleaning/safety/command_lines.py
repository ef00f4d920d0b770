"""Passwords on command lines: `mysql -pSECRET`, `sshpass -p pw`, `--password pw`, `curl -u u:pw`.

Runbooks paste commands with the password in them. `-p` means a password only for some tools
(`mkdir -p`, `ssh -p 2222`, `docker run -p 80:80` are not), so short options are read only after
the command whose option they are, on the same line (or its `\\` continuations, bounded):

* mysql/mariadb family: `-pSECRET` (attached) is the password; `-p word` is the database name
  unless the word looks chosen (digit, symbol or inner capital), as `-p S3cret!` does;
* `sshpass -p`, `mongo(sh) -p`, `redis-cli -a`, `sqlcmd`/`bcp -P`: the value is the password;
* `curl -u user:pw` / `--user user:pw`: the part after the first `:`.

`--password=pw` is the inline password rule's (passwords.py); `--password pw` (a space, any
command) is here, judged like a password after a label. `PGPASSWORD=...`, `MYSQL_PWD=...` and
`SSHPASS=...` are labels the password rule knows. All rules are the project's own.
"""

from __future__ import annotations

import re
from collections import Counter

from rag_pipeline.cleaning.safety.passwords import NOT_A_PASSWORD, accept_password
from rag_pipeline.cleaning.safety.patterns import NOT_REDACTED
from rag_pipeline.cleaning.safety.rules import PLACEHOLDER_PREFIX, Rule, apply_rule, placeholder, replace_spans
from rag_pipeline.cleaning.safety.template_values import is_template_value

_MAX_WINDOW = 1024  # characters of one command line looked at (continuations included)
_MAX_CONTINUATIONS = 4

# Literal first (the engine's fast search); the boundary before the name is checked in code.
_COMMAND = re.compile(
    r"(?P<cmd>mysql(?:dump|admin|import|sh|check|binlog)?|mariadb(?:-dump|-admin|dump)?"
    r"|sshpass|mongosh|mongo(?:dump|restore|export|import)?|redis-cli|sqlcmd|bcp|curl)(?![\w-])"
)
_VALUE = r"""(?:"(?P<dq>[^"\n]{1,256}+)"|'(?P<sq>[^'\n]{1,256}+)'|(?P<bare>[^\s"'\\]{1,256}+))"""

_MYSQL_ATTACHED = re.compile(r"(?<!\S)-p" + _VALUE)
_MYSQL_SEPARATED = re.compile(r"(?<!\S)-p[ \t]{1,8}+" + _VALUE)
# The option that takes the password, per command (attached or after spaces).
_SHORT = {"sshpass": "-p", "mongo": "-p", "redis-cli": "-a", "sqlcmd": "-P", "bcp": "-P"}
_SHORT_OPTIONS = {
    option: re.compile(r"(?<!\S)" + option + r"[ \t]{0,8}+" + _VALUE) for option in set(_SHORT.values())
}
_CURL_USER = re.compile(r"""(?<!\S)(?:-u|--user)[ \t]{1,8}+["']?[^\s:"']{1,256}+:(?P<bare>[^\s"']{1,256}+)""")

# `--password pw` with a space, after any command; `--password=pw` is the inline rule's.
_LONG_OPTION = Rule(
    "password",
    re.compile(
        r"--(?P<label>password|passwd|pass|pwd)(?![\w-])[ \t]{1,8}+" + NOT_REDACTED
        + r"""(?:"(?P<dq>[^"\n]{1,256}+)"|'(?P<sq>[^'\n]{1,256}+)'|(?P<bare>[^\s"'-][^\s"']{0,255}+))"""
    ),
    folded=True,
    accept=accept_password,
)


def _looks_chosen(word: str) -> bool:
    """A digit, a symbol or an inner capital: a password, not a database name."""
    return any(not c.isalpha() for c in word) or any(c.isupper() for c in word[1:])


def _value_span(match: re.Match[str]) -> tuple[int, int]:
    for name in ("dq", "sq", "bare"):
        if match.groupdict().get(name) is not None:
            return match.span(name)
    raise ValueError("no value group matched")


def _window_end(text: str, start: int) -> int:
    """End of the command line that starts at `start`: its line, and `\\` continuations."""
    limit = min(len(text), start + _MAX_WINDOW)
    end = start
    for _ in range(_MAX_CONTINUATIONS + 1):
        newline = text.find("\n", end, limit)
        if newline < 0:
            return limit
        end = newline + 1
        last = newline
        while last > start and text[last - 1] in " \t":
            last -= 1
        if last == start or text[last - 1] != "\\":
            return newline
    return end


def _option_matches(command: str, text: str, start: int, end: int) -> list[tuple[re.Match[str], bool]]:
    """Each password value on the command line, with whether it must look chosen to count."""
    if command.startswith(("mysql", "mariadb")):
        found = [(m, False) for m in _MYSQL_ATTACHED.finditer(text, start, end)]
        return found + [(m, True) for m in _MYSQL_SEPARATED.finditer(text, start, end)]
    if command == "curl":
        return [(m, False) for m in _CURL_USER.finditer(text, start, end)]
    option = _SHORT["mongo" if command.startswith("mongo") else command]
    return [(m, False) for m in _SHORT_OPTIONS[option].finditer(text, start, end)]


def redact_command_lines(text: str, counts: Counter[str]) -> str:
    """Passwords given to known commands as options, and `--password pw` anywhere."""
    edits: dict[int, tuple[int, int, str]] = {}
    position = 0
    while (command := _COMMAND.search(text, position)) is not None:
        start = command.start()
        if start > 0 and (text[start - 1].isalnum() or text[start - 1] in "_.-"):
            position = command.end()
            continue  # part of a longer name ("automysql", "my.curl")
        end = _window_end(text, command.end())
        position = max(end, command.end())
        for match, must_look_chosen in _option_matches(command.group("cmd"), text, command.end(), end):
            start, stop = _value_span(match)
            value = text[start:stop]
            if value.startswith(PLACEHOLDER_PREFIX) or is_template_value(value) or value.lower() in NOT_A_PASSWORD:
                continue
            if must_look_chosen and match.group("bare") is not None and not _looks_chosen(value):
                continue  # `mysql -u root -p appdb`: the database, the password is asked for
            edits.setdefault(start, (start, stop, placeholder("password")))
    if edits:
        counts["password"] += len(edits)
    text = replace_spans(text, [edits[s] for s in sorted(edits)])
    return apply_rule(_LONG_OPTION, text, counts)

"""Building blocks for secret patterns that stay linear on hostile input.

Every redaction pattern runs on untrusted text of arbitrary size, so each begins with a literal
keyword or prefix (the engine then skips ahead with its fast literal search), puts word and
token boundaries in a look-behind right after that literal (so neighbouring candidates cannot
start overlapping scans), and matches case-insensitive labels on a lower-cased copy of the text
instead of with IGNORECASE. The helpers here build such patterns so each rule need not.
"""

from __future__ import annotations

from collections.abc import Iterable

from rag_pipeline.cleaning.safety.confusables import fold_table

LETTER = r"^\W\d_"  # a character class body: any letter

# Separator between a label and its value: `key: v`, `key = v`, `"key": "v"`, `key := v`,
# `key => v`, `**Password:** v`, French `mot de passe : v` (no-break spaces allowed).
_SPACE = "[ \t\u00a0\u202f]"
SEP = rf"""[*_`"']{{0,3}}+{_SPACE}{{0,8}}+(?::=|=>|[:=])[*_`]{{0,3}}+{_SPACE}{{0,8}}+"""

# Label rules run on folded text, where an earlier placeholder reads "[redacted:".
NOT_REDACTED = r"(?!\[(?:REDACTED|redacted):)"


def fold(text: str) -> str:
    """Lower-case `text`, with full-width, compatibility and homoglyph letters folded to the
    ones they imitate, without moving any offset, so spans found in it apply to `text`.

    A label written `ｐａｓｓｗｏｒｄ：`, `𝐩𝐚𝐬𝐬𝐰𝐨𝐫𝐝` or with Cyrillic `а`/`о`/`р` reads as
    `password:` to a person, so it must to the label rules too (confusables.py). U+0130 is the
    only character whose lower-case form has two characters; it becomes "i".
    """
    global _last_fold
    last = _last_fold
    if last[0] is text:  # the rules of a pass fold the same text until one of them redacts
        return last[1]
    folded = text.replace("\u0130", "i") if "\u0130" in text else text
    if not folded.isascii():
        folded = folded.translate(fold_table())
    folded = folded.lower()
    _last_fold = (text, folded)
    return folded


_last_fold: tuple[str | None, str] = (None, "")


def word_start(alternatives: Iterable[str], excluded: str) -> str:
    """Alternation whose alternatives match only where they start a word.

    Each alternative begins with literal letters; the look-behind is placed right after them
    (`pass(?<![letter]pass)word`), so the engine keeps its fast literal scan and a label
    inside a longer word is rejected before any value is scanned. (Checking the boundary after
    the match would let a rejected match swallow a real one that starts inside it.) With
    `excluded` = letters, `DB_PASSWORD=` and `X-Api-Key:` match but `dbpassword` does not.
    """
    by_first_letter: dict[str, list[str]] = {}
    for alternative in alternatives:
        prefix = _literal_prefix(alternative)
        guarded = f"{prefix}(?<![{excluded}]{prefix}){alternative[len(prefix):]}"
        by_first_letter.setdefault(guarded[0], []).append(guarded[1:])
    # Alternatives sharing a first letter become one branch ("a(?:pi...|uth...)"): at each
    # candidate position the engine then tests one letter instead of every alternative.
    parts = [
        letter + (rests[0] if len(rests) == 1 else "(?:" + "|".join(rests) + ")")
        for letter, rests in by_first_letter.items()
    ]
    return "(?:" + "|".join(parts) + ")"


def _literal_prefix(alternative: str) -> str:
    """The leading letters of a regex alternative that match only themselves ("aws" of
    "aws[_-]?secret", "code" of "codes?"). A longer prefix keeps the engine's literal search."""
    length = 0
    while (
        length < len(alternative)
        and alternative[length].isalpha()
        and alternative[length + 1 : length + 2] not in ("?", "*", "+", "{")
    ):
        length += 1
    if length == 0:
        raise ValueError(f"label alternative must start with a literal letter: {alternative!r}")
    return alternative[:length]


def token_start(prefix: str, width: int, excluded: str) -> str:
    """Regex for `prefix` (exactly `width` characters) only where it starts a token.

    The look-behind sits after the literal, so the engine still searches for the literal fast,
    and a run such as "eyJeyJeyJ..." cannot start a fresh bounded scan at every repetition:
    only the first repetition passes the look-behind, which keeps the pass linear.
    """
    return prefix + "(?<![" + excluded + "]" + r"[\s\S]" * width + ")"

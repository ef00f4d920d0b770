"""Safety cleaning: the last pass over parsed text before anything is chunked, embedded or indexed.

Two jobs, both about what must never reach the index or a reviewer's terminal:

* `neutralise_controls` removes characters that let a document act on whoever displays it
  (terminal escape sequences, C0/C1 controls) or hide text from a human reviewer while a model
  still reads it (bidi overrides, zero-width characters, Unicode "tag" characters used for
  ASCII smuggling, variation-selector runs used to smuggle bytes).
* `redact_secrets` replaces credentials and financial identifiers with `[REDACTED:<kind>]`.
  The secret itself is never stored or returned: only counts per kind leave this module.

Every pattern here runs on untrusted input of arbitrary size, so each one is written to be
linear and cheap: it begins with a literal keyword or prefix (so the engine skips ahead with its
fast search), repetitions are bounded and possessive, scans from neighbouring candidates cannot
overlap (shaped tokens carry a look-behind right after their prefix), case-insensitive labels
are matched on a lower-cased copy instead of with IGNORECASE, and block-shaped secrets (PEM keys,
recovery-code lists) are examined inside explicitly bounded windows. A 20 MB hostile input costs
a handful of passes over the text, never a quadratic search.

`SAFETY_VERSION` is recorded with cleaned text so that a change to these rules re-cleans.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

SAFETY_VERSION = "safety1"

PLACEHOLDER_PREFIX = "[REDACTED:"


def placeholder(kind: str) -> str:
    """The text that stands in for a removed secret; the kind stays so readers know what was there."""
    return f"{PLACEHOLDER_PREFIX}{kind}]"


# ---------------------------------------------------------------------------------------------
# Control characters, terminal escapes, invisible text
# ---------------------------------------------------------------------------------------------

# Line-break variants become "\n". This is normalisation, not neutralisation, so it is not
# counted: CRLF files and form-feed page breaks from PDF extraction are ordinary. A lone CR is
# still made harmless (it can no longer overwrite a terminal line).
_OTHER_NEWLINES = re.compile("[\x0b\x0c\x85\u2028\u2029]")

# Terminal escape sequences, removed whole (each counts once). Order matters: string
# sequences (OSC incl. OSC 8 hyperlinks, DCS, SOS, PM, APC) before CSI before the short
# escapes, because all start with ESC. Payloads are bounded and possessive: an unterminated
# OSC does not match and falls through to the short-escape branch, which removes "ESC ]" and
# leaves the (now inert) payload as visible text. Lone ESCs are removed with the C0 controls.
_ESCAPE_SEQUENCE = re.compile(
    "\x1b(?:"
    "[]PX^_][^\x07\x1b\x9c]{0,8192}+(?:\x07|\x1b\\\\|\x9c)"  # OSC / DCS / SOS / PM / APC
    "|\\[[0-?]{0,64}+[ -/]{0,16}+[@-~]"  # CSI: ESC [ params intermediates final
    "|[ -/]{0,8}+[0-~]"  # nF, Fp, Fe, Fs escapes: ESC 7, ESC c, ESC ( B, ESC \\ ...
    ")"
)

# Always removed, one character at a time (8-bit C1 introducers too: removing the single
# character is enough to make "\x9b2J" inert text, and never eats a following letter).
_CONTROL_OR_INVISIBLE = re.compile(
    "[\x00-\x08\x0e-\x1f\x7f-\x84\x86-\x9f"  # C0 (bar \t \n) and C1 (bar NEL) controls
    "\u202a-\u202e\u2066-\u2069"  # bidi embeddings, overrides, isolates (Trojan Source)
    "\u200b\u2060-\u2064\ufeff\u180e\ufff9-\ufffb]"  # zero-width space, word joiner, BOM, ...
)

# Tag characters are invisible ASCII ("ASCII smuggling" of instructions to a model). Their one
# legitimate use, emoji subdivision flags (black flag + tags + cancel tag), is kept (group 1).
_TAGS = re.compile(
    "(\U0001f3f4[\U000e0020-\U000e007e]{1,16}+\U000e007f)|[\U000e0000-\U000e007f]"
)
_ANY_TAG = re.compile("[\U000e0000-\U000e007f]")

# A variation selector legitimately follows one base character; runs of them encode bytes.
_VARIATION_SELECTOR_RUN = re.compile("[\ufe00-\ufe0f\U000e0100-\U000e01ef]{2,}+")
_ANY_VARIATION_SELECTOR = re.compile("[\ufe00-\ufe0f\U000e0100-\U000e01ef]")

# Characters around which a zero-width (non-)joiner is legitimate: scripts that use ZWJ/ZWNJ
# for shaping (Arabic, Syriac, Indic, Thai, Myanmar, Khmer, Mongolian ...) and emoji ZWJ
# sequences. Between Latin letters they only serve to hide or split words, so they go.
_JOIN_CONTEXT = (
    "\u0600-\u08ff"  # Arabic, Syriac, Thaana, NKo, Samaritan, Mandaic, Arabic extended
    "\u0900-\u0dff"  # Devanagari .. Sinhala
    "\u0e00-\u0fff"  # Thai, Lao, Tibetan
    "\u1000-\u109f"  # Myanmar
    "\u1780-\u18af"  # Khmer, Mongolian
    "\ua8e0-\ua8ff\ua9e0-\ua9ff\uaa60-\uaa7f"  # Devanagari ext., Myanmar ext.
    "\ufb50-\ufdff\ufe70-\ufefe"  # Arabic presentation forms
    "\u2190-\u21ff\u2300-\u23ff\u2600-\u27bf\u2b00-\u2bff"  # arrows, technical, symbols, dingbats
    "\u00a9\u00ae\u203c\u2049\u2122\u2139\u20e3\ufe0f"  # emoji-capable symbols, keycap, VS16
    "\U0001f000-\U0001faff"  # emoji blocks incl. skin-tone modifiers
)
_STRAY_JOINER = re.compile(
    f"[\u200c\u200d](?:(?<![{_JOIN_CONTEXT}][\u200c\u200d])|(?![{_JOIN_CONTEXT}]))"
)

# Any character one of the passes below could remove.
_ANY_NEUTRALISED = re.compile(
    "[\x00-\x08\x0e-\x1f\x7f-\x84\x86-\x9f\u200b-\u200d\u202a-\u202e\u2060-\u2069"
    "\ufeff\u180e\ufff9-\ufffb\ufe00-\ufe0f\U000e0000-\U000e01ef]"
)


def neutralise_controls(text: str) -> tuple[str, int]:
    """Make `text` inert for terminals and honest for reviewers; return it and how many
    sequences/characters were neutralised.

    Line breaks are normalised to "\\n" (uncounted). Escape sequences are removed whole, so an
    OSC 8 hyperlink keeps its visible label but loses its hidden target, and "ESC[2J" cannot
    clear a screen. Bidi overrides and zero-width characters are removed because they make the
    text a reviewer sees differ from the text the index and the model see.

    Each pass is one C-level scan and the rarer passes run only when their characters occur,
    so a clean 20 MB text costs a few tens of milliseconds.
    """
    text = _normalise_newlines(text)
    if "\x1b" not in text and _ANY_NEUTRALISED.search(text) is None:
        return text, 0  # the common case: one scan
    sequences = 0
    if "\x1b" in text:
        text, sequences = _ESCAPE_SEQUENCE.subn("", text)
    before = len(text)
    text = _CONTROL_OR_INVISIBLE.sub("", text)
    for _ in range(_MAX_CONTEXT_PASSES):
        length = len(text)
        text = _remove_context_dependent(text)
        if len(text) == length:
            break
    return text, sequences + (before - len(text))


# Removing one invisible character can change the context of the next (a stray joiner between
# two variation selectors turns them into a run), so these passes repeat until nothing changes;
# each repetition removes at least one character and real text settles after one or two.
_MAX_CONTEXT_PASSES = 4


def _remove_context_dependent(text: str) -> str:
    """Tag characters, stray joiners and variation-selector runs, in that order."""
    if _ANY_TAG.search(text):
        text = _TAGS.sub(r"\1", text)
    if "\u200c" in text or "\u200d" in text:
        text = _STRAY_JOINER.sub("", text)
    if _ANY_VARIATION_SELECTOR.search(text):
        text = _VARIATION_SELECTOR_RUN.sub("", text)
    return text


def _normalise_newlines(text: str) -> str:
    """CRLF, CR, VT, FF, NEL, LS and PS all become "\\n"."""
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    if _OTHER_NEWLINES.search(text) is None:
        return text
    return _OTHER_NEWLINES.sub("\n", text)


# ---------------------------------------------------------------------------------------------
# Secret redaction: shared machinery
# ---------------------------------------------------------------------------------------------

Accept = Callable[[re.Match[str], str], bool]
Boundary = Callable[[str, int], bool]


@dataclass(frozen=True)
class _Rule:
    """One secret pattern and how to confirm a candidate.

    Patterns begin with their keyword or literal prefix, never with a look-behind or a broad
    character class, so the regex engine jumps between candidates with its fast literal search
    instead of trying every position. Whether a candidate starts a token (`boundary`) and
    whether the value is really a secret (`accept`) are checked afterwards, on candidates only.
    Label rules match the case-folded text (`folded`), which is much faster than IGNORECASE.
    """

    kind: str | Callable[[re.Match[str]], str]
    pattern: re.Pattern[str]
    folded: bool = False
    boundary: Boundary | None = None
    accept: Accept | None = None


_VALUE_GROUPS = ("dq", "sq", "bare", "v")
_TRAILING_PUNCTUATION = ".,;`*"


def _fold(text: str) -> str:
    """Lower-case `text` without moving any offset, so spans found in it apply to `text`.

    U+0130 is the only character whose lower-case form has two characters; it becomes "i".
    """
    if "\u0130" in text:
        text = text.replace("\u0130", "i")
    return text.lower()


def _not_after(excluded: str) -> Boundary:
    """Boundary check: the candidate must not continue a run of `excluded` characters."""
    pattern = re.compile(f"[{excluded}]")

    def starts_token(source: str, start: int) -> bool:
        return start == 0 or pattern.match(source, start - 1) is None

    return starts_token


_after_non_alnum = _not_after("A-Za-z0-9")

_LETTER = r"^\W\d_"  # a character class body: any letter


def _word_start(alternatives: Iterable[str], excluded: str) -> str:
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


def _token_start(prefix: str, width: int, excluded: str) -> str:
    """Regex for `prefix` (exactly `width` characters) only where it starts a token.

    The look-behind sits after the literal, so the engine still searches for the literal fast,
    and a run such as "eyJeyJeyJ..." cannot start a fresh bounded scan at every repetition:
    only the first repetition passes the look-behind, which keeps the pass linear.
    """
    return prefix + "(?<![" + excluded + "]" + r"[\s\S]" * width + ")"


def _value_span(match: re.Match[str]) -> tuple[int, int]:
    """Span of whichever value alternative (double-quoted, single-quoted, bare, v) matched."""
    names = match.re.groupindex
    for name in _VALUE_GROUPS:
        if name in names and match.group(name) is not None:
            return match.span(name)
    return match.span()


def _trimmed_end(match: re.Match[str], text: str, start: int, end: int) -> int:
    """A bare value loses trailing sentence punctuation ("hunter2." keeps its "."); quoted
    values and shaped tokens are taken exactly."""
    if "bare" in match.re.groupindex and match.group("bare") is not None:
        while end > start and text[end - 1] in _TRAILING_PUNCTUATION:
            end -= 1
    return end


def _apply_rule(rule: _Rule, text: str, counts: Counter[str]) -> str:
    """Replace the value part of each confirmed match with a placeholder, counting per kind.

    Only the value is replaced: labels like `password:` or `Authorization: Bearer` stay, so the
    text still reads naturally and a reviewer can see what kind of thing was there.
    """
    source = _fold(text) if rule.folded else text
    edits: list[tuple[int, int, str]] = []
    position, may_look_inside = 0, True
    while (match := rule.pattern.search(source, position)) is not None:
        position = match.end()
        if rule.boundary is not None and not rule.boundary(source, match.start()):
            continue
        start, end = _value_span(match)
        end = _trimmed_end(match, text, start, end)
        if end <= start or (rule.accept is not None and not rule.accept(match, text[start:end])):
            # "Authorization: Authorization: <token>": the rejected value may hold the real
            # label. Look inside it once, not recursively, so the work stays linear.
            if may_look_inside and start > match.start():
                position, may_look_inside = start, False
            else:
                may_look_inside = True
            continue
        may_look_inside = True
        kind = rule.kind(match) if callable(rule.kind) else rule.kind
        counts[kind] += 1
        edits.append((start, end, placeholder(kind)))
    return _replace_spans(text, edits)


def _replace_spans(text: str, edits: list[tuple[int, int, str]]) -> str:
    """Apply sorted, non-overlapping (start, end, replacement) edits in one pass."""
    if not edits:
        return text
    pieces: list[str] = []
    cursor = 0
    for start, end, replacement in edits:
        pieces.append(text[cursor:start])
        pieces.append(replacement)
        cursor = end
    pieces.append(text[cursor:])
    return "".join(pieces)


_TOKEN = re.compile(r"[A-Za-z0-9_\-+/=.~:]+")
_PLACEHOLDER_VALUE = re.compile(r"[*_.\-x•·]+|<.*|\$\{?[A-Za-z_][A-Za-z0-9_]*\}?|%[sd(].*|\{\{.*", re.IGNORECASE)
# "your-api-key", "YOUR_TOKEN_HERE", "sk_xxxx": narrow on purpose, "YourName2024!" is a password.
_PLACEHOLDER_MARKER = re.compile(r"(?:^|[_\-])your[_\-]|[_\-]here$|xxxx", re.IGNORECASE)


def _is_placeholder_value(value: str) -> bool:
    """Template and form values (`****`, `<token>`, `${API_KEY}`, `your-key-here`) are not
    secrets; redacting them would only inflate the counts operators watch."""
    return _PLACEHOLDER_VALUE.fullmatch(value) is not None or _PLACEHOLDER_MARKER.search(value) is not None


def _looks_like_token(value: str) -> bool:
    """A machine-generated credential: at least 8 characters, no spaces, and letters mixed with
    digits (or, rarely without digits, long and mixed-case). Keeps "token: a unit of text",
    "secret: family recipe" and `token = request.headers.get` untouched."""
    value = value.rstrip(_TRAILING_PUNCTUATION)
    if len(value) < 8 or _TOKEN.fullmatch(value) is None or _is_placeholder_value(value):
        return False
    if any(c.isdigit() for c in value):
        return any(c.isalpha() for c in value)
    return len(value) >= 32 and any(c.isupper() for c in value) and any(c.islower() for c in value)


def _accept_token(match: re.Match[str], value: str) -> bool:
    return _looks_like_token(value)


# Separator between a label and its value: `key: v`, `key = v`, `"key": "v"`, `key := v`,
# `key => v`, `**Password:** v`, French `mot de passe : v` (no-break spaces allowed).
_SPACE = "[ \t\u00a0\u202f]"
_SEP = rf"""[*_`"']{{0,3}}+{_SPACE}{{0,8}}+(?::=|=>|[:=])[*_`]{{0,3}}+{_SPACE}{{0,8}}+"""

# Label rules run on folded text, where an earlier placeholder reads "[redacted:".
_NOT_REDACTED = r"(?!\[(?:REDACTED|redacted):)"


# ---------------------------------------------------------------------------------------------
# Private keys (PEM / OpenSSH / PGP armour / SSH2)
# ---------------------------------------------------------------------------------------------

_KEY_HEADER = re.compile(
    r"(?:-----|---- )BEGIN (?P<label>(?:[A-Z0-9]{1,16} ){0,3}PRIVATE KEY(?: BLOCK)?)(?:-----| ----)"
)
# Key material after a header whose END is missing: base64 lines, armour headers
# ("Proc-Type: 4,ENCRYPTED", "DEK-Info: ...", "Comment: ..."), blank lines.
_KEY_BODY = re.compile(
    r"(?:[ \t]*(?:[A-Za-z0-9+/]{16,128}+={0,2}|[A-Za-z0-9+/]{1,15}+={1,2}|=[A-Za-z0-9+/]{4}"
    r"|[A-Z][A-Za-z-]{1,32}+: [^\n]{0,256}+)?[ \t]*(?:\n|\Z))*+"
)
_MAX_KEY_BLOCK = 64 * 1024  # far above any real key (an 8192-bit RSA PEM is ~6.5 KB)


def _redact_private_keys(text: str, counts: Counter[str]) -> str:
    """Replace each private-key block, header to footer, with one placeholder.

    The footer is looked for only up to the next BEGIN and at most 64 KB ahead, so the search
    windows never overlap and the whole pass is linear even for a million headers without END.
    Without a footer (truncated or hostile input) the header and the key material directly
    below it are removed, and nothing further.
    """
    headers = list(_KEY_HEADER.finditer(text))
    if not headers:
        return text
    pieces: list[str] = []
    cursor = 0
    for index, header in enumerate(headers):
        if header.start() < cursor:
            continue  # inside the block we just removed
        limit = min(header.end() + _MAX_KEY_BLOCK, len(text))
        if index + 1 < len(headers):
            limit = min(limit, headers[index + 1].start())
        end = _find_key_footer(text, header, limit)
        if end is None:
            body = _KEY_BODY.match(text, header.end(), limit)
            end = body.end() if body else header.end()
            if end > header.end() and text[end - 1] == "\n":
                end -= 1  # keep the line break that ended the key material
        pieces.append(text[cursor : header.start()])
        pieces.append(placeholder("private_key"))
        counts["private_key"] += 1
        cursor = end
    pieces.append(text[cursor:])
    return "".join(pieces)


def _find_key_footer(text: str, header: re.Match[str], limit: int) -> int | None:
    """End offset of the matching `-----END <label>-----` before `limit`, or None."""
    marker = f"END {header.group('label')}"
    found = text.find(marker, header.end(), limit)
    if found < 0:
        return None
    end = found + len(marker)
    while end < len(text) and end - found - len(marker) < 5 and text[end] in "- ":
        end += 1
    return end


# ---------------------------------------------------------------------------------------------
# Vendor tokens with a recognisable shape
# ---------------------------------------------------------------------------------------------

_B64URL = r"A-Za-z0-9_\-"

# Prefix alone identifies these; no label needed. Case-sensitive, on the original text.
_SHAPED_TOKEN_RULES: tuple[_Rule, ...] = (
    _Rule(
        "jwt",
        re.compile(
            _token_start("eyJ", 3, _B64URL + ".")
            + f"[{_B64URL}]{{5,8192}}+\\.[{_B64URL}]{{5,8192}}+\\.[{_B64URL}]{{8,8192}}+(?![{_B64URL}])"
        ),
    ),
    _Rule(
        "github_token",
        re.compile(
            "(?:"
            + _token_start("gh[pousr]_", 4, "A-Za-z0-9_")
            + "[A-Za-z0-9]{36,251}+|"
            + _token_start("github_pat_", 11, "A-Za-z0-9_")
            + "[A-Za-z0-9_]{22,251}+)(?![A-Za-z0-9_])"
        ),
    ),
    _Rule("slack_token", re.compile(_token_start("xox[abposr]-", 5, "A-Za-z0-9-") + "[A-Za-z0-9-]{10,251}+")),
    _Rule("slack_webhook", re.compile(r"https://hooks\.slack\.com/(?:services|workflows)/[A-Za-z0-9/_-]{20,200}+")),
    _Rule("google_api_key", re.compile(_token_start("AIza", 4, _B64URL) + f"[{_B64URL}]{{35}}(?![{_B64URL}])")),
    _Rule(
        "stripe_key",
        re.compile(_token_start("[sr]k_(?:live|test)_", 8, "A-Za-z0-9_") + "[A-Za-z0-9]{16,247}+(?![A-Za-z0-9_])"),
    ),
    _Rule("aws_access_key", re.compile(_token_start("A(?:KIA|SIA)", 4, "A-Za-z0-9") + "[A-Z0-9]{16}(?![A-Za-z0-9])")),
)


def _redact_shaped_tokens(text: str, counts: Counter[str]) -> str:
    """Tokens whose prefix alone identifies them (GitHub, Slack, Google, Stripe, AWS, JWT)."""
    for rule in _SHAPED_TOKEN_RULES:
        text = _apply_rule(rule, text, counts)
    return text


# ---------------------------------------------------------------------------------------------
# Secrets identified by their label (key = value, headers, URLs)
# ---------------------------------------------------------------------------------------------

def _after_scheme(source: str, start: int) -> bool:
    """`postgres://user:pw@host`: the "://" must follow a URL scheme."""
    return start > 0 and source[start - 1].isalnum()


# Only the password part of `scheme://user:password@host` is replaced; user and host stay.
_URL_CREDENTIALS = _Rule(
    "url_credentials",
    re.compile(r"://[^\s:/@?#\"'<>]{1,256}+:" + _NOT_REDACTED + r"(?P<v>[^\s@/?#\"'<>]{1,256}+)@"),
    boundary=_after_scheme,
)

# Two rules rather than one alternation: a pattern that starts with a single literal gets the
# engine's fastest search, which matters on long runs of the first letter ("aaaa...").
_AWS_SECRET_RULES = tuple(
    _Rule(
        "aws_secret_key",
        re.compile(
            _word_start([label], "a-z0-9") + r"(?![a-z0-9])" + _SEP + r"""["']?(?P<v>[a-z0-9/+]{40})(?![a-z0-9/+=])"""
        ),
        folded=True,
    )
    for label in (r"aws[_-]?secret[_-]?(?:access[_-]?)?key", r"secret[_-]?access[_-]?key")
)

_BEARER_VALUE = _NOT_REDACTED + r"(?P<v>[a-z0-9._~+/=-]{8,4096}+)"
_AUTHORIZATION = _Rule(
    "token",
    re.compile(
        _word_start(["authorization"], _LETTER)  # also inside "Proxy-Authorization"
        + r"[\"']?[ \t]{0,8}+[:=][ \t]{0,8}+[\"']?(?:(?:bearer|basic|token|bot|apikey)[ \t]{1,8}+)?"
        + _BEARER_VALUE
    ),
    folded=True,
    accept=_accept_token,
)
_BEARER = _Rule(
    "token",
    re.compile(_word_start(["bearer"], _LETTER) + r"[ \t]{1,8}+" + _BEARER_VALUE),
    folded=True,
    accept=_accept_token,
)

_GENERIC_LABEL = _word_start(
    [r"api[ _-]?(?:key|token|secret)", r"app[_-]?secret", r"client[_-]?secret", r"secret(?:[_-]?key)?", "token"]
    + [prefix + r"[_-]?token" for prefix in ("access", "auth", "refresh", "id", "private", "session")],
    "a-z0-9",
)
_GENERIC_VALUE = (
    _NOT_REDACTED
    + r"""(?:"(?P<dq>[^"\s]{1,1024}+)"|'(?P<sq>[^'\s]{1,1024}+)'|(?P<bare>[^\s"'<>()\[\]{},;|]{1,1024}+))"""
)


def _generic_kind(match: re.Match[str]) -> str:
    """api_key / secret / token, from the label the value was assigned to."""
    label = match.group("label")
    if "secret" in label:
        return "secret"
    if "key" in label:
        return "api_key"
    return "token"


_GENERIC_ASSIGNMENT = _Rule(
    _generic_kind,
    re.compile(r"(?P<label>" + _GENERIC_LABEL + r")(?![a-z0-9])" + _SEP + _GENERIC_VALUE),
    folded=True,
    accept=_accept_token,
)

_LABELLED_RULES = (_URL_CREDENTIALS, *_AWS_SECRET_RULES, _AUTHORIZATION, _BEARER, _GENERIC_ASSIGNMENT)


def _redact_labelled(text: str, counts: Counter[str]) -> str:
    """Credentials recognised by what they are assigned to rather than by their own shape."""
    for rule in _LABELLED_RULES:
        text = _apply_rule(rule, text, counts)
    return text


# ---------------------------------------------------------------------------------------------
# Passwords (multilingual labels; the value is redacted, the label kept)
# ---------------------------------------------------------------------------------------------

# Lower-case: matched against folded text.
_PASSWORD_LABEL = _word_start(
    [
        *(r"pass(?:word|wd|wort|phrase|code)s?", "pwd", r"kennw[oö]rt(?:er)?"),  # English, German
        *(r"mots?[ \t\u00a0]de[ \t\u00a0]passe", "mdp", r"hesl[oa]", "hasło"),  # French, Czech, Polish
        *(r"contrase[ñn]a", "wachtwoord", "senha", "lösenord", "salasana", "пароль", "jelszó"),
    ],
    _LETTER,
)

# Words that fill a password field in documentation without being a password.
_NOT_A_PASSWORD = frozenset(
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


def _accept_password(match: re.Match[str], value: str) -> bool:
    """Decide whether the value after `password:` is a password rather than prose.

    Quoted values are always accepted. A bare value is accepted when it looks chosen (digit,
    symbol or inner capital) or when it is the whole rest of the line ("Heslo: tajne").
    "Password: must be 12 characters" keeps its text.
    """
    if match.group("bare") is None:
        return True
    word = value.rstrip(_TRAILING_PUNCTUATION)
    if not word or _is_placeholder_value(word) or word.lower() in _NOT_A_PASSWORD:
        return False
    if match.group("label") == "pwd" and word[0] in "/~":
        return False  # PWD=/home/user is a working directory
    if word[0] in "([{<" or _CODE_EXPRESSION.fullmatch(word):
        return False  # "MDP = (S, A, P, R)", `password = os.environ["PW"]`: code, not a value
    if any(not (c.isalpha() or c in "-'’") for c in word) or any(c.isupper() for c in word[1:]):
        return True
    return _rest_of_line_is_blank(match.string, match.end())


_PASSWORD = _Rule(
    "password",
    re.compile(
        r"(?P<label>"
        + _PASSWORD_LABEL
        + r")(?![^\W\d_])"
        + r"(?:[ \t]{0,4}+\([^()\n]{0,40}+\))?"  # "Passwort (Produktion): ..."
        + _SEP
        + _NOT_REDACTED
        + r"""(?:"(?P<dq>[^"\n]{1,256}+)"|'(?P<sq>[^'\n]{1,256}+)'|(?P<bare>[^\s"']{1,256}+))"""
    ),
    folded=True,
    accept=_accept_password,
)


def _redact_passwords(text: str, counts: Counter[str]) -> str:
    """`password: hunter2`, `Passwort: ...`, `mot de passe : ...`, `heslo: ...` and relatives."""
    return _apply_rule(_PASSWORD, text, counts)


# Markdown tables (the parser emits tables as GitHub-flavoured Markdown): a column headed
# "Password"/"Passwort"/"Heslo"... has its cells redacted; `| Password | value |` rows too.
_TABLE_PASSWORD_CELL = re.compile(r"\|[ \t]{0,64}+(?:" + _PASSWORD_LABEL + r")[ \t]{0,64}+\|")
_PASSWORD_CELL = re.compile(_PASSWORD_LABEL)
_TABLE_SEPARATOR = re.compile(r"\|?[ \t]*:?-{2,}:?[ \t]*(?:\|[ \t]*:?-{2,}:?[ \t]*)*\|?")
_MAX_TABLE_LINE = 4096


def _redact_password_tables(text: str, counts: Counter[str]) -> str:
    """Redact password columns and `| Password | x |` rows in Markdown tables.

    Only tables whose header names a password column are split into cells, so the cost is
    proportional to those tables, not to the document.
    """
    folded = _fold(text)
    if _TABLE_PASSWORD_CELL.search(folded) is None:
        return text
    lines = text.split("\n")
    folded_lines = folded.split("\n")
    index = 0
    while index < len(lines):
        line = folded_lines[index]
        if len(line) <= _MAX_TABLE_LINE and _TABLE_PASSWORD_CELL.search(line):
            index = _redact_table_from(lines, index, counts)
        else:
            index += 1
    return "\n".join(lines)


def _split_cells(line: str) -> list[str]:
    body = line.strip()
    body = body[1:] if body.startswith("|") else body
    body = body[:-1] if body.endswith("|") else body
    return body.split("|")


def _join_cells(cells: list[str]) -> str:
    return "|" + "|".join(cells) + "|"


def _redact_table_from(lines: list[str], index: int, counts: Counter[str]) -> int:
    """Handle the table row at `index` naming a password cell; return the next line to scan."""
    cells = _split_cells(lines[index])
    columns = [i for i, cell in enumerate(cells) if _PASSWORD_CELL.fullmatch(_fold(cell.strip()))]
    following = lines[index + 1].strip() if index + 1 < len(lines) else ""
    if len(following) > _MAX_TABLE_LINE or _TABLE_SEPARATOR.fullmatch(following) is None:
        # a key/value row: | Password | s3cret |
        redacted = [_redact_cell(cells, column + 1, counts) for column in columns if column + 1 < len(cells)]
        if any(redacted):
            lines[index] = _join_cells(cells)
        return index + 1
    row = index + 2
    while row < len(lines) and lines[row].lstrip().startswith("|") and len(lines[row]) <= _MAX_TABLE_LINE:
        row_cells = _split_cells(lines[row])
        redacted = [_redact_cell(row_cells, column, counts) for column in columns if column < len(row_cells)]
        if any(redacted):
            lines[row] = _join_cells(row_cells)
        row += 1
    return row


def _redact_cell(cells: list[str], column: int, counts: Counter[str]) -> bool:
    """Replace one non-empty, not-yet-redacted cell."""
    value = cells[column].strip()
    if not value or value.startswith(PLACEHOLDER_PREFIX) or _is_placeholder_value(value):
        return False
    if value.lower() in _NOT_A_PASSWORD:
        return False
    counts["password"] += 1
    cells[column] = f" {placeholder('password')} "
    return True


# ---------------------------------------------------------------------------------------------
# 2FA / MFA recovery codes
# ---------------------------------------------------------------------------------------------

_RECOVERY_COMPOUND_PREFIXES = (
    "recovery", "backup", "back-up", "emergency", "scratch", "rescue",  # English
    "wiederherstellungs", "sicherungs", "notfall", "ersatz",  # German ("Backup-Codes" via "backup")
    "herstel",  # Dutch
)  # fmt: skip
_RECOVERY_LABEL_ALTERNATIVES = [
    # "backup codes", "2FA recovery codes", "Backup-Codes", "Wiederherstellungscodes", "herstelcodes"
    *(prefix + r"[ \t-]?(?:codes?|kodes?)" for prefix in _RECOVERY_COMPOUND_PREFIXES),
    # French: "codes de récupération", "codes de secours", "codes de sauvegarde"
    r"codes?[ \t\u00a0]{1,4}+(?:de[ \t\u00a0]{1,4}+)?(?:r[ée]cup[ée]ration|secours|sauvegarde)",
    # Czech: "záložní kódy", "kódy pro obnovení", "obnovovací kódy", "záchranné kódy"
    r"z[áa]lo[žz]n[íi](?:ch)?[ \t]{1,4}+k[óo]d(?:y|ů)?",
    r"k[óo]d(?:y|ů)?[ \t]{1,4}+(?:pro|k)[ \t]{1,4}+obnov(?:en[íi]|u)",
    r"obnovovac[íi](?:ch)?[ \t]{1,4}+k[óo]d(?:y|ů)?",
    r"z[áa]chrann[ée][ \t]{1,4}+k[óo]dy?",
    # Spanish, Italian, Polish
    r"c[óo]digos?[ \t]{1,4}+de[ \t]{1,4}+(?:recuperaci[óo]n|respaldo)",
    r"codici[ \t]{1,4}+di[ \t]{1,4}+(?:backup|recupero|emergenza)",
    r"kody?[ \t]{1,4}+(?:zapasowe|odzyskiwania|awaryjne)",
]
# Lower-case, matched against folded text, whole words only.
_RECOVERY_LABEL = re.compile(_word_start(_RECOVERY_LABEL_ALTERNATIVES, r"\w") + r"(?!\w)")

# One whitespace-separated token; "1234 5678" (Google style) is read as one token.
_LINE_TOKEN = re.compile(r"(?<!\S)\d{4} \d{4}(?!\S)|\S+")
_CODE_SHAPE = re.compile(r"\d{4} \d{4}|[A-Za-z0-9]{4,16}(?:-[A-Za-z0-9]{2,16}){0,5}")
_DATE_SHAPE = re.compile(r"\d{4}-\d{2}-\d{2}|\d{2}-\d{2}-\d{4}")
_NEUTRAL_TOKEN = re.compile(r"\d{1,3}[.):]|[-*•·–—|>]|\[[ xX]\]|\(\d{1,3}\)")
_TOKEN_TRIM = "()[],;.:\"'`*"
_REDACTED_CODE = placeholder("recovery_code").strip(_TOKEN_TRIM)  # an already redacted code

_MAX_CODE_LINES = 20  # lines with letters or digits examined after a label
_MAX_BLOCK_LINES = 64  # all lines, including layout-only ones (element separators, "* * *")
_MAX_CODE_LINE = 512
_MAX_LEADING_BLANKS = 2


def _is_recovery_code(token: str) -> bool:
    """A token shaped like a one-time code: `8f3k-29dj`, `12345678`, `ABCD-EFGH-IJKL`.

    Needs a digit, unless it is upper-case hyphen-grouped (some vendors use letters only);
    dates are not codes.
    """
    if _CODE_SHAPE.fullmatch(token) is None or _DATE_SHAPE.fullmatch(token) is not None:
        return False
    compact = token.replace("-", "").replace(" ", "")
    if not 6 <= len(compact) <= 40:
        return False
    if any(c.isdigit() for c in compact):
        return True
    return "-" in token and compact.isupper()


def _code_line(text: str, start: int, end: int) -> tuple[list[tuple[int, int]], bool]:
    """Spans of the codes in text[start:end], and whether it is a code line at all.

    A code line is one where code-shaped tokens are at least as many as other words, ignoring
    numbering and bullets: "1. 8f3k-29dj  2. 4kd8-2k3d" is, "Store these somewhere safe" is not.
    Codes redacted by an earlier pass still count as codes, so cleaning twice changes nothing.
    """
    spans: list[tuple[int, int]] = []
    codes = others = 0
    for match in _LINE_TOKEN.finditer(text, start, end):
        token = match.group(0)
        trimmed = token.strip(_TOKEN_TRIM)
        if not trimmed or _NEUTRAL_TOKEN.fullmatch(token):
            continue  # numbering, bullets, a lone ":" are layout, not words
        if trimmed == _REDACTED_CODE:
            codes += 1
        elif _is_recovery_code(trimmed):
            codes += 1
            offset = match.start() + token.index(trimmed)
            spans.append((offset, offset + len(trimmed)))
        else:
            others += 1
    is_code_line = codes > 0 and codes >= others
    return (spans if is_code_line else []), is_code_line


def _line_end(text: str, start: int) -> int:
    """End of the line starting at `start`, looking at most just past the line-length cap."""
    end = text.find("\n", start, start + _MAX_CODE_LINE + 1)
    return end if end >= 0 else min(len(text), start + _MAX_CODE_LINE + 1)


def _recovery_block(text: str, folded: str, label: re.Match[str]) -> tuple[list[tuple[int, int]], int]:
    """Code spans in the block after one label, and where scanning may resume.

    The block is the rest of the label's line plus up to 20 lines with content (lines without
    letters or digits, such as element separators, are skipped but bounded too). Before the
    first code line, intro prose is allowed ("Keep these safe:"); once codes were seen, the
    block ends at a blank line or at the first line that is not a code line, since a code
    list is contiguous. It also ends at an over-long line or at a line holding another label,
    which then starts its own block. Work per label is bounded and blocks never overlap.
    """
    line_end = _line_end(text, label.end())
    spans, seen_codes = _code_line(text, label.end(), line_end)
    position, blanks, content_lines = line_end + 1, 0, 0
    for _ in range(_MAX_BLOCK_LINES):
        if position >= len(text) or content_lines >= _MAX_CODE_LINES:
            break
        end = _line_end(text, position)
        line = text[position:end]
        if end - position > _MAX_CODE_LINE:
            break
        if not line.strip():
            blanks += 1
            if seen_codes or blanks > _MAX_LEADING_BLANKS:
                break
        elif any(char.isalnum() for char in line):
            if _RECOVERY_LABEL.search(folded, position, end) is not None:
                return spans, position
            found, is_code_line = _code_line(text, position, end)
            if seen_codes and not is_code_line:
                return spans, position  # the list is over
            spans.extend(found)
            seen_codes = seen_codes or is_code_line
            content_lines += 1
        position = end + 1
    return spans, max(label.end(), min(position, len(text)))


def _redact_recovery_codes(text: str, counts: Counter[str]) -> str:
    """Redact the codes listed after a "recovery codes" / "Backup-Codes" / "záložní kódy" label."""
    folded = _fold(text)
    spans: list[tuple[int, int]] = []
    position = 0
    while (label := _RECOVERY_LABEL.search(folded, position)) is not None:
        found, position = _recovery_block(text, folded, label)
        spans.extend(found)
    if not spans:
        return text
    counts["recovery_code"] += len(spans)
    replacement = placeholder("recovery_code")
    return _replace_spans(text, [(start, end, replacement) for start, end in spans])


# ---------------------------------------------------------------------------------------------
# IBAN (ISO 13616, mod-97 validated)
# ---------------------------------------------------------------------------------------------

# Country code -> IBAN length (SWIFT IBAN registry). Knowing the exact length lets the regex
# stop at the right character when an IBAN is followed by more upper-case text ("... 00 BIC").
IBAN_LENGTHS: dict[str, int] = {
    "AD": 24, "AE": 23, "AL": 28, "AT": 20, "AZ": 28, "BA": 20, "BE": 16, "BG": 22, "BH": 22,
    "BI": 27, "BR": 29, "BY": 28, "CH": 21, "CR": 22, "CY": 28, "CZ": 24, "DE": 22, "DJ": 27,
    "DK": 18, "DO": 28, "EE": 20, "EG": 29, "ES": 24, "FI": 18, "FK": 18, "FO": 18, "FR": 27,
    "GB": 22, "GE": 22, "GI": 23, "GL": 18, "GR": 27, "GT": 28, "HR": 21, "HU": 28, "IE": 22,
    "IL": 23, "IQ": 23, "IS": 26, "IT": 27, "JO": 30, "KW": 30, "KZ": 20, "LB": 28, "LC": 32,
    "LI": 21, "LT": 20, "LU": 20, "LV": 21, "LY": 25, "MC": 27, "MD": 24, "ME": 22, "MK": 19,
    "MN": 20, "MR": 27, "MT": 31, "MU": 30, "NI": 28, "NL": 18, "NO": 15, "OM": 23, "PK": 24,
    "PL": 28, "PS": 29, "PT": 25, "QA": 29, "RO": 24, "RS": 22, "RU": 33, "SA": 24, "SC": 31,
    "SD": 18, "SE": 24, "SI": 19, "SK": 24, "SM": 27, "SO": 23, "ST": 25, "SV": 28, "TL": 23,
    "TN": 24, "TR": 26, "UA": 29, "VA": 22, "VG": 24, "XK": 20, "YE": 30,
}  # fmt: skip


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


def iban_is_valid(candidate: str) -> bool:
    """ISO 13616 check: known country and length, then mod 97 of the rearranged number is 1."""
    compact = candidate.replace(" ", "").replace("\u00a0", "").upper()
    if IBAN_LENGTHS.get(compact[:2]) != len(compact) or not (compact.isascii() and compact.isalnum()):
        return False
    rearranged = compact[4:] + compact[:4]
    return int("".join(str(int(char, 36)) for char in rearranged)) % 97 == 1


_IBAN = _Rule(
    "iban",
    _iban_pattern(),
    boundary=_after_non_alnum,
    accept=lambda match, value: iban_is_valid(value),
)


def _redact_ibans(text: str, counts: Counter[str]) -> str:
    """Only checksum-valid IBANs go: "IBAN format explained" and typos stay readable."""
    return _apply_rule(_IBAN, text, counts)


# ---------------------------------------------------------------------------------------------
# Payment cards (Luhn validated, brand prefix and length checked)
# ---------------------------------------------------------------------------------------------

# Starts at a digit that does not continue a number, word, decimal or phone number ("+49..."),
# and may not run on ("4111 1111 1111 1111 2222" is something else). The look-behinds sit
# after the first digit so the engine still skips non-digits quickly.
_CARD_PATTERN = re.compile(
    r"[2-6](?<![A-Za-z0-9_.,+/][2-6])(?<![0-9][ -][2-6])[0-9]{3}(?:[ -]?[0-9]){9,15}(?![ -]?[0-9])"
)

# (first-digits range, allowed lengths) for brands that issue 13-19 digit numbers.
_CARD_BRANDS: tuple[tuple[int, int, frozenset[int]], ...] = (
    (4, 4, frozenset({13, 16, 19})),  # Visa
    (51, 55, frozenset({16})),  # Mastercard
    (2221, 2720, frozenset({16})),  # Mastercard 2-series
    (34, 34, frozenset({15})),  # American Express
    (37, 37, frozenset({15})),
    (300, 305, frozenset({14, 16, 19})),  # Diners Club
    (36, 36, frozenset({14, 16, 19})),
    (38, 39, frozenset({14, 16, 19})),
    (3528, 3589, frozenset(range(16, 20))),  # JCB
    (6011, 6011, frozenset(range(16, 20))),  # Discover
    (644, 649, frozenset(range(16, 20))),
    (65, 65, frozenset(range(16, 20))),
    (62, 62, frozenset(range(16, 20))),  # UnionPay
    (2200, 2204, frozenset(range(16, 20))),  # Mir
    (50, 50, frozenset(range(13, 20))),  # Maestro
    (56, 58, frozenset(range(13, 20))),
    (63, 63, frozenset(range(13, 20))),
    (67, 67, frozenset(range(13, 20))),
)


def luhn_is_valid(digits: str) -> bool:
    """Luhn (mod 10) checksum, as carried by every payment card number."""
    total = 0
    for position, char in enumerate(reversed(digits)):
        value = int(char)
        if position % 2 == 1:
            value = value * 2 - 9 if value > 4 else value * 2
        total += value
    return total % 10 == 0


def _card_brand_matches(digits: str) -> bool:
    """A real issuer prefix with a length that issuer uses; rules out most long numbers."""
    for low, high, lengths in _CARD_BRANDS:
        width = len(str(low))
        if low <= int(digits[:width]) <= high and len(digits) in lengths:
            return True
    return False


def _card_grouping_ok(candidate: str) -> bool:
    """Separators, if any, are one kind and group as cards are printed: 4-4-4-4(-n), 4-6-5, 4-6-4.
    Phone numbers ("0170 123 4567 89") and ISBNs group differently."""
    separators = {c for c in candidate if c in " -"}
    if not separators:
        return True
    if len(separators) > 1:
        return False
    groups = [len(group) for group in candidate.split(separators.pop())]
    if groups in ([4, 6, 5], [4, 6, 4]):
        return True
    return len(groups) >= 4 and all(g == 4 for g in groups[:-1]) and 1 <= groups[-1] <= 4


def _accept_card(match: re.Match[str], value: str) -> bool:
    digits = value.replace(" ", "").replace("-", "")
    return _card_grouping_ok(value) and _card_brand_matches(digits) and luhn_is_valid(digits)


_CARD = _Rule("payment_card", _CARD_PATTERN, accept=_accept_card)


def _redact_cards(text: str, counts: Counter[str]) -> str:
    """Luhn-valid numbers with a plausible brand prefix; order and invoice numbers stay."""
    return _apply_rule(_CARD, text, counts)


# ---------------------------------------------------------------------------------------------
# Public API
# ---------------------------------------------------------------------------------------------

# Most specific first: a value consumed by a vendor rule is already a placeholder, which the
# label rules skip, so `password = ghp_...` counts once, as github_token.
_REDACTORS: tuple[Callable[[str, Counter[str]], str], ...] = (
    _redact_private_keys,
    _redact_shaped_tokens,
    _redact_labelled,
    _redact_passwords,
    _redact_password_tables,
    _redact_recovery_codes,
    _redact_ibans,
    _redact_cards,
)


def redact_secrets(text: str) -> tuple[str, Counter[str]]:
    """Replace every secret found with `[REDACTED:<kind>]`; return the text and counts per kind.

    The counts are all that leaves this function about what was removed: no secret, hash or
    prefix is kept, so neither the index nor logs can leak it.
    """
    counts: Counter[str] = Counter()
    for redactor in _REDACTORS:
        text = redactor(text, counts)
    return text, counts


@dataclass
class SafetyReport:
    """What the safety pass removed from one text, countable per kind for operators."""

    controls_neutralised: int = 0
    secrets: Counter[str] = field(default_factory=Counter)
    version: str = SAFETY_VERSION

    @property
    def secrets_redacted(self) -> int:
        return sum(self.secrets.values())

    @property
    def changed(self) -> bool:
        return self.controls_neutralised > 0 or self.secrets_redacted > 0

    def merge(self, other: "SafetyReport") -> None:
        """Accumulate per-element reports into a per-document one."""
        self.controls_neutralised += other.controls_neutralised
        self.secrets.update(other.secrets)

    def to_dict(self) -> dict:
        return {
            "version": self.version,
            "controls_neutralised": self.controls_neutralised,
            "secrets": dict(sorted(self.secrets.items())),
        }


def clean_text(text: str) -> tuple[str, SafetyReport]:
    """Neutralise controls first, then redact: a zero-width space inside "pass\\u200bword:" or
    an escape sequence splitting a key must not let a secret slip past the patterns."""
    text, neutralised = neutralise_controls(text)
    text, secrets = redact_secrets(text)
    return text, SafetyReport(controls_neutralised=neutralised, secrets=secrets)

"""Control characters, terminal escapes and invisible text: the first half of the safety pass.

Parsed documents reach terminals (operators tailing logs, reviewers reading chunks) and models.
A document must not be able to act on whoever displays it (escape sequences, C0/C1 controls),
nor show a reviewer different text from what the index and the model read (bidi overrides,
zero-width characters, Unicode "tag" characters used for ASCII smuggling, variation-selector
runs used to smuggle bytes). This runs before redaction so such characters cannot split a
secret's label or value and let it slip past the patterns.

Every pattern is bounded and possessive: one C-level scan per pass, whatever the input.
"""

from __future__ import annotations

import re
import unicodedata

from rag_pipeline.cleaning.safety.number_forms import plain_numbers

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
    "\u200e\u200f\u061c"  # bidi marks (LRM, RLM, ALM): invisible, and inside a word they split it
    "\u200b\u2060-\u2065\ufeff\u180e\ufff0-\ufffb"  # zero-width space, word joiner, BOM, ...
    "\u00ad\u034f\u17b4\u17b5\u206a-\u206f\u3164\uffa0"  # soft hyphen, grapheme joiner, fillers
    "\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U000e0080-\U000e00ff\U000e01f0-\U000e0fff]"
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
_ANY_MONGOLIAN_SELECTOR = re.compile("[\u180b-\u180d\u180f]")

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

# A variation selector chooses among glyphs of the character before it. The alphabets below have
# no variation sequences, so one after their letters only splits the word ("compli\ufe0fance"
# is two terms to the full-text parser); after an emoji, a digit (keycaps) or a Han character
# it is kept. Mongolian free variation selectors likewise serve only after Mongolian letters.
_ALPHABET_LETTER = "A-Za-z\u00c0-\u024f\u0370-\u03ff\u0400-\u052f\u0531-\u058f\u10a0-\u10ff\u1e00-\u1fff"
_VARIATION_AFTER_LETTER = re.compile(f"(?<=[{_ALPHABET_LETTER}])[\ufe00-\ufe0f\U000e0100-\U000e01ef]")
_STRAY_MONGOLIAN_SELECTOR = re.compile("(?<![\u1820-\u1878\u1880-\u18aa])[\u180b-\u180d\u180f]")

# Hangul jamo fillers (U+115F, U+1160) stand in for a missing jamo of a conjoining syllable; a run
# of jamo made only of fillers is a blank that renders as nothing (a known way to hide words).
_JAMO_RUN = re.compile("[\u1100-\u11ff\ua960-\ua97f\ud7b0-\ud7ff]++")
_JAMO_FILLERS = frozenset("\u115f\u1160")

# Any character one of the passes below could remove.
_ANY_NEUTRALISED = re.compile(
    "[\x00-\x08\x0e-\x1f\x7f-\x84\x86-\x9f\u200b-\u200f\u202a-\u202e\u2060-\u206f"
    "\ufeff\u180b-\u180f\ufff0-\ufffb\ufe00-\ufe0f\U000e0000-\U000e0fff"
    "\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u3164\uffa0\U0001bca0-\U0001bca3\U0001d173-\U0001d17a]"
)


def neutralise_controls(text: str) -> tuple[str, int]:
    """Make `text` inert for terminals and honest for reviewers; return it and how many
    sequences/characters were neutralised.

    Line breaks are normalised to "\\n" (uncounted). Escape sequences are removed whole, so an
    OSC 8 hyperlink keeps its visible label but loses its hidden target, and "ESC[2J" cannot
    clear a screen. Bidi overrides and zero-width characters are removed because they make the
    text a reviewer sees differ from the text the index and the model see. So are the other
    characters Unicode says to render as nothing where they have no job (soft hyphens, bidi
    marks, the grapheme joiner, Hangul fillers, a variation selector after a Latin, Greek or
    Cyrillic letter): inside a word each one splits or changes its full-text term, so
    "Vernich\u00adtungs\u00adlager" (German Wikipedia writes its long words so) was never found
    by the word a reader types.

    The result is in Unicode's composed form (NFC, uncounted: canonically equivalent text, the
    same to a reader): "Mu\u0308ller" as macOS writes it and "M\u00fcller" as a question types it
    are different words to a stemmer until then. Latin ligatures are spelt out (uncounted).

    Each pass is one C-level scan and the rarer passes run only when their characters occur,
    so a clean 20 MB text costs a few tens of milliseconds.
    """
    text = _normalise_newlines(text)
    if "\x1b" not in text and _ANY_NEUTRALISED.search(text) is None:
        return _composed(text), 0  # the common case: one scan
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
    return _composed(text), sequences + (before - len(text))


_LATIN_LIGATURE = re.compile("[\ufb00-\ufb06]")
# Written forms of ASCII that no one types and that split or change a full-text term: the
# typographic hyphen and the non-breaking hyphen ("e\u2011mail" is the terms "e" and "mail" where
# "e-mail" is also "e-mail"; "COVID\u201119" is "19" where "COVID-19" is "-19"), and the full-width
# forms of ASCII in CJK text ("\uff30\uff24\uff26" is no term "pdf", "\uff11\uff12" no 12).
_FULL_WIDTH_RUN = re.compile("[\uff01-\uff5e]++")  # NFKC writes each as its ASCII character


def _composed(text: str) -> str:
    """NFC, after the removals (a grapheme joiner removed can let two marks compose), Latin
    typographic ligatures spelt out ("\ufb01nal" -> "final"), as the PDF parser already spells them,
    and typographic hyphens and full-width letters and digits written as ASCII: no one types
    them, and to a stemmer "o\ufb03ce" is not "office" nor "\uff30\uff24\uff26" "PDF"; likewise
    fractions, powers and subscripts (number_forms.py)."""
    if text.isascii():
        return text
    if _LATIN_LIGATURE.search(text):
        text = _LATIN_LIGATURE.sub(lambda m: unicodedata.normalize("NFKC", m.group()), text)
    for hyphen in ("\u2010", "\u2011"):
        if hyphen in text:
            text = text.replace(hyphen, "-")
    if _FULL_WIDTH_RUN.search(text):  # a run at a time: one C-level call each, not one per character
        text = _FULL_WIDTH_RUN.sub(lambda m: unicodedata.normalize("NFKC", m.group()), text)
    text = plain_numbers(text)  # "½", "3⁄8", "10⁶", "H₂O" as typed: "1/2", "3/8", "10^6", "H2O"
    if unicodedata.is_normalized("NFC", text):
        return text
    # line by line, only the lines that need it (a newline composes with nothing, so this is the
    # text's NFC): one stray decomposed accent no longer costs a pass over megabytes
    return "\n".join(line if unicodedata.is_normalized("NFC", line) else unicodedata.normalize("NFC", line)
                     for line in text.split("\n"))


def as_indexed(text: str) -> str:
    """A question or a claim with what `neutralise_controls` takes out of every document taken out
    of it too: a soft hyphen or a bidi mark pasted along with a question would otherwise make a
    term no indexed text holds."""
    return neutralise_controls(text)[0]


# Removing one invisible character can change the context of the next (a stray joiner between
# two variation selectors turns them into a run), so these passes repeat until nothing changes;
# each repetition removes at least one character and real text settles after one or two.
_MAX_CONTEXT_PASSES = 4


def _remove_context_dependent(text: str) -> str:
    """Tag characters, stray joiners, variation selectors, Mongolian selectors and Hangul fillers,
    in that order; each pass only where one scan found its characters."""
    found = set(_ANY_CONTEXT_DEPENDENT.findall(text))
    if not found:
        return text
    if any(_ANY_TAG.match(c) for c in found):
        text = _TAGS.sub(r"\1", text)
    if found & _JOINERS:
        text = _STRAY_JOINER.sub("", text)
    if any(_ANY_VARIATION_SELECTOR.match(c) for c in found):
        text = _VARIATION_AFTER_LETTER.sub("", _VARIATION_SELECTOR_RUN.sub("", text))
    if any(_ANY_MONGOLIAN_SELECTOR.match(c) for c in found):
        text = _STRAY_MONGOLIAN_SELECTOR.sub("", text)
    if found & _JAMO_FILLERS:
        text = _JAMO_RUN.sub(_without_lone_fillers, text)
    return text


_ANY_CONTEXT_DEPENDENT = re.compile(
    "[\U000e0000-\U000e007f\u200c\u200d\ufe00-\ufe0f\U000e0100-\U000e01ef\u180b-\u180d\u180f\u115f\u1160]"
)
_JOINERS = frozenset("\u200c\u200d")


def _without_lone_fillers(run: re.Match[str]) -> str:
    """A run of conjoining jamo as it is, unless it holds nothing but fillers."""
    return "" if set(run.group()) <= _JAMO_FILLERS else run.group()


def _normalise_newlines(text: str) -> str:
    """CRLF, CR, VT, FF, NEL, LS and PS all become "\\n"."""
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    if _OTHER_NEWLINES.search(text) is None:
        return text
    return _OTHER_NEWLINES.sub("\n", text)

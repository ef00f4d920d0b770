"""Which PostgreSQL text-search configuration indexes a document, and how a question becomes a
ranked OR query.

A document is indexed with the stemmed configuration of its own language where PostgreSQL has
one (so "approvals" finds "approval" and the language's stop words are not indexed), with the
language's Hunspell dictionary where PostgreSQL has no stemmer but the server has the dictionary
(migration 029: Czech, Slovak, Polish, Croatian, Slovenian; "smlouvě" finds "smlouva"), and with
`simple_unaccent` (migration 004: lower-casing plus accent folding, no stemming) otherwise, e.g.
Korean. The language is detected once per document, never per chunk: a
chunk that is mostly a table of numbers must not fall into another language's configuration.

A question is matched with OR semantics (any of its terms may match) and ranked by BM25 in SQL
(store/bm25.py, from statistics kept at publish): requiring every word (AND) makes natural questions find nothing.
"""

from __future__ import annotations

from rag_pipeline.store.text_dictionaries import LANGUAGES as DICTIONARY_LANGUAGES

FALLBACK_CONFIG = "simple_unaccent"

# ISO 639-1 (as langdetect reports it) -> the stemmed configuration PostgreSQL 18 ships (or, below,
# the dictionary configuration of migration 029).
LANGUAGE_CONFIGS = {
    "ar": "arabic", "hy": "armenian", "eu": "basque", "ca": "catalan", "da": "danish", "nl": "dutch",
    "en": "english", "et": "estonian", "fi": "finnish", "fr": "french", "de": "german", "el": "greek",
    "hi": "hindi", "hu": "hungarian", "id": "indonesian", "ga": "irish", "it": "italian",
    "lt": "lithuanian", "ne": "nepali", "no": "norwegian", "pt": "portuguese", "ro": "romanian",
    "ru": "russian", "sr": "serbian", "es": "spanish", "sv": "swedish", "ta": "tamil", "tr": "turkish",
    "yi": "yiddish",
}
# Languages without a PostgreSQL stemmer whose Hunspell dictionary migration 029 loads where the
# server has it (store/text_dictionaries.py); staging falls back to FALLBACK_CONFIG where not.
LANGUAGE_CONFIGS.update({code: cfg for code, (_, cfg) in DICTIONARY_LANGUAGES.items()})
# Every configuration a chunk may carry: a query is turned into lexemes under each of them.
CONFIGS = tuple(sorted(set(LANGUAGE_CONFIGS.values()))) + (FALLBACK_CONFIG,)
SAMPLE_CHARS = 6000  # enough text to tell languages apart; detection cost stays flat on huge files
MIN_LETTERS = 40  # below this (a scan with no text, a table of numbers) no language is claimed


def detect_language(text: str) -> str | None:
    """ISO 639-1 code of the text's language, or None when there is too little text to tell."""
    sample = _sample(text)
    if not _has_letters(sample, MIN_LETTERS):
        return None
    from langdetect.lang_detect_exception import LangDetectException

    from rag_pipeline.common.language_detection import new_detector

    detector = new_detector()
    detector.append(sample)
    try:
        return str(detector.detect())
    except LangDetectException:
        return None


def _has_letters(text: str, wanted: int) -> bool:
    """Whether the text has `wanted` letters; stops counting there (a document's text is long)."""
    found = 0
    for ch in text:
        if ch.isalpha():
            found += 1
            if found >= wanted:
                return True
    return False


def _sample(text: str) -> str:
    """Up to SAMPLE_CHARS from the beginning, the middle and the end of the text: a document
    may open with an English licence or cover page and be written in another language."""
    if len(text) <= SAMPLE_CHARS:
        return text
    third = SAMPLE_CHARS // 3
    middle = len(text) // 2
    return " ".join((text[:third], text[middle - third // 2 : middle + third // 2], text[-third:]))


def config_for_language(language: str | None) -> str:
    return LANGUAGE_CONFIGS.get(language or "", FALLBACK_CONFIG)


def document_config(text: str) -> str:
    """The text-search configuration a document's chunks are indexed with."""
    return config_for_language(detect_language(text))


def or_query(lexemes: list[str]) -> str:
    """A tsquery (input syntax) matching any of the lexemes. Lexemes come from to_tsvector, so
    they are already normalised; each is quoted (quotes doubled, backslashes escaped) so an
    identifier like `10-K` or `it's` stays one operand and no query text is ever parsed as
    tsquery operators."""
    quoted = ["'" + lexeme.replace("\\", "\\\\").replace("'", "''") + "'" for lexeme in lexemes]
    return " | ".join(quoted)

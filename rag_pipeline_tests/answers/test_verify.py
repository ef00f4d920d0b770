"""`rag-pipeline verify` and `answers.verify.verify` on real syncs of the demo corpus, with the real
model and PostgreSQL: every citation status, claim status and verdict by name; a superseded
citation after a real re-sync and the same answer from an --as-of search judged as of its time;
a chunk of a group the caller lacks; the append-only answer record (grants and triggers), its
compliance views and `explain`; hostile answers refused with exit 2 and nothing written."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
from conftest import DEMO_DIR, synced_demo, write_config
from helpers import query, run_cli, sync
from psycopg import errors, sql

from rag_pipeline import cli
from rag_pipeline.answers import support
from rag_pipeline.answers.draft import AnswerError, parse_answer
from rag_pipeline.answers.verify import verify
from rag_pipeline.store import database

POLICY = "policies/travel-policy.pdf"
QUESTION = "Who approves a business trip abroad and what is the hotel cap in Berlin?"
USER = "alice@example.com"


@pytest.fixture(scope="module")
def demo(pg_server_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, str]]:
    """The demo corpus synced once (the travel policy's first edition)."""
    with synced_demo(pg_server_url, tmp_path_factory.mktemp("verify"), eval_set=False) as (config, _, url):
        yield config, url


def _search(capsys, config: Path, *extra: str, user: str = USER, question: str = QUESTION) -> dict:
    code, data = run_cli(capsys, "search", question, "--groups", "all-staff", "-k", "8", "--user", user,
                         "--config", str(config), *extra)
    assert code == 0, data
    return data


def _chunk(url: str, uri: str, phrase: str, version: int = 1) -> int:
    found = query(url, "SELECT c.id FROM chunks c JOIN document_versions v ON v.id = c.version_id"
                       " JOIN documents d ON d.id = v.document_id WHERE d.uri = %s AND v.version_no = %s"
                       " AND c.text LIKE %s ORDER BY c.id", uri, version, f"%{phrase}%")
    assert found, (uri, phrase)
    return found[0][0]


def _verify(capsys, config: Path, tmp_path: Path, answer: Any, *extra: str, user: str | None = USER) -> tuple[int, Any]:
    path = tmp_path / f"answer-{len(list(tmp_path.iterdir()))}.json"
    path.write_bytes(answer if isinstance(answer, bytes) else json.dumps(answer).encode())
    return run_cli(capsys, "verify", str(path), "--config", str(config), *(("--user", user) if user else ()), *extra)


def _answers(url: str) -> int:
    return query(url, "SELECT count(*) FROM answers")[0][0]


def test_a_correct_answer_is_verified_recorded_and_listed_by_explain(capsys, demo, tmp_path: Path) -> None:
    config, url = demo
    searched = _search(capsys, config)
    returned = {r["chunk_id"] for r in searched["results"]}
    approval = _chunk(url, POLICY, "head of department")
    rates = _chunk(url, POLICY, "| Berlin |")
    assert {approval, rates} <= returned
    answer = {"log_id": searched["log_id"], "claims": [
        {"text": "A business trip abroad must be approved in advance by the head of department.",
         "citations": [{"chunk_id": approval, "quote": "approved  in advance by the HEAD of department"}]},
        {"text": "Hotels in Berlin are paid up to EUR 140 a night.", "citations": [{"chunk_id": rates}]},
        {"text": "Travel requests go in ten working days ahead.", "citations": [{"chunk_id": approval}]}]}
    code, out = _verify(capsys, config, tmp_path, answer)
    assert code == 0, out
    assert out["verdict"] == "verified" and out["message"] is None and out["answer_id"] > 0, [(c["text"], [x["reason"] for x in c["citations"]]) for c in out["claims"]]
    assert [c["status"] for c in out["claims"]] == ["supported"] * 3
    first = out["claims"][0]["citations"][0]
    assert first["status"] == "ok" and first["chunk_id"] == approval and first["uri"] == POLICY and first["version"] == 1
    assert first["section_path"] and first["pages"][0] >= 1 and "supports the claim" in first["reason"]
    # the record: linked to its search, the draft as given, the citation map, the calibration used
    record = query(url, "SELECT search_id, caller, verdict, draft, claims, support_source, db_user FROM answers WHERE id = %s",
                   out["answer_id"])[0]
    assert record[0] == searched["log_id"] and record[1] == USER and record[2] == "verified"
    assert record[3] == answer and record[4][1]["citations"][0]["uri"] == POLICY and record[5] and record[6]
    cited = query(url, "SELECT claim_no, chunk_id, uri, version_no, citation_status FROM answer_citations"
                       " WHERE uri = %s AND version_no = 1 AND answer_id = %s ORDER BY claim_no", POLICY, out["answer_id"])
    assert [(r[0], r[1], r[4]) for r in cited] == [(1, approval, "ok"), (2, rates, "ok"), (3, approval, "ok")]
    code, explained = run_cli(capsys, "explain", str(searched["log_id"]), "--config", str(config))
    assert code == 0 and [a["answer_id"] for a in explained["answers"]] == [out["answer_id"]]
    capsys.readouterr()
    assert cli.main(["explain", str(searched["log_id"]), "--config", str(config)]) == 0
    assert f"answer {out['answer_id']} verified" in capsys.readouterr().out


def test_a_correct_answer_written_as_a_markdown_list_is_verified_claim_by_item(capsys, demo, tmp_path: Path) -> None:
    """A generator's usual shape: a heading, a lead-in, bullets without full stops, an abbreviation.
    Each item is its own claim; the heading and lead-in assert nothing and are not flagged."""
    config, url = demo
    searched = _search(capsys, config)
    approval = _chunk(url, POLICY, "head of department")
    rates = _chunk(url, POLICY, "| Berlin |")
    text = (f"## Business travel\n\nIn short:\n\n"
            f"- A business trip abroad must be approved in advance by the head of department [chunk {approval}]\n"
            f"- Hotels in Berlin, i.e. the capital, are paid up to EUR 140 a night [chunk {rates}]\n")
    code, out = _verify(capsys, config, tmp_path, {"log_id": searched["log_id"], "text": text})
    assert code == 0, out
    assert [(c["text"], c["status"]) for c in out["claims"]] == [
        ("A business trip abroad must be approved in advance by the head of department", "supported"),
        ("Hotels in Berlin, i.e. the capital, are paid up to EUR 140 a night", "supported")], out["claims"]
    assert out["verdict"] == "verified"


def test_a_correct_answer_with_a_table_a_quote_and_a_list_of_sources_is_verified(capsys, demo, tmp_path: Path) -> None:
    """Markdown as generators write it: a claim per table row (its header none), a quote, and a
    list of sources at the end that is no claim (it had been one, "Sources:", judged unsupported)."""
    config, url = demo
    searched = _search(capsys, config)
    approval = _chunk(url, POLICY, "head of department")
    rates = _chunk(url, POLICY, "| Berlin |")
    text = (f"| City | Hotel cap |\n|---|---|\n| Berlin | EUR 140 a night [chunk {rates}] |\n\n"
            f"> A business trip abroad must be approved in advance\n> by the head of department [chunk {approval}].\n\n"
            f"**Sources**\n- [chunk {rates}]\n- [chunk {approval}]\n")
    code, out = _verify(capsys, config, tmp_path, {"log_id": searched["log_id"], "text": text})
    assert code == 0, out
    assert [(c["text"], c["status"]) for c in out["claims"]] == [
        ("City: Berlin; Hotel cap: EUR 140 a night", "supported"),
        ("A business trip abroad must be approved in advance by the head of department.", "supported")], out["claims"]
    assert out["verdict"] == "verified"


def test_a_quote_with_an_ellipsis_stands_and_a_reordered_one_does_not(capsys, demo, tmp_path: Path) -> None:
    config, url = demo
    searched = _search(capsys, config)
    approval = _chunk(url, POLICY, "head of department")
    claim = "A business trip abroad must be approved in advance by the head of department."
    answer = {"log_id": searched["log_id"], "claims": [
        {"text": claim, "citations": [{"chunk_id": approval, "quote": "\u201capproved in advance [\u2026] head of department.\u201d"}]},
        {"text": claim, "citations": [{"chunk_id": approval, "quote": "head of department ... approved in advance"}]}]}
    code, out = _verify(capsys, config, tmp_path, answer)
    assert code == 0, out
    assert [c["citations"][0]["status"] for c in out["claims"]] == ["ok", "quote_not_found"], out["claims"]


def test_every_citation_status_and_a_flagged_verdict(capsys, demo, tmp_path: Path) -> None:
    config, url = demo
    searched = _search(capsys, config)
    returned = {r["chunk_id"] for r in searched["results"]}
    approval = _chunk(url, POLICY, "head of department")
    rates = _chunk(url, POLICY, "| Berlin |")
    salaries = _chunk(url, "hr/salaries-2026.pdf", "")  # group hr only: the caller is all-staff
    passwords = _chunk(url, "it/security-handbook.md", "at least 14 characters")
    assert passwords not in returned and salaries not in returned
    answer = {"log_id": searched["log_id"], "claims": [
        {"text": "A business trip abroad must be approved in advance by the head of department.",
         "citations": [{"chunk_id": approval}]},
        {"text": "Hotels in Berlin are paid up to EUR 195 a night.", "citations": [{"chunk_id": rates}]},  # figure
        {"text": "Hotels in Berlin are paid up to EUR 135 a night.", "citations": [{"chunk_id": rates}]},  # Hamburg's
        {"text": "Exceptions to the policy are approved by the head of Finance.", "citations": [{"chunk_id": rates}]},
        {"text": "Passwords must be at least 14 characters long.", "citations": [{"chunk_id": passwords}]},
        {"text": "Salary bands are confidential.", "citations": [{"chunk_id": salaries}]},
        {"text": "Trips abroad are approved by the head of department.",
         "citations": [{"chunk_id": approval, "quote": "approved in advance by the head of the department"}]},
        {"text": "The travel desk books trains.", "citations": [{"chunk_id": 987654321}]},
        {"text": "Travel requests go in ten working days ahead.", "citations": []}]}
    code, out = _verify(capsys, config, tmp_path, answer)
    assert code == 0, out
    citations = [c["citations"][0] if c["citations"] else None for c in out["claims"]]
    assert [c and c["status"] for c in citations] == [
        "ok", "unsupported", "unsupported", "unsupported", "not_retrieved", "not_visible", "quote_not_found",
        "not_retrieved", None]
    assert [c["status"] for c in out["claims"]] == ["supported"] + ["unsupported"] * 7 + ["uncited"]
    assert out["verdict"] == "flagged" and out["message"] is None
    assert "amount 'eur 195'" in citations[1]["reason"] and "amount 'eur 135'" in citations[2]["reason"]
    assert "support score" in citations[3]["reason"] and citations[3]["support"]["score"] < out["support_threshold"]["threshold"]
    assert "not among the results" in citations[4]["reason"] and "no chunk 987654321" in citations[7]["reason"]
    # nothing about a chunk the caller may not see: not its document, section or pages
    assert citations[5]["uri"] is None and citations[5]["section_path"] is None and "salar" not in json.dumps(citations[5])
    # ... but compliance's record knows what was cited
    assert query(url, "SELECT uri FROM answer_citations WHERE answer_id = %s AND citation_status = 'not_visible'",
                 out["answer_id"]) == [("hr/salaries-2026.pdf",)]
    assert out["claims"][8]["reason"] == "the claim cites no passage"


def test_an_answer_no_claim_of_which_holds_is_rejected_with_a_refusal(capsys, demo, tmp_path: Path) -> None:
    config, url = demo
    searched = _search(capsys, config)
    rates = _chunk(url, POLICY, "| Berlin |")
    answer = {"log_id": searched["log_id"], "claims": [
        {"text": "Hotels in Berlin are paid up to EUR 195 a night.", "citations": [{"chunk_id": rates}]},
        {"text": "Nobody needs approval.", "citations": []}]}
    code, out = _verify(capsys, config, tmp_path, answer)
    assert code == 0 and out["verdict"] == "rejected" and out["message"].startswith("No answer can be given")
    capsys.readouterr()
    path = tmp_path / "text-answer.txt"  # plain text with markers, split by sentence; human output
    path.write_text(f"Hotels in Berlin are paid up to EUR 195 a night [chunk {rates}]. Nobody needs approval.")
    assert cli.main(["verify", str(path), "--log-id", str(searched["log_id"]), "--user", USER, "--config", str(config)]) == 0
    printed = capsys.readouterr().out
    assert "REJECTED" in printed and "No answer can be given" in printed and "uncited" in printed


def test_the_library_judges_without_recording_when_asked(demo, embedder) -> None:
    config, url = demo
    with database.connect(url) as conn:
        from rag_pipeline.retrieval.search import search

        hits = search(conn, embedder, QUESTION, ["all-staff"], k=8, user="lib")
        before = _answers(url)
        draft = parse_answer({"log_id": hits.log_id, "text": f"Trips abroad are approved by the head of department "
                              f"[chunk {hits[0].chunk_id}]. Hotels are paid up to EUR 140 a night."})
        result = verify(conn, embedder, draft, user="lib", record=False)
        assert result.answer_id is None and _answers(url) == before
        assert [c.status for c in result.claims][1] == "uncited" and result.verdict in ("flagged", "rejected")
        recorded = verify(conn, embedder, draft, user="lib")
        assert recorded.answer_id and _answers(url) == before + 1
        with pytest.raises(AnswerError, match="no logged search with id"):
            verify(conn, embedder, draft, user="mallory")  # another caller's search
        assert _answers(url) == before + 1


def test_a_superseded_citation_after_a_resync_and_an_as_of_answer_judged_as_of_its_time(
        capsys, tmp_path: Path, db_url: str, demo_copy: Path, monkeypatch) -> None:
    monkeypatch.delenv("DAGSTER_HOME", raising=False)
    config = write_config(tmp_path, db_url, docs=demo_copy)
    assert sync(capsys, config)[0] == 0
    live = _search(capsys, config)
    rates = _chunk(db_url, POLICY, "| Berlin |")
    claim = {"text": "Hotels in Berlin are paid up to EUR 140 a night.", "citations": [{"chunk_id": rates}]}
    v1_from = query(db_url, "SELECT v.valid_from FROM document_versions v JOIN documents d ON d.id = v.document_id"
                            " WHERE d.uri = %s AND v.version_no = 1", POLICY)[0][0]
    shutil.copy(DEMO_DIR / "versions" / "travel-policy.v2.pdf", demo_copy / POLICY)
    assert sync(capsys, config)[0] == 0
    answers_dir = tmp_path / "answers"
    answers_dir.mkdir()
    code, out = _verify(capsys, config, answers_dir, {"log_id": live["log_id"], "claims": [claim]})
    assert code == 0, out
    cited = out["claims"][0]["citations"][0]
    v2_from = query(db_url, "SELECT v.valid_from FROM document_versions v JOIN documents d ON d.id = v.document_id"
                            " WHERE d.uri = %s AND v.version_no = 2", POLICY)[0][0]
    assert cited["status"] == "superseded" and cited["version"] == 1
    assert f"superseded since {v2_from.isoformat(timespec='seconds')} by version 2" in cited["reason"]
    assert out["verdict"] == "rejected"
    # the same answer from a search as of the first edition's time is judged as of that time
    as_of = _search(capsys, config, "--as-of", v1_from.isoformat())
    assert rates in {r["chunk_id"] for r in as_of["results"]}
    code, out = _verify(capsys, config, answers_dir, {"log_id": as_of["log_id"], "claims": [claim]})
    assert code == 0 and out["verdict"] == "verified", out
    assert out["judged_as_of"].startswith(v1_from.isoformat()[:19])
    # and the v2 figure against the v2 chunk today
    fresh = _search(capsys, config)
    rates_v2 = _chunk(db_url, POLICY, "| Berlin |", version=2)
    code, out = _verify(capsys, config, answers_dir, {"log_id": fresh["log_id"], "claims": [
        {"text": "Hotels in Berlin are paid up to EUR 165 a night.", "citations": [{"chunk_id": rates_v2}]}]})
    assert code == 0 and out["verdict"] == "verified", out


def _rewrite(url: str, statement: str, role: str | None) -> Exception | None:
    with database.connect(url) as conn:
        try:
            with conn.transaction():
                if role:
                    conn.execute(sql.SQL("SET LOCAL ROLE {}").format(sql.Identifier(role)))
                conn.execute(statement)
        except psycopg.Error as exc:
            return exc
    return None


def test_the_answer_record_is_append_only_for_every_role(capsys, demo, tmp_path: Path) -> None:
    config, url = demo
    searched = _search(capsys, config)
    code, out = _verify(capsys, config, tmp_path, {"log_id": searched["log_id"], "claims": [
        {"text": "Trips need approval.", "citations": [{"chunk_id": searched["results"][0]["chunk_id"]}]}]})
    assert code == 0
    answer = out["answer_id"]
    for role in ("rag_reader", "rag_writer", "rag_compliance"):
        for statement in (f"UPDATE answers SET verdict = 'verified' WHERE id = {answer}", f"DELETE FROM answers WHERE id = {answer}",
                          "TRUNCATE answers"):
            assert isinstance(_rewrite(url, statement, role), errors.InsufficientPrivilege), (role, statement)
    for statement in (f"UPDATE answers SET verdict = 'verified', claims = '[]' WHERE id = {answer}",
                      f"DELETE FROM answers WHERE id = {answer}", "TRUNCATE answers CASCADE"):
        refused = _rewrite(url, statement, None)  # a superuser session: the triggers refuse
        assert isinstance(refused, errors.RestrictViolation) and "append-only" in str(refused), statement
    assert query(url, "SELECT verdict FROM answers WHERE id = %s", answer) == [(out["verdict"],)]
    # the reader may append (a RAG service recording its own verification) but read nothing back
    insert = ("INSERT INTO answers (search_id, judged_as_of, draft, claims, verdict, support_threshold,"
              f" support_coverage_weight, support_source) VALUES ({searched['log_id']}, now(), '{{}}', '[]', 'rejected',"
              " 0.7, 0.5, 'test') RETURNING id")
    assert _rewrite(url, insert, "rag_reader") is None
    dangling = insert.replace(f"VALUES ({searched['log_id']},", "VALUES (987654321,")
    assert isinstance(_rewrite(url, dangling, "rag_reader"), errors.ForeignKeyViolation)
    assert isinstance(_rewrite(url, "SELECT claims FROM answers", "rag_reader"), errors.InsufficientPrivilege)
    assert isinstance(_rewrite(url, "SELECT * FROM answer_citations", "rag_reader"), errors.InsufficientPrivilege)
    # compliance reads the views, not the table
    assert isinstance(_rewrite(url, "SELECT * FROM answers", "rag_compliance"), errors.InsufficientPrivilege)
    assert _rewrite(url, "SELECT * FROM answer_record, answer_citations", "rag_compliance") is None


@pytest.mark.parametrize("case", ["10MB", "10000-claims", "string-id", "float-id", "bool-id", "unknown-answer-field",
                                  "unknown-claim-field", "unknown-citation-field", "another-caller", "no-caller",
                                  "missing-log", "not-json", "not-utf8", "text-without-log-id", "bad-marker",
                                  "no-claims", "nul", "duplicate-key", "deep-nesting"])
def test_hostile_answers_are_refused_with_exit_2_and_nothing_written(capsys, demo, tmp_path: Path, case: str) -> None:
    config, url = demo
    searched = _search(capsys, config)
    log_id, chunk = searched["log_id"], searched["results"][0]["chunk_id"]

    def answer(citation: Any = None, **claim: Any) -> dict:
        return {"log_id": log_id, "claims": [{"text": "Trips need approval.",
                                              "citations": [citation or {"chunk_id": chunk}], **claim}]}

    user: str | None = USER
    given: Any = {
        "10MB": {"log_id": log_id, "claims": [{"text": "x" * 1000, "citations": []}] * 10_000},
        "10000-claims": {"log_id": log_id, "claims": [{"text": "Trips need approval.", "citations": []}] * 10_000},
        "string-id": answer({"chunk_id": str(chunk)}),
        "float-id": answer({"chunk_id": float(chunk)}),
        "bool-id": answer({"chunk_id": True}),
        "unknown-answer-field": {**answer(), "model": "gpt"},
        "unknown-claim-field": answer(sources=[1]),
        "unknown-citation-field": answer({"chunk_id": chunk, "qoute": "approval"}),
        "another-caller": answer(),
        "no-caller": answer(),
        "missing-log": {**answer(), "log_id": 2**62},
        "not-json": b'{"log_id": 1, "claims": [',
        "not-utf8": b'{"log_id": 1, "claims": "\xff\xfe"}',
        "text-without-log-id": b"Trips need approval [chunk 1].",
        "bad-marker": {"log_id": log_id, "text": "Trips need approval [chunk 12abc]."},
        "no-claims": {"log_id": log_id, "claims": []},
        "nul": answer(text="Trips\x00 need approval."),
        "duplicate-key": f'{{"log_id": {log_id}, "log_id": 1, "claims": []}}'.encode(),
        "deep-nesting": b'{"log_id": 1, "claims": ' + b"[" * 200_000 + b"]" * 200_000 + b"}",
    }[case]
    if case == "another-caller":
        user = "mallory@example.com"
    elif case == "no-caller":
        user = None
    before = _answers(url)
    path = tmp_path / "answer.json"
    path.write_bytes(given if isinstance(given, bytes) else json.dumps(given).encode())
    capsys.readouterr()
    code = cli.main(["verify", str(path), "--config", str(config), "--json", *(("--user", user) if user else ())])
    captured = capsys.readouterr()
    assert code == 2 and captured.out == "", (case, captured.out[:300])
    assert captured.err.startswith("rag-pipeline: ") and len(captured.err) < 600, captured.err
    assert _answers(url) == before


ANSWER_CASES = """
- id: travel-abroad-right
  as_user: {groups: [all-staff]}
  split: calibration
  question: Who approves a business trip abroad?
  answer:
    - text: A business trip abroad must be approved in advance by the head of department.
      cite: {evidence: "approved in advance by the head of department", expect: ok}
      expect: supported
- id: hotel-cap-wrong-figure
  as_user: {groups: [all-staff]}
  split: calibration
  question: How much may I spend on a hotel in Berlin?
  answer:
    - text: Hotels in Berlin are paid up to EUR 195 a night.
      cite: {evidence: "| Berlin | 140 |", expect: unsupported}
      expect: unsupported
    - text: Unlisted cities have a hotel cap of EUR 120 per night.
      cite: {evidence: "the hotel cap is EUR 120 per night", expect: ok}
      expect: supported
- id: wrong-passage
  as_user: {groups: [all-staff]}
  split: calibration
  question: Who approves exceptions to the travel policy, and what are the hotel caps?  # the cited table must be among the results
  answer:
    - text: Exceptions to the travel policy are approved by the head of Finance.
      cite: [{evidence: "| Berlin | 140 |", expect: unsupported}, {chunk_id: 987654321, expect: not_retrieved}]
      expect: unsupported
    - text: Exceptions must be requested in writing before the trip.
      cite: {evidence: "Exceptions to this policy must be requested in writing", expect: ok}
      expect: supported
- id: receipts-report
  as_user: {groups: [all-staff]}
  split: report
  question: What is the deadline for handing in receipts after a business trip?
  answer:
    - text: Receipts must be uploaded within 30 days of returning from the trip.
      cite: {evidence: "within 30 days of returning from the trip", quote: "within 30 days of returning", expect: ok}
      expect: supported
    - text: Receipts must be uploaded within 30 days of returning from the trip.
      cite: {evidence: "within 30 days of returning from the trip", quote: "within 14 days of returning", expect: quote_not_found}
      expect: unsupported
    - text: Mileage is paid at EUR 0.30 per kilometre.
      expect: uncited
- id: report-wrong-passage
  as_user: {groups: [all-staff]}
  split: report
  question: How long must passwords be?
  answer:
    - text: Passwords must be at least 14 characters long.
      cite: {evidence: "Passwords must be at least 14 characters long", expect: ok}
      expect: supported
    - text: Every employee on a business trip is covered by the company travel insurance.
      cite: {evidence: "Passwords must be at least 14 characters long", source: it/security-handbook.md, expect: unsupported}
      expect: unsupported
"""


def test_answer_cases_are_evaluated_gated_and_calibrate_the_support_threshold(capsys, demo, tmp_path: Path) -> None:
    config, url = demo
    eval_set = tmp_path / "answers.yaml"
    eval_set.write_text(ANSWER_CASES, encoding="utf-8")
    code, report = run_cli(capsys, "eval", str(eval_set), "--config", str(config))
    metrics = report["metrics"]
    assert metrics["answer_cases"] == 5 and metrics["citation_accuracy"] == 1.0, report["answer_cases"]
    assert metrics["unsupported_recall"] == 1.0 and metrics["unsupported_precision"] == 1.0
    assert metrics["citation_coverage"] == 1.0 and code == 0
    assert not any(c["failed"] for c in report["answer_cases"])
    # thresholdable in the gate: a bound the metrics cannot meet fails eval with exit 3
    strict = tmp_path / "strict.yaml"
    strict.write_text(config.read_text().replace("thresholds:", "thresholds:\n    citation_accuracy: 1.01\n   ", 1))
    code, report = run_cli(capsys, "eval", str(eval_set), "--config", str(strict))
    assert code == 3 and any("citation_accuracy" in f for f in report["failures"])
    before = query(url, "SELECT count(*) FROM answers")[0][0]
    code, fitted = run_cli(capsys, "calibrate-support", str(eval_set), "--config", str(config))
    assert code == 0 and fitted["calibration_citations"]["ok"] >= 2 and fitted["calibration_citations"]["unsupported"] >= 1
    stored = query(url, "SELECT threshold, coverage_weight FROM support_calibrations ORDER BY id DESC LIMIT 1")[0]
    assert stored == (pytest.approx(fitted["threshold"], abs=1e-4), fitted["coverage_weight"])
    assert query(url, "SELECT count(*) FROM answers")[0][0] == before  # evaluation records no answer
    searched = _search(capsys, config)
    code, out = _verify(capsys, config, tmp_path, {"log_id": searched["log_id"], "claims": [
        {"text": "Trips need approval.", "citations": [{"chunk_id": searched["results"][0]["chunk_id"]}]}]})
    assert out["support_threshold"]["source"].startswith("calibrated") and str(eval_set) in out["support_threshold"]["source"]


def _judge_one(conn, embedder, question: str, claim: str, chunk_id: int) -> Any:
    """One claim citing one chunk, judged (not recorded) against a real search that returned the
    chunk, at the built-in support threshold (the module's other tests calibrate another)."""
    from rag_pipeline.answers.draft import Citation, Claim, Draft
    from rag_pipeline.retrieval.search import search

    hits = search(conn, embedder, question, ["all-staff"], k=8, user="lib")
    assert chunk_id in [h.chunk_id for h in hits], question
    draft = Draft(hits.log_id, (Claim(claim, (Citation(chunk_id),)),))
    return verify(conn, embedder, draft, user="lib", record=False, threshold=support.DEFAULT).claims[0]


def test_a_reworded_figure_stands_and_a_figure_in_another_role_or_a_negation_is_flagged(demo, embedder) -> None:
    config, url = demo
    notice = _chunk(url, "hr/parental-leave.md", "seven weeks")
    screens = _chunk(url, "it/security-handbook.md", "five minutes")
    mfa = _chunk(url, "it/security-handbook.md", "text message are not allowed")
    when_notice = "How many weeks before parental leave must I tell HR?"
    with database.connect(url) as conn:
        # the passage writes "five minutes" and "seven weeks"; the claims write digits
        for question, claim, chunk in ((("When does my laptop screen lock automatically?"),
                                        "Screens lock automatically after 5 minutes without activity.", screens),
                                       (when_notice, "Tell HR in writing at least 7 weeks before parental leave starts.",
                                        notice)):
            found = _judge_one(conn, embedder, question, claim, chunk)
            assert found.status == "supported", found.citations[0].reason
        # 7 weeks is in the passage, but as the notice before leave in the first two years; leave
        # between the third and eighth birthday needs 13 weeks
        found = _judge_one(conn, embedder, when_notice,
                           "Leave taken between the child's third and eighth birthday needs a notice of seven weeks.", notice)
        assert found.status == "unsupported"
        assert "figure '7' stands in the passage for something else" in found.citations[0].reason
        found = _judge_one(conn, embedder, when_notice,
                           "Leave taken between the child's third and eighth birthday needs a notice of 13 weeks.", notice)
        assert found.status == "supported", found.citations[0].reason
        # the passage forbids codes by text message; the claim drops the "not": flagged, and its
        # support lowered by the polarity weight (the score, not the flag, decides: a weight too
        # small for a near-verbatim claim lets it pass, as here at the built-in default)
        question = "May I use codes by text message for multi-factor authentication?"
        right = _judge_one(conn, embedder, question, "Codes by text message are not allowed for company accounts.", mfa)
        negated = _judge_one(conn, embedder, question, "Codes by text message are allowed for company accounts.", mfa)
        assert right.status == "supported" and right.citations[0].score["polarity_flag"] == 0
        flagged = negated.citations[0].score
        assert flagged["polarity_flag"] == 1 and "differ in negation" in negated.citations[0].reason
        weights = support.DEFAULT
        assert flagged["score"] == pytest.approx(flagged["similarity"] + weights.coverage_weight * flagged["term_coverage"]
                                                 - weights.polarity_weight, abs=2e-4)

"""Rerank weights fitted by a documented, deterministic procedure (retrieval/rerank_fit.py):
the same cases give the same weights; a feature that marks the answering chunk gets weight and
one that marks the wrong chunk gets none; the fast objective the fit uses is the one search's
order gives; hostile weights are refused. On a real index: `calibrate-rerank` stores the weights
with the index, later searches reorder with them and log which, and a search logged before the
calibration still replays identically (it is reordered with the weights in force then)."""

from __future__ import annotations

import math
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import DEMO_DIR, synced_demo
from helpers import query, rewrite_history, run_cli

from rag_pipeline import cli
from rag_pipeline.retrieval import rerank, rerank_fit
from rag_pipeline.retrieval.search import search
from rag_pipeline.store import database

ZERO = dict.fromkeys(rerank.FEATURES, 0.0)


def _features(fused: float, **found: float) -> dict[str, float]:
    return {"fused": fused, **ZERO, **found}


def _case(rows: list[tuple[dict[str, float], bool]], named: tuple[bool, ...] | None = None) -> rerank_fit.FitCase:
    return rerank_fit.FitCase(tuple(f for f, _ in rows), named or (False,) * len(rows), tuple(r for _, r in rows))


def _cases() -> list[rerank_fit.FitCase]:
    """The answer sits second by fusion and is the only one holding the question's identifier;
    the first by fusion has the better phrase match (a misleading feature here)."""
    cases = []
    for i in range(12):
        cases.append(_case([(_features(1.0, phrase=1.0), False),
                            (_features(0.9 - i / 100, identifiers=1.0, phrase=0.0), True),
                            (_features(0.5, term_coverage=0.3), False)]))
    return cases


def test_the_fit_gives_weight_to_the_feature_that_marks_the_answer_and_none_to_a_misleading_one() -> None:
    fitted = rerank_fit.fit(_cases(), k=10)
    assert fitted.weights["identifiers"] > 0 and fitted.weights["phrase"] == 0.0
    assert rerank_fit.objective(_cases(), fitted.weights, 10) == 1.0
    assert rerank_fit.objective(_cases(), rerank_fit.START, 10) == pytest.approx(1 / math.log2(3))
    assert fitted.objective == 1.0


def test_the_same_cases_give_the_same_weights_whatever_their_history() -> None:
    first = rerank_fit.fit(_cases(), k=10)
    again = rerank_fit.fit(list(reversed(_cases())), k=10)  # order of cases does not matter
    assert first.weights == again.weights and first.passes == again.passes


def test_the_fast_objective_is_the_order_search_uses() -> None:
    """The fit's matrix objective against rerank.order on varied cases and weightings, ties and
    named parts included: what is fitted is what runs."""
    cases = []
    for i in range(30):
        rows = []
        for j in range(8):
            value = ((i * 7 + j * 13) % 11) / 10
            rows.append((_features(round(1 - j / 10, 3), term_coverage=value, phrase=(j % 3) / 2,
                                   identifiers=float(j == (i % 8)), section=value / 2, proximity=(j % 2) / 3),
                         j == (i * 3) % 8))
        cases.append(_case(rows, tuple(j == 5 and i % 4 == 0 for j in range(8))))
    prepared = [rerank_fit._matrix(c) for c in cases]
    for weights in (rerank.WEIGHTS, rerank_fit.START, {**ZERO, "identifiers": 0.35, "section": 1.0}):
        assert rerank_fit._fast_objective(prepared, weights, 3) == pytest.approx(rerank_fit.objective(cases, weights, 3))


def test_cases_without_a_relevant_candidate_count_as_zero_and_nothing_to_fit_is_refused() -> None:
    hopeless = _case([(_features(1.0), False), (_features(0.5), False)])
    fitted = rerank_fit.fit([*_cases(), hopeless], k=10)
    assert fitted.objective == pytest.approx(12 / 13)
    with pytest.raises(ValueError, match="no labelled questions"):
        rerank_fit.fit([], k=10)


@pytest.mark.parametrize("weights", [
    None, [], {"term_coverage": 0.3}, {**rerank.WEIGHTS, "extra": 1.0}, {**rerank.WEIGHTS, "phrase": -0.1},
    {**rerank.WEIGHTS, "phrase": float("nan")}, {**rerank.WEIGHTS, "phrase": float("inf")},
    {**rerank.WEIGHTS, "phrase": True}, {**rerank.WEIGHTS, "phrase": "0.1"}, {**rerank.WEIGHTS, "phrase": 1e9},
])
def test_hostile_weights_are_refused(weights: object) -> None:
    with pytest.raises(ValueError, match="rerank weight"):
        rerank.check_weights(weights)


def test_weights_change_the_order_search_gives() -> None:
    candidates = [rerank.Candidate("travel approval rules", ["Costs"], 0.032, 0.2),
                  rerank.Candidate("form 12-B is filed", ["Approval"], 0.030, 0.2)]
    by_section = {**ZERO, "section": 1.0}
    assert [i for i, _, _ in rerank.rerank("approval of form 12-B", candidates, ZERO)] == [0, 1]
    assert [i for i, _, _ in rerank.rerank("approval of form 12-B", candidates, by_section)] == [1, 0]


@pytest.fixture(scope="module")
def demo(pg_server_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, str]]:
    with synced_demo(pg_server_url, tmp_path_factory.mktemp("rerank-fit")) as (config, _, url):
        yield config, url


def test_calibrate_rerank_stores_weights_that_later_searches_use_and_log(capsys, demo) -> None:
    config, url = demo
    question = ["search", "Who approves a business trip abroad?", "--groups", "all-staff", "-k", "3", "--config", str(config)]
    code, before = run_cli(capsys, *question)
    assert code == 0
    assert _logged_rerank(url, before["log_id"]) == {"calibration_id": None, "weights": rerank.WEIGHTS}

    code, dry = run_cli(capsys, "calibrate-rerank", str(DEMO_DIR / "eval.yaml"), "--dry-run", "--config", str(config))
    assert code == 0 and dry["stored"] is False and query(url, "SELECT count(*) FROM rerank_calibrations") == [(0,)]
    code, fitted = run_cli(capsys, "calibrate-rerank", str(DEMO_DIR / "eval.yaml"), "--config", str(config))
    assert code == 0 and fitted["stored"] is True
    assert fitted["weights"] == dry["weights"]  # the same split gives the same weights
    assert fitted["calibration_cases"] > 0 and fitted["calibration_after"] >= fitted["calibration_before"]
    [(stored,)] = query(url, "SELECT weights FROM rerank_calibrations WHERE id = %s", fitted["calibration_id"])
    assert stored == fitted["weights"]

    code, after = run_cli(capsys, *question)
    assert code == 0
    assert _logged_rerank(url, after["log_id"]) == {"calibration_id": fitted["calibration_id"], "weights": fitted["weights"]}
    # the search logged before the calibration replays with the weights in force then
    code, explained = run_cli(capsys, "explain", str(before["log_id"]), "--config", str(config))
    assert code == 0 and explained["replay"]["identical"] is True


def test_a_damaged_stored_calibration_fails_searches_naming_it_instead_of_reordering(capsys, demo, embedder) -> None:
    config, url = demo
    [(model_id,)] = query(url, "SELECT DISTINCT model_id FROM document_versions WHERE status = 'live'")
    [(row_id,)] = rewrite_history(
        url, "INSERT INTO rerank_calibrations (model_id, weights, objective, eval_set, eval_set_sha256, calibration_cases,"
        " held_out_cases, calibration_before, calibration_after, held_out_before, held_out_after)"
        " VALUES (%s, '{\"phrase\": \"lots\"}', 'ndcg@10', 'x', 'x', 1, 1, 0, 0, 0, 0) RETURNING id", model_id)
    try:
        capsys.readouterr()
        assert cli.main(["search", "trip approval", "--groups", "all-staff", "--config", str(config)]) == 2
        assert f"rerank_calibrations row {row_id} is unusable" in capsys.readouterr().err
        with database.connect(url) as conn:  # only the rerank stage reads the weights
            assert search(conn, embedder, "trip approval", ["all-staff"], mode="hybrid", log=False)
    finally:
        rewrite_history(url, "DELETE FROM rerank_calibrations WHERE id = %s RETURNING id", row_id)


def _logged_rerank(url: str, log_id: int) -> dict:
    [(strategy,)] = query(url, "SELECT strategy FROM search_log WHERE id = %s", log_id)
    return strategy["rerank"]


@pytest.mark.parametrize(("content", "message"), [
    ("- id: a\n  as_user: {groups: [all-staff]}\n  question: Who approves trips?\n  expect_source: x.pdf\n  split: report\n",
     "no answerable case is in the calibration half"),
    ("- id: a\n  as_user: {groups: [all-staff]}\n  question: q\n  expect: refused\n  split: calibration\n",
     "no answerable case is in the calibration half"),
    ("- id: a\n  as_user: {groups: [nobody-has-this]}\n  question: Who approves trips?\n  expect_source: x.pdf\n"
     "  split: calibration\n", "none of the 1 calibration cases finds its answering chunk"),
    ("not: [a, list", "not valid YAML"),
    ("\xff\xfe", "not valid YAML"),
])
def test_an_eval_set_it_cannot_fit_on_is_refused_and_nothing_is_stored(capsys, demo, tmp_path: Path, content: str, message: str) -> None:
    config, url = demo
    path = tmp_path / "cases.yaml"
    path.write_bytes(content.encode("utf-8", "surrogateescape") if content != "\xff\xfe" else b"\xff\xfe- broken")
    stored = query(url, "SELECT count(*) FROM rerank_calibrations")
    capsys.readouterr()
    assert cli.main(["calibrate-rerank", str(path), "--config", str(config)]) == 2
    err = capsys.readouterr().err
    assert message in err and str(path) in err
    assert query(url, "SELECT count(*) FROM rerank_calibrations") == stored

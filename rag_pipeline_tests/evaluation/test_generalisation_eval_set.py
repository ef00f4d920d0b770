"""The generalisation set (evalsets/generalisation, issue 23 item 5): questions on documents no
other set uses. This checks the file only (fast, no database, no model): it loads with the
project's loader, meets the class minimums the issue sets, both splits hold answerable and
must-refuse cases of every class, every expected source is a document in its docs/ folder, and
its documents are listed with provenance and licence in MANIFEST.tsv. That each evidence phrase
is inside one parsed chunk is `evalsets/corpus/check.py --config evalsets/generalisation/rag_pipeline.yaml`."""

from __future__ import annotations

import csv
import hashlib
from collections import Counter

from rag_pipeline.config import load_config
from rag_pipeline.evaluation.evaluate import load_eval_set
from rag_pipeline_tests.conftest import PROJECT_ROOT

SET = PROJECT_ROOT / "evalsets" / "generalisation"
MINIMUMS = {"refuse": 20, "section": 20, "non-english": 20, "cross-lingual": 20}
CLASSES = {"section", "non-english", "cross-lingual", "paraphrase", "refuse"}


def test_the_set_loads_and_meets_the_class_minimums() -> None:
    cases = load_eval_set(SET / "eval.yaml")
    assert len(cases) >= 120
    counts = Counter(k for c in cases for k in c.classes)
    assert set(counts) <= CLASSES
    for name, least in MINIMUMS.items():
        assert counts[name] >= least, (name, counts[name])
    for case in cases:
        assert case.classes, case.id
        assert ("refuse" in case.classes) == case.expect_refused, case.id
        assert case.expect_refused or (case.expect_source and case.expect_evidence), case.id


def test_both_splits_hold_every_class_and_both_kinds_of_case() -> None:
    cases = load_eval_set(SET / "eval.yaml")
    assert {c.split for c in cases} == {"calibration", "report"}
    for split in ("calibration", "report"):
        half = [c for c in cases if c.split == split]
        assert sum(c.expect_refused for c in half) >= 10 and sum(not c.expect_refused for c in half) >= 40
        counts = Counter(k for c in half for k in c.classes)
        assert set(counts) == CLASSES and min(counts.values()) >= 10, (split, counts)  # figures per class on each half
    by_document = Counter((c.expect_source, c.split) for c in cases if not c.expect_refused)
    for source in {c.expect_source for c in cases if not c.expect_refused}:
        assert by_document[(source, "calibration")] and by_document[(source, "report")], source


def test_every_source_is_a_document_of_the_set_with_provenance_and_licence() -> None:
    config = load_config(SET / "rag_pipeline.yaml")
    (source,) = config.sources
    assert source.path == SET / "docs" and source.default_groups == ("all-staff",)
    assert config.evaluation is not None and config.evaluation.eval_set == SET / "eval.yaml"
    assert config.state_dir == SET / ".rag_pipeline"
    documents = {p.name for p in (SET / "docs").iterdir()}
    cases = load_eval_set(SET / "eval.yaml")
    assert {c.expect_source for c in cases if c.expect_source} <= documents
    with (SET / "MANIFEST.tsv").open(encoding="utf-8") as handle:
        manifest = {row["file"]: row for row in csv.DictReader(handle, delimiter="\t")}
    assert set(manifest) == documents
    assert all(row["licence"] and row["source"] and row["package"] for row in manifest.values())
    for name, row in manifest.items():  # the file is the one whose provenance is recorded
        assert hashlib.sha256((SET / "docs" / name).read_bytes()).hexdigest() == row["sha256"], name
    languages = Counter(row["language"] for row in manifest.values())
    assert languages["cs"] and languages["de"] and languages["fr"] and languages["en"]


def test_no_document_of_the_set_is_in_another_set() -> None:
    mine = {p.name for p in (SET / "docs").iterdir()}
    for other in (PROJECT_ROOT / "evalsets").iterdir():
        if other != SET and (other / "eval.yaml").exists():
            text = (other / "eval.yaml").read_text(encoding="utf-8")
            assert not any(name in text for name in mine), other

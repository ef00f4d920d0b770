"""The parse worker's time limit is the worker's own CPU time on one file: a busy machine must
not turn normal files into timeouts, a timeout must not make the next file time out, and a
file that really needs far more CPU than the limit is still stopped."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from conftest import DEMO_DIR
from helpers import pathological_markdown

from rag_pipeline.parsing.config import ParseLimits
from rag_pipeline.parsing.types import ParseError
from rag_pipeline.parsing.warmup import sample_documents, warm_up
from rag_pipeline.parsing.worker import ParseWorker, ParseWorkerError, process_cpu_seconds


def test_normal_files_parse_under_cpu_load_while_a_pathological_file_is_stopped(cpu_load: None) -> None:
    files = sorted(p for p in DEMO_DIR.joinpath("docs").rglob("*") if p.is_file() and p.name != "_access.yaml")
    assert len(files) >= 6
    with ParseWorker(ParseLimits(max_seconds=2.0, ocr=False)) as worker:
        with pytest.raises(ParseError, match="longer than 2 s of CPU time"):
            worker.parse(pathological_markdown(), "nested.md")
        for path in files:  # the first file after a timeout gets a fresh worker, warmed before timing
            wire = worker.parse(path.read_bytes(), path.name)
            assert wire["elements"], path
        assert worker.starts == 2  # the timeout cost one replacement, not one per later file


def _parser_processes() -> list:
    import multiprocessing

    return [p for p in multiprocessing.active_children() if p.name == "rag-parse-worker"]


def test_a_parser_started_ahead_is_one_process_replaced_if_it_dies_while_starting() -> None:
    """`start` launches the parser and returns, so its imports run while the caller loads
    something else; starting again adds no process. A parser killed while it starts (the OOM
    killer, an operator) is replaced by the first parse, which then succeeds; none is left
    behind."""
    with ParseWorker(ParseLimits(ocr=False)) as worker:
        worker.start()
        worker.start()
        [starting] = _parser_processes()
        starting.kill()
        starting.join(10)
        wire = worker.parse(b"# Title\n\nBody text of the document.\n", "doc.md")
        assert [e["text"] for e in wire["elements"]] == ["Title", "Body text of the document."]
        assert worker.starts == 2 and len(_parser_processes()) == 1
    assert _parser_processes() == []


def test_the_parser_process_runs_without_torch_and_parses_as_parse_document_does() -> None:
    """torch, which the embedding model needs and spaCy's thinc imports whenever it is
    installed, is kept out of the parser process (seconds and 185 MiB of every parser's start,
    spent while the run's process loads torch for the model). Every demo document (PDF, DOCX,
    HTML, Markdown) parses there exactly as `parse_document` parses it beside torch."""
    import torch  # noqa: F401 -- this side has torch, as a process that also embeds does

    from rag_pipeline.parsing import parse_document

    limits = ParseLimits(ocr=False)
    files = sorted(p for p in DEMO_DIR.joinpath("docs").rglob("*") if p.is_file() and p.name != "_access.yaml")
    assert {p.suffix for p in files} >= {".pdf", ".docx", ".html", ".md"}
    with ParseWorker(limits) as worker:
        for path in files:
            data = path.read_bytes()
            assert worker.parse(data, path.name) == parse_document(data, path.name, limits).to_dict(), path
        [parser] = _parser_processes()
        loaded = open(f"/proc/{parser.pid}/maps", encoding="utf-8").read()
    assert "libtorch" not in loaded


def test_a_parser_that_cannot_start_is_a_clear_error_at_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A parser process that dies while starting (here a broken install: a parsing package that
    fails to import) fails the step at once with its exit code and what to check, rather than
    after the start-up allowance of minutes; nothing is left running."""
    (tmp_path / "docx.py").write_text("raise ImportError('damaged installation of python-docx')\n")
    monkeypatch.syspath_prepend(str(tmp_path))  # a spawned process starts from this sys.path
    docx = next(p for p in DEMO_DIR.joinpath("docs").rglob("*.docx"))
    with ParseWorker(ParseLimits(ocr=False)) as worker:
        # Markdown needs none of the heavy stack (issue 28): the parser starts and parses it
        assert worker.parse(b"# Title\n", "doc.md")["elements"]
        with pytest.raises(ParseWorkerError, match=r"exited with code 1 while loading the parsing libraries; check"):
            worker.parse(docx.read_bytes(), docx.name)
    assert _parser_processes() == []


def test_markdown_never_loads_the_heavy_stack_and_its_load_is_not_charged_to_the_next_file() -> None:
    """A parser that only met Markdown has not imported unstructured or PyMuPDF; the first PDF
    or DOCX loads them untimed, so a 3-second CPU limit still parses it (the imports alone take
    longer than that)."""
    files = sorted(p for p in DEMO_DIR.joinpath("docs").rglob("*") if p.suffix in (".pdf", ".docx", ".html"))
    with ParseWorker(ParseLimits(max_seconds=3.0, ocr=False)) as worker:
        assert worker.parse(b"# Title\n\nBody.\n", "doc.md")["elements"]
        [parser] = _parser_processes()
        loaded = open(f"/proc/{parser.pid}/maps", encoding="utf-8").read()
        assert "mupdf" not in loaded.lower()  # PyMuPDF not loaded (unstructured is pure Python: see test_markdown_direct)
        for path in files:
            assert worker.parse(path.read_bytes(), path.name)["elements"], path
        assert worker.starts == 1


def test_warm_up_parses_a_sample_of_every_supported_kind() -> None:
    from rag_pipeline.parsing import SUPPORTED_SUFFIXES

    samples = sample_documents()
    suffixes = {name[name.rindex("."):] for name in samples}
    # images load the PDF stack (the .pdf sample) and have text only through OCR, which warm-up leaves off
    images = (".jpg", ".jpeg", ".png", ".tif", ".tiff")
    assert {s for s in SUPPORTED_SUFFIXES if s not in (".htm", ".markdown", *images)} <= suffixes
    assert warm_up() == []


def test_cpu_seconds_are_read_for_a_live_process_and_none_for_a_gone_one() -> None:
    proc = subprocess.Popen([sys.executable, "-c", "import time\nx=0\nfor i in range(3_000_000): x+=i\ntime.sleep(30)"])
    try:
        first = process_cpu_seconds(proc.pid)
        assert first is not None and first >= 0
    finally:
        proc.kill()
        proc.wait()
    assert process_cpu_seconds(proc.pid) is None

"""The parse pool: parser processes side by side, as many as the machine has cores, started
only when the work left outlasts a parser's start-up. Real parser processes and real corpus
files throughout; what a user relies on is that every file comes back parsed exactly as one
parser would parse it, that a stuck file holds up only its own worker, that a small sync pays
for one parser only, and that stopping early leaves nothing running."""

from __future__ import annotations

import json
import multiprocessing
import os
import shutil
import signal
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import CORPUS, write_config
from helpers import pathological_markdown, query, wait_until

from rag_pipeline.parsing import parse_document
from rag_pipeline.parsing.config import ParseLimits
from rag_pipeline.parsing.pool import (
    MIN_IDLE_CORES,
    WORKER_MEMORY_BUDGET,
    IdleCpu,
    Job,
    ParsePool,
    machine_workers,
    room_for_another,
    worth_another,
)
from rag_pipeline.parsing.types import ParseError
from rag_pipeline.parsing.worker import ParseWorkerError

HEAVY_PDF = CORPUS / "docs" / "pdf" / "nist_csf_v1.1_2018-04-16.pdf"  # ~2 s of parsing on one core here
LIMITS = ParseLimits(ocr=False)


def _parser_processes() -> list:
    return [p for p in multiprocessing.active_children() if p.name == "rag-parse-worker"]


def _feeders() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "rag-parse-feeder"]


def test_the_machine_size_is_one_parser_per_usable_core_within_available_memory() -> None:
    size = machine_workers()
    cores = len(os.sched_getaffinity(0))
    available = next(int(line.split()[1]) * 1024 for line in open("/proc/meminfo") if line.startswith("MemAvailable:"))
    assert 1 <= size <= cores
    assert size == max(1, min(cores, available // (1024**3), 16))


def test_another_parser_is_started_only_when_the_work_left_outlasts_its_start_up() -> None:
    # 30 small files left at 10 ms each: 0.3 s of work, a parser takes 3 s to start
    assert not worth_another(elapsed=0.1, completed=10, remaining=30, startup=3.0)
    # 30 large files left at 2 s each
    assert worth_another(elapsed=4.0, completed=2, remaining=30, startup=3.0)
    # nothing left to hand out: never, however slow the files are
    assert not worth_another(elapsed=100.0, completed=1, remaining=0, startup=3.0)
    # a first file still running after 1 s with 10 more waiting
    assert worth_another(elapsed=1.0, completed=0, remaining=10, startup=3.0)


def test_a_parser_is_only_added_on_an_idle_core_with_the_memory_for_it() -> None:
    assert room_for_another(1.0, 4 * WORKER_MEMORY_BUDGET)
    assert not room_for_another(0.2, 4 * WORKER_MEMORY_BUDGET)  # other steps or programs use the cores
    assert not room_for_another(1.0, WORKER_MEMORY_BUDGET // 2)  # the machine is short of memory
    assert room_for_another(None, None)  # nothing to measure with: not held against it


def _proc_stat(path: Path, per_core: list[int], *, aggregate: list[int], stranger: list[int]) -> None:
    """A /proc/stat with the same jiffies (user nice system idle iowait irq softirq steal guest
    guest_nice) on every core this process may use, the all-core line, and a core it may not."""
    usable = sorted(os.sched_getaffinity(0))
    lines = [f"cpu  {' '.join(map(str, aggregate))}"]
    lines += [f"cpu{n} {' '.join(map(str, per_core))}" for n in usable]
    lines += [f"cpu{max(usable) + 1000} {' '.join(map(str, stranger))}", "intr 12345 0 0", "ctxt 999"]
    path.write_text("\n".join(lines) + "\n", encoding="ascii")


def test_idle_cores_are_the_idle_share_of_the_usable_cores_between_two_readings(tmp_path: Path) -> None:
    """Snapshots of /proc/stat, not the machine's own load: busy cores read as none idle (no
    parser is added), idle and iowait count as idle, guest time (already in user time), the
    all-core line and cores this process may not use are left out."""
    cores = len(os.sched_getaffinity(0))
    stat = tmp_path / "stat"
    _proc_stat(stat, [1000, 0, 0, 1000, 0, 0, 0, 0, 0, 0], aggregate=[0] * 10, stranger=[0] * 10)
    idle = IdleCpu(stat=str(stat), window=0)
    # every usable core busy since the first reading; the all-core line and a core of another
    # process's affinity idle all along
    _proc_stat(stat, [1100, 0, 0, 1000, 0, 0, 0, 0, 500, 0], aggregate=[0, 0, 0, 9000, 0, 0, 0, 0, 0, 0],
               stranger=[0, 0, 0, 9000, 0, 0, 0, 0, 0, 0])
    assert idle.cores() == 0.0 < MIN_IDLE_CORES
    assert not room_for_another(idle.cores(), 4 * WORKER_MEMORY_BUDGET)
    # then each core half idle: 30 jiffies idle and 20 waiting for the disk of every 100
    _proc_stat(stat, [1130, 10, 10, 1030, 20, 0, 0, 0, 1500, 0], aggregate=[0] * 10, stranger=[0] * 10)
    assert idle.cores() == pytest.approx(0.5 * cores)
    # no time passed on the counters: the last measure stands
    assert idle.cores() == pytest.approx(0.5 * cores)


def test_idle_cores_are_measured_over_a_window_and_unknown_without_proc_stat(tmp_path: Path) -> None:
    stat = tmp_path / "stat"
    _proc_stat(stat, [1000, 0, 0, 1000, 0, 0, 0, 0, 0, 0], aggregate=[0] * 10, stranger=[0] * 10)
    waiting = IdleCpu(stat=str(stat), window=3600)
    _proc_stat(stat, [1100, 0, 0, 1000, 0, 0, 0, 0, 0, 0], aggregate=[0] * 10, stranger=[0] * 10)
    assert waiting.cores() is None  # within its window: nothing measured yet, not held against a parser
    missing = IdleCpu(stat=str(tmp_path / "absent"), window=0)
    assert missing.cores() is None and room_for_another(missing.cores(), 4 * WORKER_MEMORY_BUDGET)


def test_an_auto_pool_adds_no_parser_while_every_core_is_busy(cpu_load: None) -> None:
    """parse_workers auto on a machine whose cores are all taken (the multiprocess executor
    running other shards, another run): large files that would warrant a second parser on an
    idle machine still go through one, and all are parsed."""
    data = HEAVY_PDF.read_bytes()
    jobs = [Job(i, data, f"nist-{i}.pdf") for i in range(3)]
    with ParsePool(LIMITS) as pool:
        results = [outcome for _, outcome in pool.parse_all(jobs, total=len(jobs))]
        assert len(results) == 3 and all(r["elements"] for r in results)
        assert pool.most_workers == 1 and pool.starts == 1


def test_a_pool_of_two_parses_large_files_side_by_side_exactly_as_one_parser_does() -> None:
    data = HEAVY_PDF.read_bytes()
    expected = parse_document(data, "nist.pdf", LIMITS).to_dict()
    jobs = [Job(i, data, f"nist-{i}.pdf") for i in range(8)]
    with ParsePool(LIMITS, size=2) as pool:
        results = dict((job.tag, outcome) for job, outcome in pool.parse_all(iter(jobs), total=len(jobs)))
        assert sorted(results) == list(range(8))
        assert all(outcome == expected for outcome in results.values())
        assert pool.most_workers == 2 and pool.starts == 2
        warm = _parser_processes()  # the parsers stay warm for the next call
        assert len(warm) == 2 and all(p.is_alive() for p in warm)
        # the next shard uses both warm parsers and starts none
        again = list(pool.parse_all([Job("x", b"# Title\n\nBody.\n", "x.md")], total=1))
        assert again[0][1]["elements"][0]["text"] == "Title" and pool.starts == 2
    assert _parser_processes() == [] and _feeders() == []


def test_a_small_shard_starts_one_parser_however_large_the_pool_may_grow() -> None:
    """Thirty short Markdown files (an edit, a small folder): a second parser's start-up would
    cost more than it saves, so none is started."""
    jobs = [Job(i, f"# Note {i}\n\nText of note {i}.\n".encode(), f"note-{i}.md") for i in range(30)]
    with ParsePool(LIMITS, size=4) as pool:
        results = {job.tag: outcome for job, outcome in pool.parse_all(jobs, total=len(jobs))}
        assert [results[i]["elements"][1]["text"] for i in range(30)] == [f"Text of note {i}." for i in range(30)]
        assert pool.starts == 1 and pool.most_workers == 1


def test_a_stuck_file_holds_up_only_its_own_parser_and_is_stopped_at_the_limit() -> None:
    """A hostile file that would take minutes is stopped at its CPU limit, in its worker; the
    other files are parsed by the second worker meanwhile and come back first."""
    data = (CORPUS / "docs" / "pdf" / "federal_register_2020-17221.pdf").read_bytes()
    jobs = [Job("nested", pathological_markdown(), "nested.md")] + [Job(i, data, f"fr-{i}.pdf") for i in range(6)]
    order = []
    with ParsePool(ParseLimits(ocr=False, max_seconds=20.0), size=2) as pool:
        for job, outcome in pool.parse_all(jobs, total=len(jobs)):
            order.append(job.tag)
            if job.tag == "nested":
                assert isinstance(outcome, ParseError) and "longer than 20 s of CPU time" in str(outcome)
            else:
                assert outcome["page_count"] and outcome["elements"]
        assert order[-1] == "nested" and sorted(order[:-1]) == list(range(6))
        assert pool.starts == 2 and pool.most_workers == 2
        # the stuck worker was replaced on demand: the next file is parsed
        [(_, outcome)] = list(pool.parse_all([Job("after", b"# After\n", "after.md")], total=1))
        assert outcome["elements"][0]["text"] == "After"


def test_stopping_early_stops_the_parsers_and_the_pool_can_be_used_again() -> None:
    """A caller that stops reading (its database went away, the step was cancelled) leaves no
    parser working on files nobody will store, and no thread behind."""
    data = HEAVY_PDF.read_bytes()
    read: list[int] = []

    def jobs() -> Iterator[Job]:
        for i in range(20):
            read.append(i)
            yield Job(i, data, f"nist-{i}.pdf")

    with ParsePool(LIMITS, size=2) as pool:
        results = pool.parse_all(jobs(), total=20)
        first_job, first = next(results)
        assert first["elements"]
        working = [p for p in _parser_processes() if p.is_alive()]
        read_before = len(read)
        results.close()
        # not the ~40 s of parsing left, waited for in full: no further file is read, and the
        # parsers are killed in the middle of their files rather than left to finish them
        assert len(read) == read_before < 20
        wait_until(lambda: not [p for p in _parser_processes() if p.is_alive()], timeout=30,
                   what="the interrupted parsers to end")
        assert working and all(p.exitcode == -signal.SIGKILL for p in working), [p.exitcode for p in working]
        [(_, outcome)] = list(pool.parse_all([Job("again", b"# Again\n", "again.md")], total=1))
        assert outcome["elements"][0]["text"] == "Again"


def test_a_pool_whose_parsers_cannot_start_is_a_clear_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "docx.py").write_text("raise ImportError('damaged installation of python-docx')\n")
    monkeypatch.syspath_prepend(str(tmp_path))  # a spawned parser starts from this sys.path
    docx = (CORPUS / "docs" / "docx" / "docling_word_sample.docx").read_bytes()
    with ParsePool(LIMITS, size=2) as pool:
        # Markdown loads no DOCX library (issue 28): the first DOCX finds the damage
        with pytest.raises(ParseWorkerError, match=r"exited with code 1 while loading the parsing libraries; check"):
            list(pool.parse_all([Job(i, docx, f"{i}.docx") for i in range(5)], total=5))
    assert _feeders() == [] and _parser_processes() == []  # nothing left behind once the pool is closed


def test_a_sync_with_two_parsers_stores_what_one_parser_gives_and_quarantines_bad_files(
        tmp_path: Path, db_url: str, embedder) -> None:
    """Through the parse step: large real PDFs, a truncated PDF and a blob that vanished from
    the blob store after planning. Every good file is stored exactly as parse_document parses
    it (after redaction), whatever order the parsers finished in; the two bad ones are
    quarantined at the right stage; the step reports that two parsers worked."""
    from rag_pipeline import store
    from rag_pipeline.config import load_config
    from rag_pipeline.sync import parse, plan
    from rag_pipeline.sync.context import SyncContext

    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "_access.yaml").write_text("groups: [all-staff]\n")
    data = HEAVY_PDF.read_bytes()
    for i in range(6):  # distinct files: one byte appended after %%EOF changes the checksum, not the content
        (docs / f"nist-{i}.pdf").write_bytes(data + b"\n" * (i + 1))
    (docs / "truncated.pdf").write_bytes(data[: len(data) // 3])
    shutil.copy(CORPUS / "docs" / "md" / "openapi_spec_3.1.0.md", docs / "vanishing.md")
    config = load_config(write_config(tmp_path, db_url, docs=docs, extra="parse_workers: 2\n"))
    assert config.parse_workers == 2
    ctx = SyncContext(config=config, db_url=db_url, run_id="pool-1")
    with ctx.connect() as conn:
        model_id = store.models.register_model(conn, embedder.identity.to_dict())
    plan.plan_run(ctx, model_id)
    [[blob]] = query(db_url, "SELECT blob_sha256 FROM run_items WHERE run_id = %s AND uri = 'vanishing.md'", ctx.run_id)
    next(ctx.config.blob_dir.rglob(blob)).unlink()

    result = parse.parse_items(ctx)

    assert result.counts["parsed"] == 6 and result.counts["quarantined"] == 2 and result.parsers == 2
    stages = dict(query(db_url, "SELECT uri, stage FROM quarantine WHERE run_id = %s", ctx.run_id))
    assert stages == {"truncated.pdf": "parse", "vanishing.md": "read"}
    expected = json.loads(json.dumps(parse.redacted(parse_document(data + b"\n", "nist-0.pdf", LIMITS)).to_dict()))
    stored = query(db_url, "SELECT uri, parsed FROM run_items WHERE run_id = %s AND stage = 'parsed' ORDER BY uri", ctx.run_id)
    assert [uri for uri, _ in stored] == [f"nist-{i}.pdf" for i in range(6)]
    assert all(parsed["elements"] == expected["elements"] for _, parsed in stored)
    assert all(parsed["page_count"] == expected["page_count"] for _, parsed in stored)


def test_a_job_that_cannot_even_be_sent_to_a_parser_is_refused_and_the_rest_go_on() -> None:
    """Whatever goes wrong on the run's side of a parser's pipe (here bytes that cannot be
    pickled) comes back as that file's error: the pool never waits for an answer that cannot
    come, and the next file is parsed."""
    jobs = [Job("broken", lambda: None, "broken.md"), Job("fine", b"# Fine\n\nText.\n", "fine.md")]  # type: ignore[arg-type]
    outcomes: dict = {}
    with ParsePool(LIMITS, size=1) as pool:
        reader = threading.Thread(target=lambda: outcomes.update((j.tag, o) for j, o in pool.parse_all(jobs, total=2)),
                                  daemon=True)
        reader.start()
        reader.join(120)  # a pool that waited for ever would hang the suite: fail instead
        assert not reader.is_alive(), "the pool is still waiting for an answer that cannot come"
    assert isinstance(outcomes["broken"], ParseError) and "parser failed unexpectedly" in str(outcomes["broken"])
    assert outcomes["fine"]["elements"][0]["text"] == "Fine"

"""Where a sync's time goes: every core step timed on a real folder, into a fresh database.

Syncs a folder (default: the born-digital documents of ../shared/corpus plus the demo corpus)
through the same core steps the Dagster job runs (plan, parse, clean, chunk, embed, stage,
gate, publish) and prints seconds per step, documents/s, chunks/s and peak RSS. Baseline,
measured in the same run: the model alone encoding the same chunk texts (chunks/s), so the
ratio says how much of a sync is embedding and how much is everything else. A second sync of
the unchanged folder shows the no-op cost (listing and hashing only).

    python bench/bench_sync.py                      # demo + shared corpus PDF/DOCX/PPTX/HTML/MD <= 1 MB
    python bench/bench_sync.py --docs some/folder   # any folder (give it an _access.yaml)
    python bench/bench_sync.py --overlap            # also: what parsing beside encoding would save
    python bench/bench_sync.py --parse-workers 1    # one parser process (the default is auto)

`--overlap` measures, after the sync, what running the parser beside the encoder (issue 12's
"parsing overlaps encoding") could save on this machine: the parser process (warm) parsing every
file alone, the model encoding every chunk input alone, and both at once (the parser fed from a
thread while the model encodes). The saving is (parse + encode - both at once) / (parse +
encode); it is the most an overlapping pipeline could gain, before any cost of its own.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("UNSTRUCTURED_DISABLE_NOTICE", "1")

from rag_pipeline import store
from rag_pipeline.chunking.chunks import section_prefix
from rag_pipeline.config import Config, config_from_dict
from rag_pipeline.embedding import load_embedder
from rag_pipeline.evaluation.config import DEFAULT_THRESHOLDS
from rag_pipeline.parsing.types import ParseError
from rag_pipeline.parsing.worker import ParseWorker
from rag_pipeline.sync import chunk, clean, embed, gate, parse, plan, publish, stage
from rag_pipeline.sync.context import SyncContext, prepare_database

ROOT = Path(__file__).resolve().parent.parent
CORPUS = Path(os.environ.get("RAG_CORPUS_DIR", ROOT.parent / "shared" / "corpus"))


def build_default_folder(target: Path, max_bytes: int) -> Path:
    """The demo corpus plus the shared corpus's born-digital documents up to `max_bytes` each,
    all visible to one group."""
    shutil.copytree(ROOT / "demo" / "docs", target)
    shared = target / "shared"
    for kind in ("pdf", "docx", "pptx", "html", "md"):
        for path in sorted((CORPUS / "docs" / kind).glob("*")):
            if (path.suffix in (".pdf", ".docx", ".pptx", ".html", ".md") and not path.name.endswith(".expected.html")
                    and path.stat().st_size <= max_bytes):
                (shared / kind).mkdir(parents=True, exist_ok=True)
                shutil.copy(path, shared / kind / path.name)
    (shared / "_access.yaml").write_text("groups: [all-staff]\n")
    return target


def bench_config(work: Path, docs: Path) -> Config:
    """One folder source with state under `work`. The gate runs (its searches are timed) but only
    ACL leaks and superseded hits can fail it: every bound is 0, since the demo eval set's
    questions are not about a bench folder."""
    return config_from_dict(
        {"state_dir": str(work / "state"), "sources": [{"name": "bench", "path": str(docs)}],
         "evaluation": {"eval_set": str(ROOT / "demo" / "eval.yaml"), "k": 5,
                        "thresholds": dict.fromkeys(DEFAULT_THRESHOLDS, 0)}},
        None, root=work,
    )


def timed_run(ctx: SyncContext, embedder, model_id: int) -> dict[str, float]:
    steps = [
        ("plan", lambda: plan.plan_run(ctx, model_id, allow_mass_tombstone=True)),
        ("parse", lambda: parse.parse_items(ctx)),
        ("clean", lambda: clean.clean_items(ctx)),
        ("chunk", lambda: chunk.chunk_items(ctx, embedder)),
        ("embed", lambda: embed.embed_items(ctx, embedder, model_id)),
        ("stage", lambda: stage.stage_items(ctx, model_id)),
        ("gate", lambda: gate.run_gate(ctx, embedder)),
        ("publish", lambda: publish.publish_run(ctx)),
    ]
    seconds: dict[str, float] = {}
    for name, step in steps:
        started = time.perf_counter()
        step()
        seconds[name] = time.perf_counter() - started
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=Path, help="folder to sync (default: demo + shared corpus)")
    parser.add_argument("--max-mb", type=float, default=1.0, help="default folder: skip corpus files larger than this")
    parser.add_argument("--overlap", action="store_true", help="also measure parsing beside encoding (see above)")
    parser.add_argument("--parse-workers", default="auto", help="parser processes: auto (default) or a number")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="rag-bench-sync-"))
    work.chmod(0o755)
    try:
        docs = args.docs.resolve() if args.docs else build_default_folder(work / "docs", int(args.max_mb * 1e6))
        config = bench_config(work, docs)
        if args.parse_workers != "auto":
            config = config.model_copy(update={"parse_workers": int(args.parse_workers)})
        started = time.perf_counter()
        url = prepare_database(config)
        embedder = load_embedder()
        setup_s = time.perf_counter() - started
        with SyncContext(config, url, "bench-1").connect() as conn:
            model_id = store.models.register_model(conn, embedder.identity.to_dict())
        first = timed_run(SyncContext(config, url, "bench-1"), embedder, model_id)
        with SyncContext(config, url, "bench-1").connect() as conn:
            run = store.runs.get_run(conn, "bench-1")
            # what the embed step encodes: the stored prefix (identity line, section path) and the text
            texts = [(r[2] if r[2] is not None else section_prefix(r[0])) + r[1]
                     for r in conn.execute("SELECT section_path, text, search_prefix FROM chunks ORDER BY id")]
            pages = conn.execute("SELECT coalesce(sum((counts->'parse'->>'pages')::int), 0) FROM runs").fetchone()[0]
        second = timed_run(SyncContext(config, url, "bench-2"), embedder, model_id)
        started = time.perf_counter()
        embedder.encode(texts)
        baseline_s = time.perf_counter() - started
        report(first, second, run, len(texts), pages, setup_s, baseline_s)
        if args.overlap:
            overlap(config, docs, embedder, texts)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def report(first: dict, second: dict, run: dict, chunks: int, pages: int, setup_s: float, baseline_s: float) -> None:
    total = sum(first.values())
    documents = run["counts"]["plan"].get("new", 0)
    print(f"setup (embedded PostgreSQL start + migrate, model load): {setup_s:.1f} s")
    print(f"first sync: {documents} documents, {pages} pages, {chunks} chunks in {total:.1f} s "
          f"({documents / total:.2f} documents/s, {chunks / total:.1f} chunks/s)")
    print(f"{'step':<8} {'seconds':>8} {'share':>6}")
    for name, seconds in first.items():
        print(f"{name:<8} {seconds:8.2f} {seconds / total:6.1%}")
    print(f"baseline: the model alone encodes the same {chunks} chunks in {baseline_s:.1f} s "
          f"({chunks / baseline_s:.1f} chunks/s); whole sync / encoding alone = {total / baseline_s:.2f}x")
    print(f"embed step reused {run['counts'].get('embed', {}).get('reused', 0)} stored vectors")
    print(f"second sync of the unchanged folder (no-op): {sum(second.values()):.1f} s "
          f"(plan {second['plan']:.2f} s, gate {second['gate']:.2f} s)")
    print(f"peak RSS of this process: {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB "
          "(the parse worker process is separate)")


def parse_all(worker: ParseWorker, files: list[Path]) -> None:
    for path in files:
        try:
            worker.parse(path.read_bytes(), path.name)
        except ParseError:
            pass  # a refused file costs what it costs in a sync too


def overlap(config: Config, docs: Path, embedder, texts: list[str]) -> None:
    """Parse alone, encode alone, both at once (see the module docstring); OCR as configured."""
    files = sorted(p for p in docs.rglob("*") if p.is_file() and not p.name.startswith("_"))
    with ParseWorker(config.limits) as worker:
        worker.parse(b"# warm\n\nup\n", "warm.md")  # start-up is not what is compared
        started = time.perf_counter()
        parse_all(worker, files)
        parse_s = time.perf_counter() - started
        started = time.perf_counter()
        embedder.encode(texts)
        encode_s = time.perf_counter() - started
        parsed_at: list[float] = []
        started = time.perf_counter()
        feeder = threading.Thread(target=lambda: (parse_all(worker, files), parsed_at.append(time.perf_counter())))
        feeder.start()
        embedder.encode(texts)
        encoded_at = time.perf_counter()
        feeder.join()
        both_s = max(encoded_at, parsed_at[0]) - started
    serial = parse_s + encode_s
    print(f"\noverlap ({len(files)} files, {len(texts)} chunk inputs, {os.cpu_count()} CPUs, "
          f"torch threads {_torch_threads()}):")
    print(f"  parse alone {parse_s:.1f} s, encode alone {encode_s:.1f} s, one after the other {serial:.1f} s")
    print(f"  both at once {both_s:.1f} s (parse done at {parsed_at[0] - started:.1f} s, "
          f"encode at {encoded_at - started:.1f} s)")
    print(f"  overlap would save {serial - both_s:.1f} s = {(serial - both_s) / serial:.1%} of parse + encode "
          f"(the most it could: {min(parse_s, encode_s) / serial:.1%}, if the two did not compete for the cores)")


def _torch_threads() -> int:
    import torch

    return torch.get_num_threads()


if __name__ == "__main__":
    main()

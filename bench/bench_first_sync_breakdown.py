"""Where an initial sync's time goes, per text: the generated corpus (bench/generated_corpus.py,
real SciFact text) synced into a fresh embedded database through the core steps (bench_sync's
`timed_run`: plan .. publish), instrumented.

Prints per size: seconds per step; texts, tokens per text (mean, p95), padding share over all
batches and its p95 per batch, texts per batch; encode seconds per 1,000 real tokens; token ids
the chunk step computed and the encoder reused, and the tokenising each step did; the parse of
Markdown against the same text as plain .txt (in-process `parse_document`, best of 2); stage
(COPY) seconds per chunk; and threads while encoding: the encoder's intra-op threads, cores
used by this process, by the parse workers and by PostgreSQL during the embed step and during
the stage step (CPU seconds / wall seconds, from /proc; PostgreSQL's backends counted whenever
they opened or closed). Run it on an otherwise idle machine: every PostgreSQL process counts.
Figures only; nothing is asserted.

    python bench/bench_first_sync_breakdown.py                   # 200 and 1,000 documents x 3 sections
    python bench/bench_first_sync_breakdown.py --docs 200 --json /tmp/breakdown.json
    python bench/bench_first_sync_breakdown.py --docs 200 --no-chunk-helpers   # the chunk step alone in this process
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("UNSTRUCTURED_DISABLE_NOTICE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import generated_corpus
import numpy as np
from bench_sync import timed_run

from rag_pipeline import store
from rag_pipeline.config import config_from_dict
from rag_pipeline.embedding import Embedder
from rag_pipeline.sync.context import SyncContext, prepare_database

TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int, reaped: bool = False) -> float:
    """User + system CPU seconds of a process (0 when it is gone); with `reaped`, plus those of
    its children that have ended (the postmaster's: backends that closed during the window)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    own = int(fields[11]) + int(fields[12])
    return (own + (int(fields[13]) + int(fields[14]) if reaped else 0)) / TICKS


def group_seconds(group: str, pids: list[int]) -> float:
    """CPU seconds of a group; PostgreSQL's listed again, since a step opens backends of its own."""
    if group == "postgres":
        return sum(cpu_seconds(p, reaped=True) for p in processes()["postgres"])
    return sum(cpu_seconds(p) for p in pids)


def processes() -> dict[str, list[int]]:
    """This process's children (parse workers) and PostgreSQL's processes, by group."""
    me, groups = os.getpid(), {"parse workers": [], "postgres": []}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        name, rest = stat[stat.index("(") + 1: stat.rindex(")")], stat.rsplit(")", 1)[1].split()
        if name.startswith("postgres"):
            groups["postgres"].append(int(entry.name))
        elif int(rest[1]) == me:
            groups["parse workers"].append(int(entry.name))
    return groups


class CoreUse:
    """CPU seconds per group over a window (this process, parse workers, PostgreSQL)."""

    def __enter__(self) -> CoreUse:
        self.groups = {"this process": [os.getpid()], **processes()}
        self.start = {g: group_seconds(g, pids) for g, pids in self.groups.items()}
        self.threads = int(next(line.split()[1] for line in Path("/proc/self/status").read_text().splitlines()
                                if line.startswith("Threads:")))
        self.t0 = time.perf_counter()
        return self

    def __exit__(self, *exc: object) -> None:
        wall = time.perf_counter() - self.t0
        self.cores = {g: round((group_seconds(g, pids) - self.start[g]) / wall, 2) for g, pids in self.groups.items()}


def instrumented_steps(ctx: SyncContext, embedder: Embedder, model_id: int) -> tuple[dict[str, float], dict[str, Any]]:
    """The core steps, timed, with the chunk step's tokenising and the cores the embed and stage
    steps used."""
    extra: dict[str, Any] = {"count_s": 0.0, "count_calls": 0}
    count = embedder.count_tokens

    def timed_count(texts: list[str]) -> list[int]:
        started = time.perf_counter()
        try:
            return count(texts)
        finally:
            extra["count_s"] += time.perf_counter() - started
            extra["count_calls"] += 1

    embedder.count_tokens = timed_count  # type: ignore[method-assign]
    from rag_pipeline.sync import embed, stage

    def with_cores(step: Any, key: str) -> Any:
        def measured(*args: Any, **kwargs: Any) -> Any:
            with CoreUse() as use:
                result = step(*args, **kwargs)
            extra[key] = use.cores
            if key == "cores":
                extra["threads_in_process"] = use.threads
            return result
        return measured

    originals = (embed.embed_items, stage.stage_items)
    embed.embed_items = with_cores(embed.embed_items, "cores")  # type: ignore[assignment]
    stage.stage_items = with_cores(stage.stage_items, "cores_stage")  # type: ignore[assignment]
    try:
        seconds = timed_run(ctx, embedder, model_id)
    finally:
        embed.embed_items, stage.stage_items = originals  # type: ignore[assignment]
        del embedder.count_tokens
    return seconds, extra


def parse_times(corpus: Path, sample: int = 50) -> dict[str, float]:
    """In-process parse of `sample` generated Markdown files and of the same bytes as .txt."""
    from rag_pipeline.parsing import parse_document

    files = sorted(corpus.rglob("*.md"))[:sample]
    data = [f.read_bytes() for f in files]
    parse_document(data[0], "warm.md")
    parse_document(data[0], "warm.txt")
    out = {}
    for suffix in ("md", "txt"):
        best = float("inf")
        for _ in range(2):
            started = time.perf_counter()
            for blob in data:
                parse_document(blob, f"doc.{suffix}")
            best = min(best, time.perf_counter() - started)
        out[f"{suffix}_ms_per_doc"] = round(1000 * best / len(data), 2)
    return out


def run_size(docs: int, sections: int, work: Path) -> dict[str, Any]:
    corpus = work / f"corpus-{docs}"
    generated_corpus.write_corpus(corpus, docs, sections)
    config = config_from_dict({"state_dir": str(work / f"state-{docs}"),
                               "sources": [{"name": "generated", "path": str(corpus), "default_groups": ["all-staff"]}]},
                              None, root=work)
    url = prepare_database(config)
    embedder = Embedder()  # fresh: its counters are this sync's
    with SyncContext(config, url, "breakdown").connect() as conn:
        model_id = store.models.register_model(conn, embedder.identity.to_dict())
    load = [os.getloadavg()[0]]
    started = time.perf_counter()
    seconds, extra = instrumented_steps(SyncContext(config, url, "breakdown"), embedder, model_id)
    wall = time.perf_counter() - started
    load.append(os.getloadavg()[0])
    stats = embedder.stats
    with SyncContext(config, url, "breakdown").connect() as conn:
        chunks = conn.execute("SELECT count(*) FROM chunks").fetchone()[0]
        lengths = [r[0] for r in conn.execute("SELECT token_count FROM chunks")]
    choice = embedder.encoded_with
    result = {
        "docs": docs, "sections": sections, "chunks": chunks, "wall_s": round(wall, 2),
        "steps_s": {k: round(v, 2) for k, v in seconds.items()},
        "backend": choice.backend if choice else None,
        "batch_size": embedder.batch_size,
        "tokens_per_text_mean": round(float(np.mean(lengths)), 1) if lengths else 0,
        "tokens_per_text_p95": float(np.percentile(lengths, 95)) if lengths else 0,
        "padding_share": round(stats.padding_share, 4),
        "padding_share_p95_per_batch": round(float(np.percentile(stats.padding_shares, 95)), 4) if stats.batches else 0,
        "texts_per_batch_mean": round(stats.texts / stats.batches, 1) if stats.batches else 0,
        "batches": stats.batches,
        "encode_s": round(stats.encode_s, 2),
        "encode_ms_per_1k_tokens": round(1000 * stats.encode_s / stats.tokens * 1000, 1) if stats.tokens else 0,
        "texts_per_s_encode": round(stats.texts / stats.encode_s, 1) if stats.encode_s else 0,
        "chunk_step_tokenize_s": round(extra["count_s"], 2), "chunk_step_tokenize_calls": extra["count_calls"],
        "encoder_tokenize_s": round(stats.tokenize_s, 3), "ids_reused": stats.ids_reused, "texts_encoded": stats.texts,
        "stage_ms_per_chunk": round(1000 * seconds["stage"] / chunks, 2) if chunks else 0,
        "cores_during_embed": extra.get("cores"), "cores_during_stage": extra.get("cores_stage"),
        "threads_in_process": extra.get("threads_in_process"),
        "encoder_threads": _encoder_threads(embedder),
        "parse": parse_times(corpus), "loadavg": load,
    }
    from rag_pipeline.store.database import stop_server

    stop_server(config.pgdata_dir)
    return result


def _encoder_threads(embedder: Embedder) -> int | None:
    """Intra-op threads of the encoding backend (ONNX Runtime session or torch)."""
    session = getattr(embedder.__dict__.get("_onnx_encoder"), "session", None)
    if session is not None:
        from rag_pipeline.embedding.onnx_backend import cpu_threads

        return cpu_threads()
    if embedder.loaded:
        import torch

        return int(torch.get_num_threads())
    return None


def report(results: list[dict[str, Any]]) -> None:
    rows = [("documents", "docs"), ("chunks (texts)", "chunks"), ("backend", "backend"), ("wall s", "wall_s"),
            ("tokens/text mean", "tokens_per_text_mean"), ("tokens/text p95", "tokens_per_text_p95"),
            ("padding share (all batches)", "padding_share"), ("padding share p95 per batch", "padding_share_p95_per_batch"),
            ("texts per batch", "texts_per_batch_mean"), ("encode s", "encode_s"),
            ("encode ms / 1k tokens", "encode_ms_per_1k_tokens"), ("texts/s while encoding", "texts_per_s_encode"),
            ("chunk step tokenising s", "chunk_step_tokenize_s"), ("encoder tokenising s", "encoder_tokenize_s"),
            ("ids reused / texts encoded", None), ("stage ms / chunk", "stage_ms_per_chunk"),
            ("encoder intra-op threads", "encoder_threads"), ("threads in process", "threads_in_process")]
    print("| figure | " + " | ".join(str(r["docs"]) + " docs" for r in results) + " |")
    print("|---|" + "---:|" * len(results))
    for label, key in rows:
        cells = [f"{r['ids_reused']} / {r['texts_encoded']}" if key is None else str(r[key]) for r in results]
        print(f"| {label} | " + " | ".join(cells) + " |")
    for r in results:
        print(f"{r['docs']} docs: steps {r['steps_s']}; cores during embed {r['cores_during_embed']}; "
              f"during stage {r['cores_during_stage']}; "
              f"parse {r['parse']}; load {r['loadavg']}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, nargs="+", default=[200, 1000])
    parser.add_argument("--sections", type=int, default=3)
    parser.add_argument("--json", type=Path)
    parser.add_argument("--no-chunk-helpers", action="store_true",
                        help="chunk in the step's process alone (the step before sync/chunk_helper.py)")
    args = parser.parse_args()
    if args.no_chunk_helpers:
        from rag_pipeline.sync import chunk_helper

        chunk_helper.MIN_DOCUMENTS = 10**9
    work = Path(tempfile.mkdtemp(prefix="rag-bench-breakdown-"))
    work.chmod(0o755)
    results = []
    try:
        for docs in args.docs:
            results.append(run_size(docs, args.sections, work))
            print(json.dumps(results[-1]), flush=True)
            if args.json:
                args.json.write_text(json.dumps(results, indent=2), encoding="utf-8")
        report(results)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()

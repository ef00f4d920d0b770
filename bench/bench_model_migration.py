"""What a model migration costs (issue 26): its throughput against a plain re-embed of the same
chunks, and search latency while it runs against idle.

A generated corpus of real prose (bench/generated_corpus.py: SciFact abstracts) is synced into a
fresh embedded PostgreSQL with the packaged model (fp32). Then:

1. the baseline: the live chunks' model inputs encoded by the new model and backend (torch
   bf16) in batches of the migration's size, in memory (what any re-embed must pay);
2. `rag-pipeline migrate-model --to all-MiniLM-L6-v2 --backend torch-bf16` in a process of its
   own, nothing else running: its fill figures (chunks, seconds) from its JSON report, against 1;
3. idle: search latency (p50/p95) of a stream of questions, paced (one every --pace seconds);
4. the same migration again (after `--rollback` and `db prune-models`, so every chunk is embedded
   again) while the same paced stream runs; latency until it has switched.

Prints the figures and two ratios: migration throughput / plain re-embed (target >= 0.9x) and
p95 while migrating / p95 idle (target <= 1.5x). On a machine with few cores the migration's
encoder and the searches compete for the same cores, which the second ratio shows as it is.

    python bench/bench_model_migration.py --docs 300
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import yaml  # noqa: E402

from rag_pipeline import store  # noqa: E402
from rag_pipeline.config import load_config  # noqa: E402
from rag_pipeline.embedding import load_embedder  # noqa: E402
from rag_pipeline.evaluation.config import DEFAULT_THRESHOLDS  # noqa: E402
from rag_pipeline.migration.fill import BATCH  # noqa: E402
from rag_pipeline.retrieval.search import search  # noqa: E402
from rag_pipeline.store import database  # noqa: E402
from rag_pipeline.sync.context import SyncContext, prepare_database  # noqa: E402


def build(work: Path, docs: int) -> None:
    """The corpus and a configuration syncing it (every bound of the gate 0: the demo's questions
    are not about this corpus, so only leaks and superseded hits could fail it)."""
    from bench_sync import timed_run
    from generated_corpus import abstracts, write_corpus

    folder = work / "docs"
    write_corpus(folder, docs, 3)
    (folder / "_access.yaml").write_text("groups: [all-staff]\n", encoding="utf-8")
    config_path = work / "rag_pipeline.yaml"
    config_path.write_text(yaml.safe_dump({
        "state_dir": str(work / "state"), "sources": [{"name": "bench", "path": str(folder)}],
        "evaluation": {"eval_set": str(ROOT / "demo" / "eval.yaml"), "k": 5,
                       "thresholds": dict.fromkeys(DEFAULT_THRESHOLDS, 0)}}), encoding="utf-8")
    config = load_config(config_path)
    url = prepare_database(config)
    embedder = load_embedder()
    with SyncContext(config, url, "bench-1").connect() as conn:
        model_id = store.models.register_model(conn, embedder.identity.to_dict())
    timed_run(SyncContext(config, url, "bench-1"), embedder, model_id)
    QUESTIONS[:] = [title for title, _ in abstracts()[:40]]


QUESTIONS: list[str] = []


def latencies(url: str, until: subprocess.Popen | None = None, count: int = 40, pace: float = 0.2) -> list[float]:
    """Seconds per search of the question stream, one started every `pace` seconds at most:
    `count` searches, or as many as run until the process `until` ends (at least 5)."""
    embedder = load_embedder()
    found: list[float] = []
    with database.connect(url) as conn:
        search(conn, embedder, "warm up", ["all-staff"], log=False)
        index = 0
        while (until is None and len(found) < count) or (until is not None and (until.poll() is None or len(found) < 5)):
            question = QUESTIONS[index % len(QUESTIONS)]
            started = time.perf_counter()
            search(conn, embedder, question, ["all-staff"], log=True)
            found.append(time.perf_counter() - started)
            time.sleep(max(0.0, pace - found[-1]))
            index += 1
    return found


class Command:
    """`rag-pipeline ARGS --json` in a process of its own (as in production)."""

    def __init__(self, work: Path, config: Path, *args: str) -> None:
        command = [sys.executable, "-m", "rag_pipeline.cli.main", *args, "--config", str(config), "--json"]
        self.process = subprocess.Popen(command, cwd=work, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                        env={**os.environ, "PYTHONPATH": str(ROOT)})

    def wait_json(self) -> dict:
        out, err = self.process.communicate()
        if self.process.returncode != 0:
            raise SystemExit(f"{self.process.args[3:5]} failed ({self.process.returncode}): {err.strip()[-2000:]}")
        return json.loads(out.strip().splitlines()[-1])


def p(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, default=300, help="generated documents (3 sections each)")
    parser.add_argument("--pace", type=float, default=0.2, help="seconds between the starts of two searches")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="rag-bench-migration-"))
    work.chmod(0o755)
    config_path = work / "rag_pipeline.yaml"
    try:
        build(work, args.docs)
        config = load_config(config_path)
        url = prepare_database(config)
        with database.connect(url) as conn:
            texts = [r[0] for r in conn.execute(
                "SELECT coalesce(c.search_prefix, '') || c.text FROM chunks c JOIN document_versions v"
                " ON v.id = c.version_id WHERE v.status = 'live' ORDER BY c.id")]
        bf16 = load_embedder("all-MiniLM-L6-v2", "cpu", 32, "torch-bf16")
        bf16.encode(texts[:8])  # loaded and measured before anything is timed
        started = time.perf_counter()
        for start in range(0, len(texts), BATCH):
            bf16.encode(texts[start:start + BATCH])
        plain_s = time.perf_counter() - started
        alone = Command(work, config_path, "migrate-model", "--to", "all-MiniLM-L6-v2", "--backend", "torch-bf16").wait_json()
        Command(work, config_path, "migrate-model", "--rollback").wait_json()
        Command(work, config_path, "db", "prune-models").wait_json()
        idle = latencies(url, pace=args.pace)
        again = Command(work, config_path, "migrate-model", "--to", "all-MiniLM-L6-v2", "--backend", "torch-bf16")
        busy = latencies(url, until=again.process, pace=args.pace)
        during = again.wait_json()
        report(len(texts), alone, during, plain_s, idle, busy)
    finally:
        if config_path.exists():
            database.stop_server(load_config(config_path).pgdata_dir)
        shutil.rmtree(work, ignore_errors=True)


def report(chunks: int, alone: dict, during: dict, plain_s: float, idle: list[float], busy: list[float]) -> None:
    plain_rate = chunks / plain_s
    print(f"corpus: {chunks} live chunks; migration to torch-bf16: {alone['status']}, again: {during['status']}")
    print(f"plain re-embed of the same chunks (torch-bf16, batches of {BATCH}, in memory): {plain_s:.1f} s = "
          f"{plain_rate:.1f} chunks/s")
    for name, outcome in (("alone", alone), ("while searches ran", during)):
        fill = outcome["fill"]
        rate = fill["done"] / fill["seconds"] if fill["seconds"] else float("inf")
        print(f"migration fill {name}: {fill['done']} chunks ({fill['embedded']} encoded, {fill['reused']} reused) in "
              f"{fill['seconds']:.1f} s = {rate:.1f} chunks/s = {rate / plain_rate:.2f}x the plain re-embed")
    print("target: migration alone >= 0.9x the plain re-embed")
    print(f"search latency idle: p50 {p(idle, 0.5):.1f} ms, p95 {p(idle, 0.95):.1f} ms ({len(idle)} searches, "
          f"mean {statistics.mean(idle) * 1000:.1f} ms)")
    print(f"search latency while migrating: p50 {p(busy, 0.5):.1f} ms, p95 {p(busy, 0.95):.1f} ms ({len(busy)} searches)")
    print(f"p95 ratio migrating / idle = {p(busy, 0.95) / p(idle, 0.95):.2f}x (target <= 1.5x)")


if __name__ == "__main__":
    main()

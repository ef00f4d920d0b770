"""The ONNX Runtime fp32 graph and run size, side by side on real chunk texts (issue 28, item 3).

Times, in turns on the same texts (the generated corpus' chunks through the project's chunker,
sorted by token length as the Embedder batches them): the plain export (scaled-dot-product
attention, which the graph optimiser cannot fuse) and the fused graph the backend now runs
(`onnx_backend.fused`: Attention, EmbedLayerNormalization, SkipLayerNormalization, BiasGelu),
each run RUN_ROWS texts at a time for several run sizes; with --streams, also the fused graph on
one intra-op thread, its runs spread over one Python thread per core (ONNX Runtime releases the
GIL in `run`) instead of one session using every core. Prints seconds (best of --rounds),
ms per 1,000 real tokens, the ratio against the former setting (plain graph, runs of 32) and
the minimum cosine of each variant's vectors with the former ones. Figures only.

    python bench/bench_onnx_graph.py                       # 300 chunk texts, 3 rounds
    python bench/bench_onnx_graph.py --texts 600 --rows 1,2,4,8,16,32
    python bench/bench_onnx_graph.py --texts 200 --rows 4 --streams
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import generated_corpus
import numpy as np

from rag_pipeline.chunking.chunks import chunk_elements
from rag_pipeline.chunking.document_identity import document_identity
from rag_pipeline.cleaning.clean import clean_elements
from rag_pipeline.common.cpus import usable_cores
from rag_pipeline.embedding import load_embedder, onnx_backend
from rag_pipeline.embedding.digest_cache import weights_digest
from rag_pipeline.embedding.tokens import length_batches, padded, truncated
from rag_pipeline.parsing import parse_document


def chunk_texts(embedder, count: int) -> list[str]:
    """The model input of the first `count` chunks of the generated corpus."""
    texts: list[str] = []
    with tempfile.TemporaryDirectory() as folder:
        for path in generated_corpus.write_corpus(Path(folder), max(1, count // 6 + 1)):
            parsed = parse_document(path.read_bytes(), path.name)
            elements, _ = clean_elements(list(parsed.elements))
            identity = document_identity(parsed.title, elements, path.name)
            texts += [c.search_text for c in chunk_elements(elements, embedder.count_tokens, embedder.max_tokens,
                                                             identity=identity)]
    return texts[:count]


def encoder_feeds(embedder, count: int) -> tuple[list[str], list[dict[str, np.ndarray]], int]:
    """`count` chunk texts, their padded batches as the Embedder cuts them, and their real tokens."""
    texts = chunk_texts(embedder, count)
    ids = [truncated(i, embedder.max_tokens) for i in embedder.token_ids.ids(texts)]
    feeds = [padded([ids[i] for i in batch], embedder.token_ids.pad_id)
             for batch in length_batches([len(i) for i in ids], embedder.batch_size)]
    return texts, feeds, sum(len(i) for i in ids)


def plain_export(embedder) -> Path:
    """The cached plain ONNX export of the model (exported now if missing)."""
    path = onnx_backend.export_path(weights_digest(embedder.path))
    if not path.is_file():
        onnx_backend.export(embedder.model, path)
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--texts", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--rows", default="2,4,8,32", help="run sizes to time (texts per session run)")
    parser.add_argument("--streams", action="store_true",
                        help="also time one-thread sessions run side by side, one per core")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    embedder = load_embedder()
    texts, feeds, tokens = encoder_feeds(embedder, args.texts)
    digest = weights_digest(embedder.path)
    fused = onnx_backend.OnnxEncoder(embedder.model, digest)
    plain_graph = plain_export(embedder)
    plain = onnx_backend.OnnxEncoder.__new__(onnx_backend.OnnxEncoder)
    plain.tokenizer = embedder.model.tokenizer
    plain._open(plain_graph, fused.pooling, fused.max_length, None)
    rows = [int(r) for r in args.rows.split(",")]
    variants = [("plain", 32), *[("fused", r) for r in rows]]
    streams = None
    if args.streams:
        streams = onnx_backend.OnnxEncoder(embedder.model, digest, threads=1)
        pool = ThreadPoolExecutor(usable_cores())
        variants += [("streams", r) for r in rows]

    def side_by_side(feed: dict) -> np.ndarray:
        """One batch's runs on every core at once, each on a one-thread session."""
        run = onnx_backend.RUN_ROWS
        parts = pool.map(lambda i: streams._run({k: v[i:i + run] for k, v in feed.items()}),
                         range(0, len(feed["input_ids"]), run))
        return np.concatenate(list(parts))
    seconds: dict[str, list[float]] = {}
    vectors: dict[str, np.ndarray] = {}
    for _ in range(args.rounds):
        for graph, run in variants:
            onnx_backend.RUN_ROWS = run
            encoder = fused if graph == "fused" else plain
            encode = side_by_side if graph == "streams" else encoder.encode_ids
            started = time.perf_counter()
            out = np.concatenate([encode(feed) for feed in feeds])
            seconds.setdefault(f"{graph} x{run}", []).append(time.perf_counter() - started)
            vectors[f"{graph} x{run}"] = out
    base = min(seconds["plain x32"])
    print(f"{len(texts)} chunk texts, {tokens} tokens ({tokens / len(texts):.1f} per text), {len(feeds)} batches, "
          f"best of {args.rounds}; load {os.getloadavg()[0]:.1f}")
    print("| graph | texts per run | s | ms / 1k tokens | / plain x32 | min cosine with plain x32 |")
    print("|---|---:|---:|---:|---:|---:|")
    figures = {}
    for name, times in seconds.items():
        best = min(times)
        cosine = float((vectors[name] * vectors["plain x32"]).sum(axis=1).min())
        graph, run = name.split(" x")
        figures[name] = {"s": round(best, 3), "ms_per_1k_tokens": round(best * 1e6 / tokens, 1),
                         "ratio": round(best / base, 3), "min_cosine": cosine}
        print(f"| {graph} | {run} | {best:.2f} | {best * 1e6 / tokens:.1f} | {best / base:.3f} | {cosine:.7f} |")
    if args.json:
        args.json.write_text(json.dumps({"texts": len(texts), "tokens": tokens, "figures": figures}, indent=2))


if __name__ == "__main__":
    main()

"""Encoding backends and batching of the configured model, side by side on the same texts.

Prints texts/s for: sentence-transformers' own `encode` in one call (it sorts by characters),
the pipeline's `Embedder.encode` (batches by token count, input order restored), ONNX Runtime
fp32 (embedding/onnx_backend.py) and, on a small subset, torch bfloat16 (emulated unless the CPU
has AVX512-BF16/AMX), plus what `embedding.backend: auto` chooses here. Each candidate's vectors
are compared with the reference fp32 vectors by the identity rule (cosine >= 0.9999, same
top-10 neighbours): the last column says whether the candidate could embed the index under the
fp32 identity (agreement is measured on the probe set of `backends.py`). Figures only.

    python bench/bench_encode.py                  # ~600 texts of mixed length
    python bench/bench_encode.py --texts 200 --bf16-texts 32
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import random
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import numpy as np

from rag_pipeline.embedding import Embedder, load_embedder
from rag_pipeline.embedding.backends import AUTO, ONNX, PROBE_TEXTS, agreement, candidate_backends, native_bf16


def mixed_texts(count: int, seed: int = 12) -> list[str]:
    """Chunk-like texts: mostly short, some near the model's limit (as a real index has)."""
    rng = random.Random(seed)
    texts = []
    for i in range(count):
        parts = rng.randint(1, 3) if rng.random() < 0.7 else rng.randint(6, 14)
        texts.append(f"Section {i}: " + " ".join(rng.choice(PROBE_TEXTS) for _ in range(parts)))
    return texts


def timed(fn: Callable[[], Any]) -> tuple[Any, float]:
    started = time.perf_counter()
    result = fn()
    return result, time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--texts", type=int, default=600)
    parser.add_argument("--bf16-texts", type=int, default=48, help="bf16 is slow on AVX2: time it on fewer texts")
    parser.add_argument("--json", type=Path, help="also write the figures as JSON here")
    args = parser.parse_args()
    import torch

    embedder = load_embedder()
    model = embedder.model
    texts = mixed_texts(args.texts)
    embedder.encode(texts[:8])  # warm-up
    tokens = embedder.count_tokens(texts)
    print(f"torch {torch.__version__}, CPU capability {torch.backends.cpu.get_cpu_capability()}, "
          f"native bf16: {native_bf16()}, threads {torch.get_num_threads()}, candidates: {candidate_backends(native_bf16())}")
    print(f"{len(texts)} texts, {sum(tokens)} tokens (median {int(np.median(tokens))}, max {max(tokens)}), "
          f"batch size {embedder.batch_size}, load average {os.getloadavg()[0]:.1f}")
    bf16_model = copy.deepcopy(model).to(torch.bfloat16)
    onnx = Embedder(backend=ONNX)
    print(f"ONNX: {onnx.choice.summary()}")
    auto = Embedder(backend=AUTO).choice.summary()
    print(f"auto chooses: {auto}", flush=True)
    methods = {
        "torch fp32, token-length batches (Embedder.encode)": embedder.encode,
        "torch fp32, sentence-transformers encode (char sort)": lambda batch: model.encode(
            batch, batch_size=embedder.batch_size, normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False),
        "ONNX Runtime fp32, token-length batches": onnx.encode,
        "torch bf16 (sentence-transformers encode)": lambda batch: bf16_model.encode(
            batch, batch_size=embedder.batch_size, normalize_embeddings=True, convert_to_tensor=True,
            show_progress_bar=False).float().numpy(),
    }
    probe_reference = embedder.encode(list(PROBE_TEXTS))
    seconds: dict[str, tuple[int, float]] = {}
    figures: dict[str, dict[str, Any]] = {}
    print(f"{'encoding':<54} {'texts':>6} {'seconds':>8} {'texts/s':>8} {'min cos':>9} {'top-10':>6} {'fp32 identity':>13}")
    for name, encode in methods.items():
        workload = texts[: args.bf16_texts] if "bf16" in name else texts
        _, elapsed = timed(lambda encode=encode, workload=workload: encode(workload))
        seconds[name] = (len(workload), elapsed)
        agree = agreement(probe_reference, np.asarray(encode(list(PROBE_TEXTS)), dtype=np.float32))
        figures[name] = {"texts": len(workload), "seconds": round(elapsed, 3), "texts_per_s": round(len(workload) / elapsed, 2),
                         "min_cosine": float(agree.min_cosine), "same_neighbours": bool(agree.same_neighbours),
                         "fp32_identity": bool(agree.within_tolerance)}
        print(f"{name:<54} {len(workload):6d} {elapsed:8.2f} {len(workload) / elapsed:8.1f} {agree.min_cosine:9.6f} "
              f"{'same' if agree.same_neighbours else 'diff':>6} {'yes' if agree.within_tolerance else 'no':>13}", flush=True)
    rate = {name: n / elapsed for name, (n, elapsed) in seconds.items()}
    ours, theirs, onnx_rate, bf16 = (rate[name] for name in methods)
    print(f"token-length batches vs sentence-transformers' own: {ours / theirs:.2f}x the speed; "
          f"ONNX Runtime vs torch fp32: {onnx_rate / ours:.2f}x; "
          f"bf16 vs fp32 (texts/s, bf16 on the first {args.bf16_texts} texts): {bf16 / ours:.2f}x")
    if args.json:
        args.json.write_text(json.dumps({
            "auto_choice": auto, "native_bf16": bool(native_bf16()), "load_average": os.getloadavg()[0], "methods": figures,
            "ratios": {"token_batches_vs_sentence_transformers": round(ours / theirs, 3),
                       "onnx_vs_torch_fp32": round(onnx_rate / ours, 3), "bf16_vs_fp32": round(bf16 / ours, 3)},
        }, indent=2))


if __name__ == "__main__":
    main()

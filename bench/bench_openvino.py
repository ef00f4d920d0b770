"""OpenVINO against the encoder the project runs (ONNX Runtime, fused fp32 graph), on real chunk
texts, and whether its vectors would pass the identity rule (issue 28, item 3: the fastest
runtime for this CPU, measured).

OpenVINO is not a dependency of the project: install it beside it to run this
(`pip install openvino==2026.4.1`). It reads the plain ONNX export the project caches and runs
it at fp32 and at bfloat16 (its CPU plugin computes bf16 natively on AVX512-BF16/AMX, with fp32
accumulation). Prints, in turns on the same texts (best of --rounds): seconds, ms per 1,000
real tokens, the ratio against ONNX Runtime, the minimum cosine with ONNX Runtime's vectors,
and `backends.agreement` with torch fp32 on the probe set (what `auto` requires of a backend
that shares the fp32 model identity). Figures only.

    python bench/bench_openvino.py                 # 200 chunk texts, 3 rounds
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import numpy as np
from bench_onnx_graph import encoder_feeds, plain_export

from rag_pipeline.embedding import load_embedder, onnx_backend
from rag_pipeline.embedding.backends import PROBE_TEXTS, agreement
from rag_pipeline.embedding.digest_cache import weights_digest


def openvino_encoder(model_path: Path, precision: str, threads: int):
    """A compiled OpenVINO model as `encode_ids`: mean pooling and unit length as the project's."""
    import openvino

    core = openvino.Core()
    compiled = core.compile_model(core.read_model(str(model_path)), "CPU",
                                  {"INFERENCE_PRECISION_HINT": precision, "INFERENCE_NUM_THREADS": threads,
                                   "PERFORMANCE_HINT": "LATENCY"})
    names = [i.get_any_name() for i in compiled.inputs]
    request = compiled.create_infer_request()

    def encode_ids(batch: dict[str, np.ndarray]) -> np.ndarray:
        width = int(batch["attention_mask"].sum(axis=1).max(initial=1))
        feed = {n: np.ascontiguousarray(batch[n][:, :width], dtype=np.int64) for n in names}
        hidden = request.infer(feed)[compiled.outputs[0]]
        mask = feed["attention_mask"].astype(np.float32)[..., None]
        pooled = (hidden * mask).sum(axis=1) / np.clip(mask.sum(axis=1), 1e-9, None)
        return (pooled / np.linalg.norm(pooled, axis=1, keepdims=True)).astype(np.float32)
    return encode_ids


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--texts", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    try:
        import openvino
    except ImportError:
        raise SystemExit("openvino is not installed: pip install openvino==2026.4.1 (not a project dependency)") from None
    embedder = load_embedder()
    texts, feeds, tokens = encoder_feeds(embedder, args.texts)
    digest = weights_digest(embedder.path)
    plain = plain_export(embedder)
    threads = onnx_backend.cpu_threads()
    variants = {"onnxruntime fused fp32": onnx_backend.OnnxEncoder(embedder.model, digest).encode_ids,
                "openvino fp32": openvino_encoder(plain, "f32", threads),
                "openvino bf16": openvino_encoder(plain, "bf16", threads)}
    seconds: dict[str, float] = dict.fromkeys(variants, float("inf"))
    vectors: dict[str, np.ndarray] = {}
    for _ in range(args.rounds):
        for name, encode in variants.items():
            started = time.perf_counter()
            vectors[name] = np.concatenate([encode(feed) for feed in feeds])
            seconds[name] = min(seconds[name], time.perf_counter() - started)
    reference = embedder._texts_with(embedder._torch_ids(embedder.model))(list(PROBE_TEXTS))
    base = seconds["onnxruntime fused fp32"]
    print(f"openvino {openvino.__version__}; {len(texts)} chunk texts, {tokens} tokens, {len(feeds)} batches, "
          f"{threads} threads, best of {args.rounds}; load {os.getloadavg()[0]:.1f}")
    print("| runtime | s | ms / 1k tokens | / onnxruntime | min cosine with onnxruntime | probe set vs torch fp32 |")
    print("|---|---:|---:|---:|---:|---|")
    for name, encode in variants.items():
        probe = agreement(reference, embedder._texts_with(encode)(list(PROBE_TEXTS)))
        cosine = float((vectors[name] * vectors["onnxruntime fused fp32"]).sum(axis=1).min())
        print(f"| {name} | {seconds[name]:.2f} | {seconds[name] * 1e6 / tokens:.1f} | {seconds[name] / base:.3f} | "
              f"{cosine:.7f} | min cosine {probe.min_cosine:.7f}, same neighbours {probe.same_neighbours} |")


if __name__ == "__main__":
    main()

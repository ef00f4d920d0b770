"""The configured model run by ONNX Runtime instead of torch.

Why a second runtime: ONNX Runtime fuses a BERT layer's operations into fewer kernels, which on
some CPUs encodes faster than torch's eager fp32 with the same fp32 arithmetic. Whether it is
faster here is measured, never assumed (`backend_choice`), and its vectors may embed the index
only where they agree with torch fp32 by the identity rule of `backends`.

Only the transformer is exported; pooling and normalisation stay in numpy, exactly as the
sentence-transformers modules define them. Models with other modules (a Dense head, a custom
router, a pooling mode other than mean or CLS) are not candidates: their torch path is used.
The export is cached under the user's cache folder by weight digest and library versions, so it
costs seconds once per machine and model.

fp32 runs a fused graph: the transformer exported with eager attention, which ONNX Runtime's
transformer optimizer rewrites into one Attention, EmbedLayerNormalization, SkipLayerNormalization
and BiasGelu kernel each (the default export's scaled-dot-product attention defeats the attention
fusion). Same fp32 arithmetic, hidden states within 1e-4 of the unfused graph, ~14% less time per
batch here (bench/bench_onnx_graph.py). int8 keeps quantising the unfused export, so the vectors of an
int8 index never change under it.
"""

from __future__ import annotations

import os
import tempfile
import warnings
from pathlib import Path
from typing import Any

import numpy as np

from rag_pipeline.common.cpus import usable_cores
from rag_pipeline.embedding.digest_cache import cache_dir
from rag_pipeline.embedding.identity import ModelError

OPSET = 17
# Texts per session run. The fused kernels run fastest on few rows: on the 2-core AVX-512 VM,
# 192 real chunk texts (237 tokens mean, sorted) took 6.55 s in runs of 2, 6.74 of 4, 7.37 of 16
# and 7.43 of 32 (2026-12-04), and a short run pads less. The Embedder's batch (its padding
# rule, its progress) stays as configured; only the runs inside it are this small.
RUN_ROWS = 4
GRAPH = "fused1"  # the fp32 graph the session runs; part of the backend choice's key (re-measured when it changes)
# pooling names of sentence-transformers 6 and of older versions -> what this module computes
POOLING = {"mean": "mean", "mean_tokens": "mean", "cls": "cls", "cls_token": "cls"}
MODEL_INPUTS = ("input_ids", "attention_mask", "token_type_ids")


def pooling_mode(model: Any) -> str | None:
    """The pooling this backend reproduces for `model`, or None when the model is not a plain
    transformer + mean/CLS pooling (+ normalisation) stack."""
    names = [type(module).__name__ for module in model]
    if names not in (["Transformer", "Pooling"], ["Transformer", "Pooling", "Normalize"]):
        return None
    pooling = model[1]
    get_mode = getattr(pooling, "get_pooling_mode_str", None)
    mode = get_mode() if callable(get_mode) else getattr(pooling, "pooling_mode", None)
    return POOLING.get(mode) if isinstance(mode, str) else None


def export_path(weights_sha256: str) -> Path:
    """Where the export of weights with this digest lives; the versions are part of the name
    because another exporter or runtime may produce another graph."""
    name = f"{weights_sha256[:32]}-opset{OPSET}-torch{library_version('torch')}-ort{library_version('onnxruntime')}.onnx"
    return cache_dir() / "onnx" / name.replace("+", "_")


def fused_path(weights_sha256: str) -> Path:
    """Where the fused fp32 graph of these weights lives (beside the plain export)."""
    plain = export_path(weights_sha256)
    return plain.with_name(f"{plain.stem}-{GRAPH}.onnx")


def unfusable_path(weights_sha256: str) -> Path:
    """The marker that the optimizer could not rewrite these weights: later processes run the
    plain export (without loading torch to try again)."""
    return fused_path(weights_sha256).with_suffix(".unfusable")


def runnable_path(weights_sha256: str) -> Path:
    """The fp32 graph a process runs: the fused one, or the plain export where fusing failed."""
    return export_path(weights_sha256) if unfusable_path(weights_sha256).is_file() else fused_path(weights_sha256)


def fused(model: Any, weights_sha256: str) -> Path:
    """The fused fp32 graph of `model`, built once (atomically) and reused; the plain export
    when the optimizer cannot rewrite this model (another architecture): slower, never wrong,
    and remembered (`unfusable_path`) so no later process pays for the attempt again."""
    if unfusable_path(weights_sha256).is_file():
        return _plain(model, weights_sha256)
    target = fused_path(weights_sha256)
    if target.is_file():
        return target
    from onnxruntime.transformers.optimizer import optimize_model

    target.parent.mkdir(parents=True, exist_ok=True)  # the temporary file must be on the target's file system
    eager = target.with_name(target.stem + "-eager.onnx")
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=".fused-", suffix=".onnx")
    os.close(fd)
    try:
        export(model, eager, attention="eager")
        config = model[0].auto_model.config
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            optimized = optimize_model(str(eager), model_type="bert", num_heads=int(config.num_attention_heads),
                                       hidden_size=int(config.hidden_size), opt_level=1)
            optimized.save_model_to_file(tmp)
        os.replace(tmp, target)
    except Exception as exc:  # noqa: BLE001 -- any optimizer failure: the plain graph computes the same vectors
        plain = _plain(model, weights_sha256)
        unfusable_path(weights_sha256).write_text(f"{type(exc).__name__}: {exc}\n", encoding="utf-8")
        return plain
    finally:
        Path(tmp).unlink(missing_ok=True)
        eager.unlink(missing_ok=True)
    return target


def _plain(model: Any, weights_sha256: str) -> Path:
    """The plain export of `model`, made if missing."""
    plain = export_path(weights_sha256)
    return plain if plain.is_file() else export(model, plain)


def export(model: Any, target: Path, attention: str | None = None) -> Path:
    """Export the transformer of `model` to `target` (atomically: a concurrent process sees no
    half-written file), with its configured attention or `attention` ("eager": the pattern the
    fusion recognises). Raises ModelError naming the model when the exporter fails."""
    import copy

    import torch

    # a copy: tracing leaves state on the module it traces (measured: the live model's padded
    # batches then disagreed with its unpadded texts until something else ran), and the live
    # model keeps encoding in this process
    transformer = copy.deepcopy(model[0].auto_model).eval()
    if attention is not None:
        transformer.set_attn_implementation(attention)

    class _Hidden(torch.nn.Module):
        """The transformer's last hidden state, called with keyword inputs (the exporter passes
        positional ones, which newer transformers versions no longer accept in that order)."""

        def __init__(self, inner: torch.nn.Module) -> None:
            super().__init__()
            self.inner = inner

        def forward(self, input_ids: Any, attention_mask: Any, token_type_ids: Any) -> Any:
            return self.inner(input_ids=input_ids, attention_mask=attention_mask,
                              token_type_ids=token_type_ids).last_hidden_state

    sample = model.tokenizer(["a short text", "a slightly longer text for the export"], padding=True, return_tensors="pt")
    inputs = tuple(sample.get(name, torch.zeros_like(sample["input_ids"])) for name in MODEL_INPUTS)
    dynamic = {name: {0: "batch", 1: "tokens"} for name in (*MODEL_INPUTS, "last_hidden_state")}
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=".export-", suffix=".onnx")
    os.close(fd)
    try:
        with warnings.catch_warnings(), torch.no_grad():
            warnings.simplefilter("ignore")
            torch.onnx.export(_Hidden(transformer), inputs, tmp, input_names=list(MODEL_INPUTS),
                              output_names=["last_hidden_state"], dynamic_axes=dynamic,
                              opset_version=OPSET, dynamo=False)
        os.replace(tmp, target)
    except Exception as exc:
        raise ModelError(f"cannot export the embedding model to ONNX ({target}): {exc}; "
                         f"set embedding.backend: torch-fp32") from exc
    finally:
        Path(tmp).unlink(missing_ok=True)
    return target


class OnnxEncoder:
    """Encodes batches with an exported transformer (fp32, or its int8 quantisation) and numpy
    pooling.

    Session settings, measured on the 2-core AVX-512 dev VM (note 28): graph optimisation
    ORT_ENABLE_ALL (ENABLE_EXTENDED ties, BASIC is ~10% slower), intra-op threads = torch's
    (the cores; one thread is ~1.7x slower), spinning on (off ~4% slower), inputs passed
    by `run` (I/O binding brings nothing measurable on the CPU provider: the inputs already
    live in host memory)."""

    def __init__(self, model: Any, weights_sha256: str, threads: int | None = None, int8: bool = False) -> None:
        mode = pooling_mode(model)
        if mode is None:
            raise ModelError("the embedding model is not a plain transformer with mean or CLS pooling; "
                             "ONNX Runtime cannot run it here: set embedding.backend: torch-fp32")
        self.tokenizer = model.tokenizer
        path = quantized(_plain(model, weights_sha256)) if int8 else fused(model, weights_sha256)
        self._open(path, mode, int(model.max_seq_length), threads)

    @classmethod
    def from_files(cls, model_dir: Path, weights_sha256: str, max_length: int, int8: bool = False,
                   threads: int | None = None) -> OnnxEncoder | None:
        """The encoder without loading the model through torch, when its export (and int8
        quantisation) is already cached and the folder's files say it is a plain mean/CLS
        stack; None otherwise (the caller loads the model). Its batches come as token ids
        (`encode_ids`): it has no tokenizer of its own."""
        mode = pooling_from_files(model_dir)
        path = int8_path(export_path(weights_sha256)) if int8 else runnable_path(weights_sha256)
        if mode is None or not path.is_file():
            return None
        encoder = cls.__new__(cls)
        encoder.tokenizer = None
        encoder._open(path, mode, max_length, threads)
        return encoder

    def _open(self, path: Path, mode: str, max_length: int, threads: int | None) -> None:
        import onnxruntime

        self.pooling = mode
        self.max_length = max_length
        options = onnxruntime.SessionOptions()
        options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_ALL
        options.intra_op_num_threads = threads or cpu_threads()
        options.log_severity_level = 3
        try:
            self.session = onnxruntime.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
        except Exception as exc:  # a corrupt cached export: drop it, the next process re-exports
            path.unlink(missing_ok=True)
            raise ModelError(f"cannot load the ONNX export {path}: {exc}; it was removed, run again") from exc
        self.inputs = [i.name for i in self.session.get_inputs()]

    def encode(self, texts: list[str]) -> np.ndarray:
        """Unit vectors of one batch, in input order, truncated to the model's input limit exactly as
        sentence-transformers truncates."""
        batch = self.tokenizer(texts, padding=True, truncation=True, max_length=self.max_length, return_tensors="np")
        return self.encode_ids({name: np.asarray(batch[name]) for name in batch})

    def encode_ids(self, batch: dict[str, np.ndarray]) -> np.ndarray:
        """Unit vectors of one padded batch of token ids (`tokens.padded`), run RUN_ROWS texts
        at a time, each run cut to its own longest text."""
        rows = len(batch["input_ids"])
        return np.concatenate([self._run({name: ids[i:i + RUN_ROWS] for name, ids in batch.items()})
                               for i in range(0, rows, RUN_ROWS)]) if rows else self._run(batch)

    def _run(self, batch: dict[str, np.ndarray]) -> np.ndarray:
        width = int(np.asarray(batch["attention_mask"]).sum(axis=1).max(initial=1))
        batch = {name: np.asarray(ids)[:, :width] for name, ids in batch.items()}
        feed = {name: np.asarray(batch[name] if name in batch else np.zeros_like(batch["input_ids"]), dtype=np.int64)
                for name in self.inputs}
        hidden = self.session.run(None, feed)[0]
        if self.pooling == "cls":
            pooled = hidden[:, 0, :]
        else:
            mask = np.asarray(batch["attention_mask"], dtype=np.float32)[..., None]
            pooled = (hidden * mask).sum(axis=1) / np.clip(mask.sum(axis=1), 1e-9, None)
        # unit vectors, as the torch path returns them (normalize_embeddings=True)
        pooled = pooled / np.clip(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12, None)
        return pooled.astype(np.float32, copy=False)


def pooling_from_files(model_dir: Path) -> str | None:
    """`pooling_mode` from the folder's modules.json and pooling config, without loading it."""
    import json

    try:
        modules = json.loads((model_dir / "modules.json").read_text(encoding="utf-8"))
        names = [str(m["type"]).rsplit(".", 1)[-1] for m in modules]
        pooling = next(m for m in modules if str(m["type"]).endswith("Pooling"))
        config = json.loads((model_dir / str(pooling.get("path", "")) / "config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError, KeyError, TypeError, StopIteration, AttributeError):
        return None
    if names not in (["Transformer", "Pooling"], ["Transformer", "Pooling", "Normalize"]) or not isinstance(config, dict):
        return None
    mode = config.get("pooling_mode")
    if not isinstance(mode, str):
        flags = [name for name in ("cls_token", "mean_tokens", "max_tokens", "mean_sqrt_len_tokens",
                                   "weightedmean_tokens", "lasttoken") if config.get(f"pooling_mode_{name}")]
        mode = flags[0] if len(flags) == 1 else None
    return POOLING.get(mode) if isinstance(mode, str) else None


def int8_path(export: Path) -> Path:
    return export.with_name(export.stem + "-int8-dynamic.onnx")


def quantized(export: Path) -> Path:
    """The dynamically quantised int8 copy of an fp32 export (weights int8, activations
    quantised per batch at run time), built once beside it (atomically) and reused."""
    target = int8_path(export)
    if target.is_file():
        return target
    from onnxruntime.quantization import QuantType, quantize_dynamic

    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=".int8-", suffix=".onnx")
    os.close(fd)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            quantize_dynamic(export, tmp, weight_type=QuantType.QInt8)
        os.replace(tmp, target)
    except Exception as exc:
        raise ModelError(f"cannot quantise the ONNX export {export} to int8: {exc}; "
                         f"set embedding.backend: onnx-fp32 or torch-fp32") from exc
    finally:
        Path(tmp).unlink(missing_ok=True)
    return target


def cpu_threads() -> int:
    """The intra-op threads torch uses by default (OMP_NUM_THREADS, else the usable cores),
    known without importing torch (seconds an edit of one chunk should not pay)."""
    configured = os.environ.get("OMP_NUM_THREADS", "")
    if configured.isdigit() and int(configured) > 0:
        return int(configured)
    return usable_cores()


def library_version(name: str) -> str:
    """An installed library's version without importing it ("none" when absent)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(name)
    except PackageNotFoundError:
        return "none"

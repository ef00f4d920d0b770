"""The pinned embedding model, loaded only when something must be encoded or tokenised.

An `Embedder` is cheap to create: it resolves the model folder and can give the model's
identity from its files. The sentence-transformers model (torch, transformers, hundreds of MB)
is loaded on first `encode` or `count_tokens`, so a sync with nothing to embed never loads it.
"""

from __future__ import annotations

import functools
import os
from functools import cached_property
from typing import Any

import numpy as np

from rag_pipeline.embedding.backends import REFERENCE, numerics_for
from rag_pipeline.embedding.digest_cache import weights_digest
from rag_pipeline.embedding.identity import ModelError, ModelIdentity, output_normalized, resolve_model, shape_from_files


@functools.lru_cache(maxsize=2)
def load_embedder(model: str | None = None, device: str = "cpu", batch_size: int = 32) -> Embedder:
    """One embedder per process and configuration: a loaded model costs seconds and hundreds of MB."""
    return Embedder(model, device=device, batch_size=batch_size)


class Embedder:
    """A sentence-transformers model plus its tokenizer, used for both chunk sizing and
    encoding so token counts match what the model really sees."""

    def __init__(self, model: str | None = None, device: str = "cpu", batch_size: int = 32) -> None:
        self.name, self.path, self.revision = resolve_model(model)
        self.device = device
        self.batch_size = batch_size
        # torch fp32 is the only backend this installation can run at full speed on AVX2 (see
        # backends.py); another backend would record its numerics through numerics_for().
        self.backend = REFERENCE

    @property
    def loaded(self) -> bool:
        """Whether the model has been loaded in this process (for tests and benchmarks)."""
        return "model" in self.__dict__

    @cached_property
    def model(self) -> Any:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        from sentence_transformers import SentenceTransformer

        try:
            return SentenceTransformer(str(self.path), device=self.device)
        except Exception as exc:
            raise ModelError(f"cannot load embedding model from {self.path}: {exc}") from exc

    @property
    def tokenizer(self) -> Any:
        return self.model.tokenizer

    @cached_property
    def identity(self) -> ModelIdentity:
        """From the folder's config files and the cached weight digest; from the loaded model
        only when the files do not describe it (see `shape_from_files`)."""
        shape = shape_from_files(self.path)
        if shape is None:
            model = self.model
            get_dim = getattr(model, "get_embedding_dimension", None) or model.get_sentence_embedding_dimension
            dimension, max_tokens = int(get_dim()), int(model.max_seq_length)
            normalized = False
            for module in model:
                normalized = output_normalized(normalized, type(module).__name__)
        else:
            dimension, normalized, max_tokens = shape.dimension, shape.normalized, shape.max_tokens
        return ModelIdentity(
            name=self.name,
            revision=self.revision,
            weights_sha256=weights_digest(self.path),
            dimension=dimension,
            normalized=normalized,
            max_tokens=max_tokens,
            numerics=numerics_for(self.backend, None),
        )

    @property
    def max_tokens(self) -> int:
        return self.identity.max_tokens

    def count_tokens(self, texts: list[str]) -> list[int]:
        """Tokens the model sees for each text, special tokens included (no truncation)."""
        if not texts:
            return []
        encoded = self.tokenizer(texts, add_special_tokens=True, truncation=False, verbose=False)
        return [len(ids) for ids in encoded["input_ids"]]

    def encode(self, texts: list[str]) -> np.ndarray:
        """Unit vectors in input order. Texts are batched by token count (longest first), so a
        batch of short chunks is not padded to the length of a long one; sentence-transformers
        itself only sorts by characters, which differ from tokens for tables, code and numbers."""
        if not texts:
            return np.zeros((0, self.identity.dimension), dtype=np.float32)
        order = length_order(self.count_tokens(texts))
        vectors = np.empty((len(texts), self.identity.dimension), dtype=np.float32)
        for start in range(0, len(order), self.batch_size):
            batch = order[start:start + self.batch_size]
            vectors[batch] = self.model.encode(
                [texts[i] for i in batch], batch_size=len(batch), normalize_embeddings=True,
                convert_to_numpy=True, show_progress_bar=False,
            )
        return vectors


def length_order(token_counts: list[int]) -> np.ndarray:
    """Indices of the texts, longest first (stable: equal lengths keep their input order)."""
    return np.argsort(-np.asarray(token_counts, dtype=np.int64), kind="stable")

"""The pinned embedding model, loaded only when something must be encoded or tokenised.

An `Embedder` is cheap to create: it resolves the model folder and can give the model's
identity from its files. The sentence-transformers model (torch, transformers, hundreds of MB)
is loaded on first `encode` or `count_tokens`, so a sync with nothing to embed never loads it.
"""

from __future__ import annotations

import functools
import os
from functools import cached_property
from typing import TYPE_CHECKING, Any

import numpy as np

from rag_pipeline.common import heap
from rag_pipeline.embedding.backend_choice import BackendChoice, Encode, choose
from rag_pipeline.embedding.backends import AUTO, BACKENDS, BF16, ONNX, REFERENCE, REFERENCE_NUMERICS, native_bf16, numerics_for
from rag_pipeline.embedding.digest_cache import weights_digest
from rag_pipeline.embedding.identity import ModelError, ModelIdentity, output_normalized, resolve_model, shape_from_files

if TYPE_CHECKING:
    from rag_pipeline.embedding.config import EmbeddingConfig


@functools.lru_cache(maxsize=2)
def load_embedder(model: str | None = None, device: str = "cpu", batch_size: int = 32, backend: str = AUTO) -> Embedder:
    """One embedder per process and configuration: a loaded model costs seconds and hundreds of MB."""
    return Embedder(model, device=device, batch_size=batch_size, backend=backend)


def embedder_for(section: EmbeddingConfig) -> Embedder:
    """The embedder the configuration's `embedding` section names: how the CLI and the Dagster
    resource load the model, so both share `load_embedder`'s one model per process."""
    return load_embedder(section.model, section.device, section.batch_size, section.backend)


class Embedder:
    """A sentence-transformers model plus its tokenizer, used for both chunk sizing and
    encoding so token counts match what the model really sees."""

    def __init__(self, model: str | None = None, device: str = "cpu", batch_size: int = 32, backend: str = AUTO) -> None:
        if backend not in (AUTO, *BACKENDS):
            raise ModelError(f"unknown embedding backend {backend!r}: use one of {', '.join((AUTO, *BACKENDS))}")
        self.name, self.path, self.revision = resolve_model(model)
        self.device = device
        self.batch_size = batch_size
        self.backend_setting = backend

    @property
    def loaded(self) -> bool:
        """Whether the model has been loaded in this process (for tests and benchmarks)."""
        return "model" in self.__dict__

    @property
    def encoded_with(self) -> BackendChoice | None:
        """The backend choice once this process has encoded (None before: asking must not
        trigger a measurement)."""
        return self.__dict__.get("choice")

    @cached_property
    def model(self) -> Any:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        with heap.loading():
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
            numerics=self._numerics(),
        )

    def _numerics(self) -> str:
        """fp32 unless a backend was configured whose vectors differ from torch fp32 (`auto`
        only ever chooses agreeing ones, so it needs no measurement here)."""
        if self.backend_setting in (AUTO, REFERENCE):
            return REFERENCE_NUMERICS
        return numerics_for(self.choice.backend, self.choice.agreement(self.choice.backend))

    @cached_property
    def choice(self) -> BackendChoice:
        """The backend that encodes in this process, measured once per machine (see
        `backend_choice`); torch fp32 when configured so or off the CPU."""
        if self.backend_setting == REFERENCE:
            return BackendChoice(REFERENCE, "configured")
        if self.device != "cpu":
            return BackendChoice(REFERENCE, f"device {self.device}: only torch runs there")
        return choose(weights_digest(self.path), self.backend_setting, self._candidates)

    def _candidates(self) -> dict[str, Encode]:
        """Batch encoders worth measuring for the setting: the reference always; ONNX Runtime
        where the model can be exported (under `auto` a failed export only drops it); bfloat16
        when configured or, under `auto`, where the CPU has it natively."""
        candidates: dict[str, Encode] = {REFERENCE: self._torch_batches(self.model)}
        if self.backend_setting in (AUTO, ONNX):
            try:
                candidates[ONNX] = self._onnx_encoder.encode
            except (ModelError, ImportError):
                if self.backend_setting == ONNX:
                    raise
        if self.backend_setting == BF16 or (self.backend_setting == AUTO and native_bf16()):
            candidates[BF16] = self._torch_batches(self._bf16_model)
        return candidates

    @cached_property
    def _onnx_encoder(self) -> Any:
        with heap.loading():
            from rag_pipeline.embedding.onnx_backend import OnnxEncoder

            return OnnxEncoder(self.model, weights_digest(self.path))

    @cached_property
    def _bf16_model(self) -> Any:
        import copy

        import torch

        return copy.deepcopy(self.model).to(torch.bfloat16)

    def _torch_batches(self, model: Any) -> Encode:
        def encode(texts: list[str]) -> np.ndarray:
            vectors = model.encode(texts, batch_size=len(texts), normalize_embeddings=True,
                                   convert_to_tensor=True, show_progress_bar=False)
            return vectors.float().cpu().numpy()
        return encode

    @cached_property
    def _batch_encoder(self) -> Encode:
        backend = self.choice.backend
        if backend == ONNX:
            return self._onnx_encoder.encode
        return self._torch_batches(self._bf16_model if backend == BF16 else self.model)

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
            vectors[batch] = self._batch_encoder([texts[i] for i in batch])
        return vectors


def length_order(token_counts: list[int]) -> np.ndarray:
    """Indices of the texts, longest first (stable: equal lengths keep their input order)."""
    return np.argsort(-np.asarray(token_counts, dtype=np.int64), kind="stable")

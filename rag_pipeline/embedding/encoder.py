"""The pinned embedding model, loaded only when something must be encoded.

An `Embedder` is cheap to create: it resolves the model folder and can give the model's
identity from its files. Counting tokens needs only the model's tokenizer.json (`tokens`); the
sentence-transformers model (torch, transformers, hundreds of MB) is loaded on first `encode`,
and not even then when ONNX Runtime encodes from a cached export and a remembered choice.
"""

from __future__ import annotations

import functools
import os
import time
from collections.abc import Callable
from functools import cached_property
from typing import TYPE_CHECKING, Any

import numpy as np

from rag_pipeline.common import heap
from rag_pipeline.embedding.backend_choice import BackendChoice, Encode, choose
from rag_pipeline.embedding.backends import (
    AUTO,
    BACKENDS,
    BF16,
    ONNX,
    ONNX_INT8,
    REFERENCE,
    REFERENCE_NUMERICS,
    native_bf16,
    numerics_for,
)
from rag_pipeline.embedding.digest_cache import weights_digest
from rag_pipeline.embedding.identity import ModelError, ModelIdentity, output_normalized, resolve_model, shape_from_files
from rag_pipeline.embedding.tokens import EncodeStats, TokenIds, fast_token_ids, length_batches, padded, truncated

IdsEncode = Callable[[dict[str, np.ndarray]], np.ndarray]  # one padded batch of token ids -> unit vectors

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
        self.stats = EncodeStats()

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
        only ever chooses agreeing ones, so it needs no measurement here); int8 always its own."""
        if self.backend_setting == ONNX_INT8:
            return numerics_for(ONNX_INT8, None)
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
        """Text encoders worth measuring for the setting: the reference always; ONNX Runtime
        where the model can be exported (under `auto` a failed export only drops it); bfloat16
        when configured or, under `auto`, where the CPU has it natively; int8 only when configured."""
        candidates: dict[str, Encode] = {REFERENCE: self._texts_with(self._torch_ids(self.model))}
        if self.backend_setting in (AUTO, ONNX):
            try:
                candidates[ONNX] = self._texts_with(self._onnx_encoder.encode_ids)
            except (ModelError, ImportError):
                if self.backend_setting == ONNX:
                    raise
        if self.backend_setting == ONNX_INT8:
            candidates[ONNX_INT8] = self._texts_with(self._int8_encoder.encode_ids)
        if self.backend_setting == BF16 or (self.backend_setting == AUTO and native_bf16()):
            candidates[BF16] = self._texts_with(self._torch_ids(self._bf16_model))
        return candidates

    @cached_property
    def _onnx_encoder(self) -> Any:
        return self._onnx(int8=False)

    @cached_property
    def _int8_encoder(self) -> Any:
        return self._onnx(int8=True)

    def _onnx(self, int8: bool) -> Any:
        """From the cached export without torch when possible, else exported from the model."""
        with heap.loading():
            from rag_pipeline.embedding.onnx_backend import OnnxEncoder

            digest = weights_digest(self.path)
            found = OnnxEncoder.from_files(self.path, digest, self.max_tokens, int8=int8)
            return found if found is not None else OnnxEncoder(self.model, digest, int8=int8)

    @cached_property
    def _bf16_model(self) -> Any:
        import copy

        import torch

        return copy.deepcopy(self.model).to(torch.bfloat16)

    def _torch_ids(self, model: Any) -> IdsEncode:
        """The sentence-transformers stack on a padded batch of ids: its forward pass and the
        normalisation `encode(normalize_embeddings=True)` applies."""
        def encode(batch: dict[str, np.ndarray]) -> np.ndarray:
            import torch

            features = {name: torch.from_numpy(ids).to(model.device) for name, ids in batch.items()}
            with torch.inference_mode():
                vectors = model(features)["sentence_embedding"]
                vectors = torch.nn.functional.normalize(vectors, p=2, dim=1)
            return vectors.float().cpu().numpy()
        return encode

    @cached_property
    def _batch_encoder(self) -> IdsEncode:
        backend = self.choice.backend
        if backend == ONNX:
            return self._onnx_encoder.encode_ids
        if backend == ONNX_INT8:
            return self._int8_encoder.encode_ids
        return self._torch_ids(self._bf16_model if backend == BF16 else self.model)

    @property
    def ready(self) -> bool:
        """Whether this process holds the encoder of the chosen backend (see `warm`)."""
        return "_batch_encoder" in self.__dict__

    def warm(self) -> None:
        """Load what encoding will need and only that: the tokenizer and the chosen backend's
        encoder. With ONNX Runtime remembered as the choice and its export cached, that is an
        ONNX session (a fraction of a second), not torch and sentence-transformers (seconds)."""
        _ = self.token_ids, self._batch_encoder

    @cached_property
    def max_tokens(self) -> int:
        """The model's input limit; from its files, without the identity (whose numerics may
        need the backend choice, which may need this)."""
        shape = shape_from_files(self.path)
        return shape.max_tokens if shape is not None else int(self.model.max_seq_length)

    @cached_property
    def token_ids(self) -> TokenIds:
        """The model's tokenizer (tokenizer.json directly when the folder has one, else the
        loaded model's), remembering the ids of what it counts for the encoder."""
        fast = fast_token_ids(self.path)
        if fast is not None:
            return fast
        slow = self.model.tokenizer
        return TokenIds(lambda texts: slow(texts, add_special_tokens=True, truncation=False, verbose=False)["input_ids"],
                        slow.pad_token_id or 0)

    def count_tokens(self, texts: list[str]) -> list[int]:
        """Tokens the model sees for each text, special tokens included (no truncation); the
        ids are kept, so encoding the same text later does not tokenise it again."""
        if not texts:
            return []
        return self.token_ids.count(texts)

    def encode(self, texts: list[str]) -> np.ndarray:
        """Unit vectors in input order, by the backend chosen for this machine."""
        if not texts:
            return np.zeros((0, self.identity.dimension), dtype=np.float32)
        return self._texts_with(self._batch_encoder)(texts)

    def _texts_with(self, encode_ids: IdsEncode) -> Encode:
        """Texts -> vectors in input order through `encode_ids`: ids reused where the chunker
        counted the text, truncated at the model's limit, batched by token length
        (`tokens.length_batches`: a batch is padded to its longest text only)."""
        def encode(texts: list[str]) -> np.ndarray:
            stats = self.stats
            started = time.perf_counter()
            stats.ids_reused += sum(self.token_ids.held(t) for t in texts)
            ids = [truncated(i, self.max_tokens) for i in self.token_ids.ids(texts)]
            stats.tokenize_s += time.perf_counter() - started
            vectors: np.ndarray | None = None  # its width from the model's output: the identity may need this encoder
            for batch in length_batches([len(i) for i in ids], self.batch_size):
                feed = padded([ids[i] for i in batch], self.token_ids.pad_id)
                started = time.perf_counter()
                out = encode_ids(feed)
                if vectors is None:
                    vectors = np.empty((len(texts), out.shape[1]), dtype=np.float32)
                vectors[batch] = out
                stats.encode_s += time.perf_counter() - started
                real, computed = int(feed["attention_mask"].sum()), int(feed["attention_mask"].size)
                stats.texts, stats.batches = stats.texts + len(batch), stats.batches + 1
                stats.tokens, stats.padded_tokens = stats.tokens + real, stats.padded_tokens + computed
                stats.batch_sizes.append(len(batch))
                stats.padding_shares.append(1 - real / computed)
            assert vectors is not None  # texts is never empty here
            return vectors
        return encode

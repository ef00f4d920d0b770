"""The `embedding` section of `rag_pipeline.yaml`."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from rag_pipeline.common.config import Flag, PositiveWhole, Text
from rag_pipeline.embedding.backends import AUTO, BACKENDS

EMBEDDING_BACKENDS = (AUTO, *BACKENDS)  # auto, then each measured backend


class EmbeddingConfig(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    model: Text | None = None  # None = the packaged all-MiniLM-L6-v2
    batch_size: PositiveWhole = 32
    device: Text = Field("cpu", min_length=1, description="a torch device name such as cpu")
    # auto = fastest measured here of those matching torch fp32 (embedding/backend_choice.py)
    backend: Literal[EMBEDDING_BACKENDS] = AUTO  # type: ignore[valid-type]
    # a second vector, from the multilingual model, for each chunk of a document not in English:
    # what a question in another language than the document is found by (sync/multilingual.py)
    multilingual: Flag = True

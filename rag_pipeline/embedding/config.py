"""The `embedding` section of `rag_pipeline.yaml`."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class EmbeddingConfig:
    model: str | None = None  # None = the packaged all-MiniLM-L6-v2
    batch_size: int = 32
    device: str = "cpu"
    backend: str = "auto"  # auto = fastest measured here of those matching torch fp32 (embedding/backend_choice.py)

"""The `blob_store` section of `rag_pipeline.yaml`."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class BlobStoreConfig:
    """`blob_store: s3://bucket/prefix`, or a mapping with url, endpoint_url and region."""

    url: str
    endpoint_url: str | None = None
    region: str | None = None

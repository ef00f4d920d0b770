"""Blob stores of raw source bytes: the interface (`base`), the local folder (`local`) and a
bucket (`s3`), and the one way to open the configured one."""

from __future__ import annotations

from pathlib import Path

from rag_pipeline.blobs.base import BlobReadError, Blobs, ChainedBlobs, blob_name
from rag_pipeline.blobs.config import BlobStoreConfig
from rag_pipeline.blobs.local import BlobStore


def open_blob_store(settings: BlobStoreConfig | None, local_dir: Path) -> Blobs:
    """The configured blob store: the local folder by default, a bucket with `blob_store`
    (reads fall back to the local folder, which keeps blobs written before the switch)."""
    local = BlobStore(local_dir)
    if settings is None:
        return local
    from rag_pipeline.blobs.s3 import S3BlobStore
    from rag_pipeline.common.s3 import make_client

    client, counter = make_client(endpoint_url=settings.endpoint_url, region=settings.region)
    return ChainedBlobs(S3BlobStore(client, settings.url, counter), [local])


__all__ = ["BlobReadError", "BlobStore", "BlobStoreConfig", "Blobs", "ChainedBlobs", "blob_name", "open_blob_store"]

"""Source connectors: each lists objects with checksums and ACL groups, and reads bytes."""

from __future__ import annotations

from rag_pipeline.sources.base import (
    ListingError,
    ObjectReadError,
    SkippedObject,
    Source,
    SourceObject,
    name_problem,
    quarantine_name,
)
from rag_pipeline.sources.config import SourceConfig


def open_source(config: SourceConfig, max_bytes: int | None = None) -> Source:
    """The connector for a configured source; `max_bytes` lets a source refuse oversized
    objects from its listing, before any byte is downloaded."""
    if config.kind == "s3":
        from rag_pipeline.common.s3 import make_client
        from rag_pipeline.sources.s3 import S3Source

        assert config.bucket is not None
        client, counter = make_client(endpoint_url=config.endpoint_url, region=config.region,
                                      max_attempts=config.max_attempts, retry_mode=config.retry_mode,
                                      max_pool_connections=config.concurrent_requests)
        return S3Source(config.name, client, config.bucket, config.prefix, counter=counter, deny=config.deny,
                        default_groups=config.default_groups, object_acl=config.object_acl, max_bytes=max_bytes,
                        workers=config.concurrent_requests)
    from rag_pipeline.sources.filesystem import FilesystemSource

    assert config.path is not None
    return FilesystemSource(config.name, config.path, config.deny, config.default_groups)


__all__ = ["ListingError", "ObjectReadError", "SkippedObject", "Source", "SourceObject", "name_problem", "open_source",
           "quarantine_name"]

"""Source connectors: each lists objects with checksums and ACL groups, and reads bytes."""

from __future__ import annotations

from rag_pipeline.config import SourceConfig
from rag_pipeline.sources.base import ListingError, SkippedObject, Source, SourceObject


def open_source(config: SourceConfig) -> Source:
    if config.kind == "filesystem":
        from rag_pipeline.sources.filesystem import FilesystemSource

        assert config.path is not None
        return FilesystemSource(config.name, config.path, config.deny)
    raise NotImplementedError(f"source kind {config.kind!r} is not implemented yet")


__all__ = ["ListingError", "SkippedObject", "Source", "SourceObject", "open_source"]

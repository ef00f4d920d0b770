"""Source connectors: each lists objects with checksums and ACL groups, and reads bytes."""

from __future__ import annotations

from rag_pipeline.config import ConfigError, SourceConfig
from rag_pipeline.sources.base import ListingError, SkippedObject, Source, SourceObject


def open_source(config: SourceConfig) -> Source:
    if config.kind == "filesystem":
        from rag_pipeline.sources.filesystem import FilesystemSource

        assert config.path is not None
        return FilesystemSource(config.name, config.path, config.deny)
    raise ConfigError(
        f"source {config.name!r}: kind {config.kind!r} is part of the configuration contract but this "
        "version syncs only 'filesystem' sources"
    )


__all__ = ["ListingError", "SkippedObject", "Source", "SourceObject", "open_source"]

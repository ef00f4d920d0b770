"""A source's section of `rag_pipeline.yaml` (`sources[]`)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class SourceConfig:
    name: str
    kind: str
    path: Path | None = None  # filesystem
    bucket: str | None = None  # s3
    prefix: str = ""
    endpoint_url: str | None = None
    region: str | None = None
    default_groups: tuple[str, ...] = ()  # groups of objects no access file, tag or metadata gives groups to
    object_acl: tuple[str, ...] = ("tag", "metadata")  # s3: where an object's own groups are read
    max_attempts: int = 5  # s3: botocore attempts per request (1 = no retries)
    retry_mode: str = "standard"  # s3: botocore retry mode
    concurrent_requests: int = 16  # s3: per-object requests (tags, metadata) in flight at once
    deny: tuple[str, ...] = ()  # glob patterns (relative URIs) never indexed
    max_tombstone_share: float = 0.5  # a run that would tombstone more than this stops
    schedule: str | None = None  # cron: Dagster syncs this source on it (schedule sync_<name>)
    watch: bool = False  # a Dagster sensor syncs this source when its listing changes

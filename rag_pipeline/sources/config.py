"""A source's section of `rag_pipeline.yaml` (`sources[]`).

One model for both kinds, so every consumer reads the same attributes; the keys a source may
write depend on its kind (`path` is for a folder, `bucket` and the request settings for S3), which
`_keys_of_its_kind` checks before anything else, naming the key and the keys known for that kind.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    Strict,
    StringConstraints,
    field_validator,
    model_validator,
)
from pydantic_core import PydanticCustomError

from rag_pipeline.common.config import Flag, NullIsDefault, PathText, PositiveWhole, Share, Text, Whole
from rag_pipeline.common.groups import group_problem
from rag_pipeline.common.s3 import DEFAULT_MAX_ATTEMPTS, RETRY_MODES
from rag_pipeline.sources.cron import checked_cron
from rag_pipeline.sources.s3 import OBJECT_ACL_KINDS

SOURCE_KINDS = ("filesystem", "s3")
# S3 per-object requests in flight per source: each holds a pooled connection; S3 serves
# thousands per prefix per second, but a small MinIO or a proxy does not, so the cap stays modest.
MAX_CONCURRENT_REQUESTS = 128
MAX_NAME_LENGTH = 100  # a name names Dagster jobs, schedules and sensors, and is stored with each document
FILESYSTEM_ONLY = ("path",)
S3_ONLY = ("bucket", "prefix", "endpoint_url", "region", "object_acl", "max_attempts", "retry_mode",
           "concurrent_requests")


def _int_as_name(value: Any) -> Any:
    """`name: 2024` has always named the source "2024"."""
    return str(value) if isinstance(value, int) and not isinstance(value, bool) else value


def _group_name(value: str) -> str:
    """The one rule for group names (rag_pipeline.common.groups): what search refuses is refused here."""
    problem = group_problem(value)
    if problem:
        raise ValueError(problem)
    return value


GroupName = Annotated[str, Strict(), StringConstraints(strip_whitespace=True, min_length=1), AfterValidator(_group_name)]


class SourceConfig(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    name: Annotated[str, BeforeValidator(_int_as_name)] = Field(
        strict=True, pattern=r"^[-_]*[A-Za-z0-9][-_A-Za-z0-9]*$", max_length=MAX_NAME_LENGTH,
        description=f"up to {MAX_NAME_LENGTH} letters, digits, '-' and '_'")
    kind: Literal[SOURCE_KINDS] = "filesystem"  # type: ignore[valid-type]
    path: PathText | None = None  # filesystem: the folder, relative to the config file's folder
    bucket: Text | None = Field(None, pattern=r"^[^/]+$", description="a bucket name, no s3:// or '/'")  # s3
    prefix: Text = Field("", description="a string such as contracts/")
    endpoint_url: Text | None = None
    region: Text | None = None
    deny: Annotated[tuple[Text, ...], NullIsDefault] = Field(
        (), description="a list of glob patterns")  # relative URIs never indexed
    max_tombstone_share: Share = 0.5  # a run that would tombstone more than this stops
    # groups of objects no access file, tag or metadata gives groups to: sorted, stripped, once each
    default_groups: Annotated[tuple[GroupName, ...], NullIsDefault] = Field(
        (), description="a list of group names, e.g. [all-staff]")
    object_acl: tuple[Literal[OBJECT_ACL_KINDS], ...] = Field(  # type: ignore[valid-type]
        OBJECT_ACL_KINDS, description=f"a list of {list(OBJECT_ACL_KINDS)} (or [])")  # s3: where an object's groups are read
    max_attempts: PositiveWhole = DEFAULT_MAX_ATTEMPTS  # s3: botocore attempts per request (1 = no retries)
    retry_mode: Literal[RETRY_MODES] = "standard"  # type: ignore[valid-type]  # s3: botocore retry mode
    # s3: per-object requests (tags, metadata) in flight at once
    concurrent_requests: Whole = Field(16, ge=1, le=MAX_CONCURRENT_REQUESTS)
    schedule: Text | None = None  # cron: Dagster syncs this source on it (schedule sync_<name>)
    watch: Flag = False  # a Dagster sensor syncs this source when its listing changes

    @model_validator(mode="before")
    @classmethod
    def _keys_of_its_kind(cls, data: Any) -> Any:
        kind = data.get("kind", "filesystem") if isinstance(data, dict) else None
        if kind in SOURCE_KINDS:
            other = S3_ONLY if kind == "filesystem" else FILESYSTEM_ONLY
            known = [key for key in cls.model_fields if key not in other]
            unknown = sorted(str(key) for key in data if key not in known)
            if unknown:
                raise PydanticCustomError("unknown_keys", "unknown keys {keys}", {"keys": unknown, "known": known})
        return data

    @field_validator("default_groups")
    @classmethod
    def _normalised(cls, groups: tuple[str, ...]) -> tuple[str, ...]:
        return tuple(sorted(set(groups)))

    @field_validator("schedule")
    @classmethod
    def _cron(cls, schedule: str | None) -> str | None:
        return None if schedule is None else checked_cron(schedule)

    @model_validator(mode="after")
    def _where_it_lives(self) -> SourceConfig:
        if self.kind == "filesystem" and self.path is None:
            raise ValueError("needs a 'path' (the folder to index)")
        if self.kind == "s3" and self.bucket is None:
            raise ValueError(f"needs a 'bucket' ({type(self).model_fields['bucket'].description})")
        return self

"""Loading `rag_pipeline.yaml` (the stable configuration contract in DESIGN.md).

Each section is a frozen pydantic model beside the layer it configures (sources/, embedding/,
evaluation/, blobs/ and parsing/config.py); `Config` holds them with the top-level keys. This
module reads the file, refuses credentials, validates it, turns a validation error into a
ConfigError naming the key, the allowed values and the value found, and resolves every relative
path against the config file's folder, so a config means the same thing whatever the working
directory of the CLI, `dagster dev` or a test.
"""

from __future__ import annotations

import os
import types
import typing
from pathlib import Path
from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, PrivateAttr, ValidationError, field_validator
from pydantic.fields import FieldInfo
from pydantic_core import ErrorDetails, PydanticUseDefault

from rag_pipeline.alerts.config import AlertsConfig
from rag_pipeline.blobs.config import BlobStoreConfig
from rag_pipeline.common.config import BlankIsDefault, NullIsDefault, Number, PathText, PositiveWhole, Share, Text, Whole, shown
from rag_pipeline.common.yaml_io import YamlFileError, load_yaml_file
from rag_pipeline.embedding.config import EmbeddingConfig
from rag_pipeline.errors import UsageError
from rag_pipeline.evaluation.config import EvaluationConfig
from rag_pipeline.parsing.config import ParseLimits
from rag_pipeline.sources.config import SourceConfig

CONFIG_ENV = "RAG_PIPELINE_CONFIG"
DEFAULT_SOURCE_WAIT_SECONDS = 3600.0  # about the longest a sync of one source takes
MAX_SOURCE_WAIT_SECONDS = 86400.0
MAX_PARSE_WORKERS = 64
MAX_CONFIG_BYTES = 32 * 1024 * 1024  # far above any real config (thousands of sources); a wrong path above it
# Keys that would put credentials in the file; boto3's credential chain is the only way in.
CREDENTIAL_KEYS = ("aws_access_key_id", "aws_secret_access_key", "aws_session_token", "access_key",
                   "secret_key", "access_key_id", "secret_access_key", "session_token", "credentials", "profile")
MAX_KEYS_NAMED = 10  # unknown keys named in one message (a generated file may hold thousands)


class ConfigError(UsageError):
    """The configuration is unusable; the message names the file and the key to fix."""


def _auto_or_count(value: Any) -> Any:
    """'auto' (sized to the machine when a step runs, which may be another machine than the
    one that read the file) or a number of parser processes."""
    if value == "auto":
        raise PydanticUseDefault()
    if isinstance(value, str) or value is None:
        raise ValueError(f"must be 'auto' or a whole number from 1 to {MAX_PARSE_WORKERS}, got {shown(value)}")
    return value


class Config(BaseModel):
    """The whole file; `path` and `root` say where it was read and what its relative paths mean."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    database_url: Text | None = None  # DATABASE_URL in the environment wins
    state_dir: Annotated[PathText, BlankIsDefault] = Path(".rag_pipeline")
    sources: Annotated[tuple[SourceConfig, ...], NullIsDefault] = ()
    embedding: Annotated[EmbeddingConfig, NullIsDefault] = Field(default_factory=EmbeddingConfig)
    evaluation: Annotated[EvaluationConfig, NullIsDefault] = Field(default_factory=EvaluationConfig)
    limits: Annotated[ParseLimits, NullIsDefault] = Field(default_factory=ParseLimits)
    max_failed_share: Share = 0.5  # quarantining more than this share of a run's files fails it
    batch_size: PositiveWhole = 64  # documents per batch through parse/clean/chunk/embed
    # documents per step of the sharded heavy steps (each shard is one Dagster step, which a
    # Celery or Kubernetes executor may run on another machine); one shard never spans sources
    shard_size: PositiveWhole = 512
    blob_store: BlobStoreConfig | None = None  # None: the local folder state_dir/blobs
    # a sync that finds a source held by another run waits this long for it (0: fail at once)
    source_wait_seconds: Number = Field(DEFAULT_SOURCE_WAIT_SECONDS, ge=0.0, le=MAX_SOURCE_WAIT_SECONDS)
    # parser processes side by side in one step process; None ("auto"): one per core, as memory allows
    parse_workers: Annotated[Whole | None, BeforeValidator(_auto_or_count)] = Field(None, ge=1, le=MAX_PARSE_WORKERS)
    alerts: Annotated[AlertsConfig, NullIsDefault] = Field(default_factory=AlertsConfig)  # where alerts go

    _path: Path | None = PrivateAttr(None)
    _root: Path = PrivateAttr(default_factory=Path.cwd)

    @field_validator("sources")
    @classmethod
    def _unique_names(cls, sources: tuple[SourceConfig, ...]) -> tuple[SourceConfig, ...]:
        names = [s.name for s in sources]
        if len(set(names)) != len(names):
            raise ValueError(f"must have unique names, got {shown(names)}")
        return sources

    @property
    def path(self) -> Path | None:
        return self._path

    @property
    def root(self) -> Path:
        return self._root

    @property
    def blob_dir(self) -> Path:
        return self.state_dir / "blobs"

    @property
    def pgdata_dir(self) -> Path:
        return self.state_dir / "pgdata"

    def source(self, name: str) -> SourceConfig:
        for source in self.sources:
            if source.name == name:
                return source
        known = ", ".join(s.name for s in self.sources) or "none"
        raise ConfigError(f"{self.path}: no source named {name!r} (configured: {known})")


def default_config_path() -> Path:
    return Path(os.environ.get(CONFIG_ENV, "rag_pipeline.yaml"))


def load_config(path: str | os.PathLike[str] | None = None) -> Config:
    """Read and validate a config file; absent optional keys take the documented defaults."""
    config_path = Path(path) if path is not None else default_config_path()
    if not config_path.exists():
        raise ConfigError(
            f"config file {config_path} not found; pass --config FILE or set {CONFIG_ENV}"
        )
    try:
        raw = load_yaml_file(config_path, MAX_CONFIG_BYTES) or {}
    except YamlFileError as exc:
        raise ConfigError(f"config file {exc}") from exc
    if not isinstance(raw, dict):
        raise ConfigError(f"{config_path}: top level must be a mapping of keys")
    return config_from_dict(raw, config_path)


def config_from_dict(raw: dict[str, Any], path: Path | None, root: Path | None = None) -> Config:
    root = (root or (path.parent if path else Path.cwd())).resolve()
    where = str(path or "config")
    _refuse_credentials(raw, where)
    try:
        read = Config.model_validate(raw)
    except ValidationError as exc:
        raise ConfigError(f"{where}: {_problem(exc)}") from None
    config = read.model_copy(update={
        "database_url": os.environ.get("DATABASE_URL") or read.database_url,
        "state_dir": _resolve(root, read.state_dir),
        "sources": tuple(s.model_copy(update={"path": _resolve(root, s.path)}) if s.path else s for s in read.sources),
        "evaluation": read.evaluation.model_copy(
            update={"eval_set": _resolve(root, read.evaluation.eval_set) if read.evaluation.eval_set else None}),
    })
    config._path, config._root = path, root
    return config


def _resolve(root: Path, value: str | os.PathLike[str]) -> Path:
    p = Path(os.path.expanduser(str(value)))
    return p if p.is_absolute() else (root / p).resolve()


def _refuse_credentials(raw: Any, where: str) -> None:
    """Credentials never belong in the config file (it is shared, versioned, printed): refuse
    them with a pointer to boto3's standard credential chain, at any depth (walked without
    recursion, so no nesting is too deep for it). Each list or mapping is walked once: YAML
    aliases share them, and a dozen lines of aliases nested nine deep name 9^9 leaves, which a
    walk of every path took minutes to visit."""
    stack: list[tuple[str, Any]] = [("", raw)]
    walked: set[int] = set()
    while stack:
        prefix, node = stack.pop()
        if isinstance(node, (list, dict)):
            if id(node) in walked:
                continue
            walked.add(id(node))
        if isinstance(node, list):
            stack.extend(reversed([(f"{prefix}[{i}]", item) for i, item in enumerate(node)]))
        elif isinstance(node, dict):
            for key in node:
                if str(key).lower() in CREDENTIAL_KEYS:
                    raise ConfigError(
                        f"{where}: {prefix}{key}: credentials are never read from the config file; use boto3's "
                        "standard chain (AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY or AWS_PROFILE in the environment, "
                        "~/.aws/credentials, SSO, or an instance/container role) and remove this key"
                    )
            stack.extend(reversed([(f"{prefix}{key}.", value) for key, value in node.items()]))


def _problem(exc: ValidationError) -> str:
    """The first problem, worded as before the sections were models: unknown keys first (a
    misspelt key is also why a required one seems missing), then in the file's order."""
    errors = exc.errors(include_url=False)
    unknown = [e for e in errors if e["type"] in ("extra_forbidden", "unknown_keys")]
    text, told = _unknown_keys(unknown) if unknown else (_described(errors[0]), 1)
    more = len(errors) - told
    return text + (f" (and {more} more problem{'s' if more > 1 else ''})" if more else "")


def _unknown_keys(unknown: list[ErrorDetails]) -> tuple[str, int]:
    first = unknown[0]
    if first["type"] == "unknown_keys":  # a source's keys, checked against its kind
        parent, keys, known = first["loc"], first["ctx"]["keys"], first["ctx"]["known"]
        told = 1
    else:
        parent = first["loc"][:-1]
        same = [e for e in unknown if e["type"] == "extra_forbidden" and e["loc"][:-1] == parent]
        keys, told = sorted(str(e["loc"][-1]) for e in same), len(same)
        model, _ = _walk(parent)
        known = list(model.model_fields) if isinstance(model, type) and issubclass(model, BaseModel) else []
    prefix = f"{_dotted(parent)}." if parent else ""
    named = ", ".join(prefix + (k if len(k) <= 80 and k.isprintable() else shown(k)) for k in keys[:MAX_KEYS_NAMED])
    if len(keys) > MAX_KEYS_NAMED:
        named += f" and {len(keys) - MAX_KEYS_NAMED} more"
    return f"unknown key {named}; known here: {', '.join(known)}", told


def _described(error: ErrorDetails) -> str:
    loc, kind, ctx = error["loc"], error["type"], error.get("ctx") or {}
    path, got = _dotted(loc), f", got {shown(error['input'])}"
    if kind == "missing":
        return f"{_dotted(loc[:-1]) or 'the file'} needs a '{loc[-1]}'"
    if kind in ("value_error", "assertion_error"):  # a validator's own words, written to follow the key
        reason = str(ctx.get("error", error["msg"]))
        return f"{path}: {reason}" if reason.startswith("'") else f"{path} {reason}".strip()
    typ, fields = _walk(loc)
    described = [(end, field) for end, field in fields if field.description]
    if described:  # the field says in words what it must be
        end, field = described[-1]
        return f"{_dotted(loc[:end])} must be {field.description}{got}"
    bounds = {type(m).__name__: m for m in fields[-1][1].metadata} if fields and fields[-1][0] == len(loc) else {}
    if typ is int and "Ge" in bounds and "Le" in bounds:
        return f"{path} must be a whole number from {bounds['Ge'].ge} to {bounds['Le'].le}{got}"
    if kind in ("model_type", "model_attributes_type", "dict_type"):
        return f"'{path}' must be a mapping of keys{got}"
    return f"{path} {_reason(kind, ctx, error['msg'])}{got}"


def _reason(kind: str, ctx: dict[str, Any], msg: str) -> str:
    if kind.startswith("int_"):
        return "must be a whole number"
    if kind.startswith("bool_"):
        return "must be true or false"
    if kind in ("float_type", "float_parsing", "finite_number"):
        return "must be a number"
    if kind in ("string_type", "path_type"):
        return "must be a string"
    if kind == "greater_than":  # an int bound means a count, a float bound a measure
        return "must be positive" if ctx["gt"] == 0 and isinstance(ctx["gt"], int) else f"must be above {ctx['gt']:g}"
    reasons = {"greater_than_equal": "must be at least {ge:g}", "less_than_equal": "must be at most {le:g}",
               "literal_error": "must be one of {expected}", "string_too_short": "must be a non-empty string",
               "list_type": "must be a list", "tuple_type": "must be a list"}
    return reasons[kind].format(**ctx) if kind in reasons else msg[:1].lower() + msg[1:]


def _dotted(loc: tuple[int | str, ...]) -> str:
    """('sources', 0, 'max_tombstone_share') -> sources[0].max_tombstone_share"""
    return "".join(f"[{part}]" if isinstance(part, int) else f".{part}" for part in loc).lstrip(".")


def _walk(loc: tuple[int | str, ...]) -> tuple[Any, list[tuple[int, FieldInfo]]]:
    """Along an error's location from `Config`: the type reached, and each named field passed
    with the length of the location up to it."""
    typ: Any = Config
    fields: list[tuple[int, FieldInfo]] = []
    for i, part in enumerate(loc):
        typ = _bare(typ)
        if isinstance(typ, type) and issubclass(typ, BaseModel):
            field = typ.model_fields.get(part) if isinstance(part, str) else None
            if field is None:
                return None, fields
            fields.append((i + 1, field))
            typ = field.annotation
        else:  # an item of a tuple, or a value of a mapping
            args = [a for a in typing.get_args(typ) if a is not Ellipsis]
            typ = args[-1] if args else None
    return _bare(typ), fields


def _bare(typ: Any) -> Any:
    """X for Annotated[X, ...] and X | None."""
    while True:
        args = typing.get_args(typ)
        if typing.get_origin(typ) is Annotated:
            typ = args[0]
        elif typing.get_origin(typ) in (typing.Union, types.UnionType) and type(None) in args:
            typ = next(a for a in args if a is not type(None))
        else:
            return typ


__all__ = ["CONFIG_ENV", "Config", "ConfigError", "config_from_dict", "default_config_path", "load_config"]

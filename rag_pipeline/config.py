"""Loading `rag_pipeline.yaml` (the stable configuration contract in DESIGN.md).

Every relative path is resolved against the config file's folder so a config means the same
thing whatever the working directory of the CLI, `dagster dev` or a test.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rag_pipeline.blobs.config import BlobStoreConfig
from rag_pipeline.common.yaml_io import YAMLError, load_yaml
from rag_pipeline.embedding.config import EmbeddingConfig
from rag_pipeline.errors import UsageError
from rag_pipeline.evaluation.config import DEFAULT_THRESHOLDS, EvaluationConfig
from rag_pipeline.parsing.types import ParseLimits
from rag_pipeline.sources.config import SourceConfig

CONFIG_ENV = "RAG_PIPELINE_CONFIG"
SOURCE_KINDS = ("filesystem", "s3")
DEFAULT_SOURCE_WAIT_SECONDS = 3600.0  # about the longest a sync of one source takes
MAX_SOURCE_WAIT_SECONDS = 86400.0
# S3 per-object requests in flight per source: each holds a pooled connection; S3 serves
# thousands per prefix per second, but a small MinIO or a proxy does not, so the cap stays modest.
MAX_CONCURRENT_REQUESTS = 128


class ConfigError(UsageError):
    """The configuration is unusable; the message names the file and the key to fix."""


@dataclass(frozen=True)
class Config:
    path: Path | None
    root: Path
    database_url: str | None
    sources: tuple[SourceConfig, ...]
    embedding: EmbeddingConfig
    evaluation: EvaluationConfig
    state_dir: Path
    limits: ParseLimits = ParseLimits()
    max_failed_share: float = 0.5  # quarantining more than this share of a run's files fails it
    batch_size: int = 64  # documents per batch through parse/clean/chunk/embed
    # documents per step of the sharded heavy steps (each shard is one Dagster step, which a
    # Celery or Kubernetes executor may run on another machine); one shard never spans sources
    shard_size: int = 512
    blob_store: BlobStoreConfig | None = None  # None: the local folder state_dir/blobs
    # a sync that finds a source held by another run waits this long for it (0: fail at once)
    source_wait_seconds: float = DEFAULT_SOURCE_WAIT_SECONDS
    # parser processes side by side in one step process; None ("auto"): one per core, as memory allows
    parse_workers: int | None = None

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
    if not config_path.is_file():
        raise ConfigError(
            f"config file {config_path} not found; pass --config FILE or set {CONFIG_ENV}"
        )
    try:
        raw = load_yaml(config_path.read_text(encoding="utf-8")) or {}
    except (YAMLError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{config_path}: not valid YAML: {exc}") from exc
    if not isinstance(raw, dict):
        raise ConfigError(f"{config_path}: top level must be a mapping of keys")
    return config_from_dict(raw, config_path)


TOP_LEVEL_KEYS = ("database_url", "state_dir", "sources", "embedding", "evaluation", "limits", "max_failed_share",
                  "batch_size", "shard_size", "blob_store", "source_wait_seconds", "parse_workers")
SOURCE_KEYS = {
    "filesystem": ("name", "kind", "path", "deny", "max_tombstone_share", "default_groups", "schedule", "watch"),
    "s3": ("name", "kind", "bucket", "prefix", "endpoint_url", "region", "deny", "max_tombstone_share",
           "default_groups", "object_acl", "max_attempts", "retry_mode", "concurrent_requests", "schedule", "watch"),
}
BLOB_STORE_KEYS = ("url", "endpoint_url", "region")
# Keys that would put credentials in the file; boto3's credential chain is the only way in.
CREDENTIAL_KEYS = ("aws_access_key_id", "aws_secret_access_key", "aws_session_token", "access_key",
                   "secret_key", "access_key_id", "secret_access_key", "session_token", "credentials", "profile")
EMBEDDING_KEYS = ("model", "batch_size", "device", "backend")
EMBEDDING_BACKENDS = ("auto", "torch-fp32", "onnx-fp32", "torch-bf16")
EVALUATION_KEYS = ("eval_set", "k", "thresholds", "refusal_score")


def config_from_dict(raw: dict[str, Any], path: Path | None, root: Path | None = None) -> Config:
    root = (root or (path.parent if path else Path.cwd())).resolve()
    where = str(path or "config")
    _refuse_credentials(raw, where, "")
    _known(raw, TOP_LEVEL_KEYS, where, "")
    sources = tuple(_source(s, root, where, i) for i, s in enumerate(_list(raw, "sources", where)))
    names = [s.name for s in sources]
    if len(set(names)) != len(names):
        raise ConfigError(f"{where}: source names must be unique, got {names}")
    database_url = os.environ.get("DATABASE_URL") or _optional_str(raw, "database_url", where, "database_url")
    return Config(
        path=path,
        root=root,
        database_url=database_url,
        sources=sources,
        embedding=_embedding(_mapping(raw, "embedding", where), where),
        evaluation=_evaluation(_mapping(raw, "evaluation", where), root, where),
        state_dir=_resolve(root, _optional_str(raw, "state_dir", where, "state_dir") or ".rag_pipeline"),
        limits=_limits(_mapping(raw, "limits", where), where),
        max_failed_share=_share(raw.get("max_failed_share", 0.5), "max_failed_share", where),
        batch_size=_positive_int(raw.get("batch_size", 64), "batch_size", where),
        shard_size=_positive_int(raw.get("shard_size", 512), "shard_size", where),
        blob_store=_blob_store(raw.get("blob_store"), where),
        source_wait_seconds=_number(raw.get("source_wait_seconds", DEFAULT_SOURCE_WAIT_SECONDS), "source_wait_seconds",
                                    where, low=0.0, high=MAX_SOURCE_WAIT_SECONDS),
        parse_workers=_parse_workers(raw.get("parse_workers", "auto"), where),
    )


MAX_PARSE_WORKERS = 64


def _parse_workers(value: Any, where: str) -> int | None:
    """'auto' (sized to the machine when a step runs, which may be another machine than the
    one that read the file) or a number of parser processes."""
    if value == "auto":
        return None
    if isinstance(value, str):
        raise ConfigError(f"{where}: parse_workers must be 'auto' or a whole number from 1 to {MAX_PARSE_WORKERS}, "
                          f"got {value!r}")
    return _int_in_range(value, "parse_workers", where, 1, MAX_PARSE_WORKERS)


def _refuse_credentials(raw: Any, where: str, prefix: str) -> None:
    """Credentials never belong in the config file (it is shared, versioned, printed): refuse
    them with a pointer to boto3's standard credential chain, at any depth."""
    if isinstance(raw, list):
        for i, item in enumerate(raw):
            _refuse_credentials(item, where, f"{prefix}[{i}]")
        return
    if not isinstance(raw, dict):
        return
    for key, value in raw.items():
        if str(key).lower() in CREDENTIAL_KEYS:
            raise ConfigError(
                f"{where}: {prefix}{key}: credentials are never read from the config file; use boto3's "
                "standard chain (AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY or AWS_PROFILE in the environment, "
                "~/.aws/credentials, SSO, or an instance/container role) and remove this key"
            )
        _refuse_credentials(value, where, f"{prefix}{key}.")


def _blob_store(raw: Any, where: str) -> BlobStoreConfig | None:
    if raw is None:
        return None
    if isinstance(raw, str):
        raw = {"url": raw}
    if not isinstance(raw, dict):
        raise ConfigError(f"{where}: blob_store must be s3://BUCKET/PREFIX or a mapping with url, endpoint_url, region")
    _known(raw, BLOB_STORE_KEYS, where, "blob_store.")
    url = raw.get("url")
    from rag_pipeline.common.s3 import split_s3_url

    try:
        split_s3_url(url if isinstance(url, str) else "")
    except ValueError as exc:
        raise ConfigError(f"{where}: blob_store: {exc}; the local folder is the default, omit the key for it") from exc
    return BlobStoreConfig(
        url=url,
        endpoint_url=_optional_str(raw, "endpoint_url", where, "blob_store.endpoint_url"),
        region=_optional_str(raw, "region", where, "blob_store.region"),
    )


def _known(raw: dict[str, Any], allowed: tuple[str, ...], where: str, prefix: str) -> None:
    """Refuse keys this version does not know: a misspelt key would otherwise be ignored silently."""
    unknown = sorted(str(k) for k in raw if k not in allowed)
    if unknown:
        keys = ", ".join(f"{prefix}{k}" for k in unknown)
        raise ConfigError(f"{where}: unknown key {keys}; known here: {', '.join(allowed)}")


def _mapping(raw: dict[str, Any], key: str, where: str) -> dict[str, Any]:
    value = raw.get(key)
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise ConfigError(f"{where}: '{key}' must be a mapping of keys")
    return value


def _optional_str(raw: dict[str, Any], key: str, where: str, label: str) -> str | None:
    value = raw.get(key)
    if value is not None and not isinstance(value, str):
        raise ConfigError(f"{where}: {label} must be a string")
    return value


def _list(raw: dict[str, Any], key: str, where: str) -> list[Any]:
    value = raw.get(key) or []
    if not isinstance(value, list):
        raise ConfigError(f"{where}: '{key}' must be a list")
    return value


def _resolve(root: Path, value: str | os.PathLike[str]) -> Path:
    p = Path(os.path.expanduser(str(value)))
    return p if p.is_absolute() else (root / p).resolve()


def _source(raw: Any, root: Path, where: str, index: int) -> SourceConfig:
    if not isinstance(raw, dict) or not raw.get("name"):
        raise ConfigError(f"{where}: sources[{index}] needs a 'name'")
    name = str(raw["name"])
    if not name.replace("-", "").replace("_", "").isalnum() or not name.isascii():
        raise ConfigError(f"{where}: source name {name!r} may only hold letters, digits, '-' and '_'")
    kind = raw.get("kind", "filesystem")
    if kind not in SOURCE_KINDS:
        raise ConfigError(f"{where}: source {name!r} has kind {kind!r}; use one of {SOURCE_KINDS}")
    _known(raw, SOURCE_KEYS[kind], where, f"sources[{index}].")
    deny = raw.get("deny") or []
    if not isinstance(deny, list) or not all(isinstance(d, str) for d in deny):
        raise ConfigError(f"{where}: source {name!r}: 'deny' must be a list of glob patterns")
    share = _share(raw.get("max_tombstone_share", 0.5), f"sources[{index}].max_tombstone_share", where)
    watch = raw.get("watch", False)
    if not isinstance(watch, bool):
        raise ConfigError(f"{where}: source {name!r}: 'watch' must be true or false")
    default_groups = raw.get("default_groups") or []
    if not isinstance(default_groups, list) or not all(isinstance(g, str) and g.strip() for g in default_groups):
        raise ConfigError(f"{where}: sources[{index}].default_groups must be a list of group names, e.g. [all-staff]")
    common = dict(name=name, kind=kind, deny=tuple(deny), max_tombstone_share=share,
                  default_groups=tuple(sorted({g.strip() for g in default_groups})),
                  schedule=_cron(raw.get("schedule"), f"sources[{index}].schedule", where), watch=watch)
    if kind == "filesystem":
        if not isinstance(raw.get("path"), str) or not raw["path"]:
            raise ConfigError(f"{where}: filesystem source {name!r} needs a 'path'")
        return SourceConfig(path=_resolve(root, raw["path"]), **common)
    return _s3_source(raw, where, index, common)


def _s3_source(raw: dict[str, Any], where: str, index: int, common: dict[str, Any]) -> SourceConfig:
    from rag_pipeline.common.s3 import RETRY_MODES
    from rag_pipeline.sources.s3 import OBJECT_ACL_KINDS

    name, key = common["name"], f"sources[{index}]"
    if not isinstance(raw.get("bucket"), str) or not raw["bucket"] or "/" in raw["bucket"]:
        raise ConfigError(f"{where}: s3 source {name!r} needs a 'bucket' (a bucket name, no s3:// or '/')")
    prefix = raw.get("prefix", "")
    if not isinstance(prefix, str):
        raise ConfigError(f"{where}: {key}.prefix must be a string such as contracts/")
    object_acl = raw.get("object_acl", list(OBJECT_ACL_KINDS))
    if not isinstance(object_acl, list) or not set(object_acl) <= set(OBJECT_ACL_KINDS):
        raise ConfigError(f"{where}: {key}.object_acl must be a list of {list(OBJECT_ACL_KINDS)} (or [])")
    retry_mode = raw.get("retry_mode", "standard")
    if retry_mode not in RETRY_MODES:
        raise ConfigError(f"{where}: {key}.retry_mode must be one of {RETRY_MODES}, got {retry_mode!r}")
    return SourceConfig(
        bucket=raw["bucket"],
        prefix=prefix,
        endpoint_url=_optional_str(raw, "endpoint_url", where, f"{key}.endpoint_url"),
        region=_optional_str(raw, "region", where, f"{key}.region"),
        object_acl=tuple(object_acl),
        max_attempts=_positive_int(raw.get("max_attempts", 5), f"{key}.max_attempts", where),
        retry_mode=retry_mode,
        concurrent_requests=_int_in_range(raw.get("concurrent_requests", 16), f"{key}.concurrent_requests", where,
                                          1, MAX_CONCURRENT_REQUESTS),
        **common,
    )


_CRON_FIELDS = (("minute", 0, 59), ("hour", 0, 23), ("day of month", 1, 31), ("month", 1, 12), ("day of week", 0, 7))
_CRON_NAMES = {**{m: i + 1 for i, m in enumerate("jan feb mar apr may jun jul aug sep oct nov dec".split())},
               **{d: i for i, d in enumerate("sun mon tue wed thu fri sat".split())}}
_CRON_MACROS = ("@hourly", "@daily", "@weekly", "@monthly")


def _cron(value: Any, key: str, where: str) -> str | None:
    """A standard 5-field cron expression (or @hourly/@daily/@weekly/@monthly), checked here so
    a typo is a config error at load, not a schedule that silently never fires."""
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip():
        raise ConfigError(f"{where}: {key} must be a cron string such as '0 2 * * *'")
    text = value.strip()
    if text in _CRON_MACROS:
        return text
    parts = text.split()
    if len(parts) != 5:
        raise ConfigError(f"{where}: {key} {value!r} must have 5 fields (minute hour day month weekday) "
                          f"or be one of {', '.join(_CRON_MACROS)}")
    for part, (field_name, low, high) in zip(parts, _CRON_FIELDS, strict=True):
        for item in part.split(","):
            if not _cron_item_ok(item.lower(), low, high):
                raise ConfigError(f"{where}: {key} {value!r}: bad {field_name} field {part!r} "
                                  f"(numbers {low}-{high}, '*', ranges a-b, steps /n)")
    return text


def _cron_item_ok(item: str, low: int, high: int) -> bool:
    base, _, step = item.partition("/")
    if step and (not step.isdigit() or int(step) == 0):
        return False
    if base == "*":
        return True
    ends = base.split("-")
    if len(ends) > 2:
        return False
    values = [_CRON_NAMES.get(e, int(e) if e.isdigit() else None) for e in ends]
    return all(v is not None and low <= v <= high for v in values) and (len(values) == 1 or values[0] <= values[1])


def _embedding(raw: dict[str, Any], where: str) -> EmbeddingConfig:
    _known(raw, EMBEDDING_KEYS, where, "embedding.")
    device = raw.get("device", "cpu")
    if not isinstance(device, str) or not device:
        raise ConfigError(f"{where}: embedding.device must be a torch device name such as cpu")
    backend = raw.get("backend", "auto")
    if backend not in EMBEDDING_BACKENDS:
        raise ConfigError(f"{where}: embedding.backend must be one of {', '.join(EMBEDDING_BACKENDS)}, not {backend!r}")
    return EmbeddingConfig(
        model=_optional_str(raw, "model", where, "embedding.model"),
        batch_size=_positive_int(raw.get("batch_size", 32), "embedding.batch_size", where),
        device=device,
        backend=backend,
    )


def _evaluation(raw: dict[str, Any], root: Path, where: str) -> EvaluationConfig:
    _known(raw, EVALUATION_KEYS, where, "evaluation.")
    thresholds = dict(DEFAULT_THRESHOLDS)
    given = raw.get("thresholds") or {}
    if not isinstance(given, dict):
        raise ConfigError(f"{where}: evaluation.thresholds must be a mapping")
    for key, value in given.items():
        thresholds[str(key)] = _number(value, f"evaluation.thresholds.{key}", where, low=0.0)
    eval_set = _optional_str(raw, "eval_set", where, "evaluation.eval_set")
    return EvaluationConfig(
        eval_set=_resolve(root, eval_set) if eval_set else None,
        k=_positive_int(raw.get("k", 10), "evaluation.k", where),
        thresholds=thresholds,
        refusal_score=_number(raw.get("refusal_score", 0.35), "evaluation.refusal_score", where, low=-1.0, high=1.0),
    )


def _limits(raw: dict[str, Any], where: str) -> ParseLimits:
    fields = ParseLimits.__dataclass_fields__
    _known(raw, tuple(fields), where, "limits.")
    values: dict[str, Any] = {}
    for key, value in raw.items():
        default = fields[key].default
        if isinstance(default, bool):
            if not isinstance(value, bool):
                raise ConfigError(f"{where}: limits.{key} must be true or false")
            values[key] = value
        elif isinstance(default, str):
            if not isinstance(value, str) or not value:
                raise ConfigError(f"{where}: limits.{key} must be a non-empty string")
            values[key] = value
        elif isinstance(default, int):
            values[key] = _positive_int(value, f"limits.{key}", where)
        else:
            values[key] = _number(value, f"limits.{key}", where, low=0.0, exclusive_low=True)
    return ParseLimits(**values)


def _number(value: Any, key: str, where: str, *, low: float | None = None, high: float | None = None,
            exclusive_low: bool = False) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value != value:  # NaN is not a number here
        raise ConfigError(f"{where}: {key} must be a number, got {value!r}")
    number = float(value)
    if low is not None and (number < low or (exclusive_low and number == low)):
        raise ConfigError(f"{where}: {key} must be {'above' if exclusive_low else 'at least'} {low:g}, got {value!r}")
    if high is not None and number > high:
        raise ConfigError(f"{where}: {key} must be at most {high:g}, got {value!r}")
    return number


def _share(value: Any, key: str, where: str) -> float:
    return _number(value, key, where, low=0.0, high=1.0)


def _positive_int(value: Any, key: str, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ConfigError(f"{where}: {key} must be a whole number, got {value!r}")
    if value <= 0:
        raise ConfigError(f"{where}: {key} must be positive, got {value!r}")
    return value


def _int_in_range(value: Any, key: str, where: str, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise ConfigError(f"{where}: {key} must be a whole number from {low} to {high}, got {value!r}")
    return value

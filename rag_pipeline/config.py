"""Loading `rag_pipeline.yaml` (the stable configuration contract in DESIGN.md).

Every relative path is resolved against the config file's folder so a config means the same
thing whatever the working directory of the CLI, `dagster dev` or a test.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rag_pipeline.errors import UsageError
from rag_pipeline.parsing.types import ParseLimits
from rag_pipeline.yaml_io import YAMLError, load_yaml

CONFIG_ENV = "RAG_PIPELINE_CONFIG"
DEFAULT_THRESHOLDS = {"evidence_recall": 0.8, "acl_leaks": 0, "superseded_hits": 0}
SOURCE_KINDS = ("filesystem", "s3")


class ConfigError(UsageError):
    """The configuration is unusable; the message names the file and the key to fix."""


@dataclass(frozen=True)
class SourceConfig:
    name: str
    kind: str
    path: Path | None = None  # filesystem
    bucket: str | None = None  # s3
    prefix: str = ""
    endpoint_url: str | None = None
    region: str | None = None
    deny: tuple[str, ...] = ()  # glob patterns (relative URIs) never indexed
    max_tombstone_share: float = 0.5  # a run that would tombstone more than this stops


@dataclass(frozen=True)
class EmbeddingConfig:
    model: str | None = None  # None = the packaged all-MiniLM-L6-v2
    batch_size: int = 32
    device: str = "cpu"


@dataclass(frozen=True)
class EvaluationConfig:
    eval_set: Path | None = None
    k: int = 10
    thresholds: dict[str, float] = field(default_factory=lambda: dict(DEFAULT_THRESHOLDS))
    refusal_score: float = 0.35  # best-hit similarity under which the index "has no answer"


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


def config_from_dict(raw: dict[str, Any], path: Path | None, root: Path | None = None) -> Config:
    root = (root or (path.parent if path else Path.cwd())).resolve()
    where = str(path or "config")
    sources = tuple(_source(s, root, where, i) for i, s in enumerate(_list(raw, "sources", where)))
    names = [s.name for s in sources]
    if len(set(names)) != len(names):
        raise ConfigError(f"{where}: source names must be unique, got {names}")
    state_dir = _resolve(root, raw.get("state_dir", ".rag_pipeline"))
    return Config(
        path=path,
        root=root,
        database_url=os.environ.get("DATABASE_URL") or raw.get("database_url"),
        sources=sources,
        embedding=_embedding(raw.get("embedding") or {}, where),
        evaluation=_evaluation(raw.get("evaluation") or {}, root, where),
        state_dir=state_dir,
        limits=_limits(raw.get("limits") or {}, where),
        max_failed_share=float(raw.get("max_failed_share", 0.5)),
        batch_size=_positive_int(raw.get("batch_size", 64), "batch_size", where),
    )


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
    if not name.replace("-", "").replace("_", "").isalnum():
        raise ConfigError(f"{where}: source name {name!r} may only hold letters, digits, '-' and '_'")
    kind = raw.get("kind", "filesystem")
    if kind not in SOURCE_KINDS:
        raise ConfigError(f"{where}: source {name!r} has kind {kind!r}; use one of {SOURCE_KINDS}")
    deny = raw.get("deny") or []
    if not isinstance(deny, list) or not all(isinstance(d, str) for d in deny):
        raise ConfigError(f"{where}: source {name!r}: 'deny' must be a list of glob patterns")
    share = float(raw.get("max_tombstone_share", 0.5))
    if not 0 <= share <= 1:
        raise ConfigError(f"{where}: source {name!r}: max_tombstone_share must be within 0..1")
    common = dict(name=name, kind=kind, deny=tuple(deny), max_tombstone_share=share)
    if kind == "filesystem":
        if not raw.get("path"):
            raise ConfigError(f"{where}: filesystem source {name!r} needs a 'path'")
        return SourceConfig(path=_resolve(root, raw["path"]), **common)
    if not raw.get("bucket"):
        raise ConfigError(f"{where}: s3 source {name!r} needs a 'bucket'")
    return SourceConfig(
        bucket=str(raw["bucket"]),
        prefix=str(raw.get("prefix", "")),
        endpoint_url=raw.get("endpoint_url"),
        region=raw.get("region"),
        **common,
    )


def _embedding(raw: dict[str, Any], where: str) -> EmbeddingConfig:
    return EmbeddingConfig(
        model=raw.get("model"),
        batch_size=_positive_int(raw.get("batch_size", 32), "embedding.batch_size", where),
        device=str(raw.get("device", "cpu")),
    )


def _evaluation(raw: dict[str, Any], root: Path, where: str) -> EvaluationConfig:
    thresholds = dict(DEFAULT_THRESHOLDS)
    given = raw.get("thresholds") or {}
    if not isinstance(given, dict):
        raise ConfigError(f"{where}: evaluation.thresholds must be a mapping")
    for key, value in given.items():
        try:
            thresholds[str(key)] = float(value)
        except (TypeError, ValueError) as exc:
            raise ConfigError(f"{where}: evaluation.thresholds.{key} must be a number") from exc
    eval_set = raw.get("eval_set")
    return EvaluationConfig(
        eval_set=_resolve(root, eval_set) if eval_set else None,
        k=_positive_int(raw.get("k", 10), "evaluation.k", where),
        thresholds=thresholds,
        refusal_score=float(raw.get("refusal_score", 0.35)),
    )


def _limits(raw: dict[str, Any], where: str) -> ParseLimits:
    known = set(ParseLimits.__dataclass_fields__)
    unknown = set(raw) - known
    if unknown:
        raise ConfigError(f"{where}: unknown limits {sorted(unknown)}; known: {sorted(known)}")
    return ParseLimits(**raw)


def _positive_int(value: Any, key: str, where: str) -> int:
    try:
        number = int(value)
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"{where}: {key} must be an integer") from exc
    if number <= 0:
        raise ConfigError(f"{where}: {key} must be positive")
    return number

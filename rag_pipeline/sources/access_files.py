"""Folder ACLs from `_access.yaml` files (format in DESIGN.md and README).

An access file applies to its folder and everything below until a deeper one replaces it;
`files:` overrides single files of its own folder. No access file at all means default deny.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Any

from rag_pipeline.common.yaml_io import YAMLError, load_yaml
from rag_pipeline.errors import PipelineError

ACCESS_FILE = "_access.yaml"
MAX_ACCESS_FILE_BYTES = 1024 * 1024


class AccessFileError(PipelineError):
    """An access file is malformed; the message names it and what to fix."""


@dataclass(frozen=True)
class AccessRule:
    groups: tuple[str, ...] | None  # None: this file sets no folder groups (inherits)
    files: dict[str, tuple[str, ...]] = field(default_factory=dict)


def parse_access_file(text: str, where: str) -> AccessRule:
    try:
        raw: Any = load_yaml(text)
    except YAMLError as exc:
        raise AccessFileError(f"{where}: not valid YAML ({exc}); fix it or the folder cannot be synced") from exc
    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        raise AccessFileError(f"{where}: must be a mapping with 'groups' and optional 'files'")
    unknown = set(raw) - {"groups", "files"}
    if unknown:
        raise AccessFileError(f"{where}: unknown keys {sorted(unknown)}; allowed: groups, files")
    groups = _groups(raw["groups"], f"{where}: groups") if "groups" in raw else None
    files_raw = raw.get("files") or {}
    if not isinstance(files_raw, dict):
        raise AccessFileError(f"{where}: 'files' must map file names to group lists")
    files: dict[str, tuple[str, ...]] = {}
    for name, value in files_raw.items():
        if not isinstance(name, str) or "/" in name or name in ("", ".", ".."):
            raise AccessFileError(f"{where}: files key {name!r} must be a file name in this folder")
        key = normalise_name(name)
        if key in files:
            raise AccessFileError(f"{where}: files names {name!r} twice (the same name in another Unicode form); "
                                  "keep one entry per file")
        files[key] = _groups(value, f"{where}: files.{name}")
    return AccessRule(groups=groups, files=files)


def with_default_groups(root: AccessRule | None, default_groups: tuple[str, ...]) -> AccessRule | None:
    """The source root's rule once a source's configured `default_groups` apply: they act as an
    implicit root access file, which a real root access file setting `groups` replaces (its
    `files:` overrides are kept either way). Without default groups the root rule is unchanged."""
    if not default_groups or (root is not None and root.groups is not None):
        return root
    return AccessRule(groups=default_groups, files=root.files if root else {})


def normalise_name(name: str) -> str:
    """Names compare in Unicode NFC: the same name typed on Linux (NFC) and stored by macOS
    (NFD) must match, or a `files:` override would silently not apply."""
    return unicodedata.normalize("NFC", name)


def _groups(value: Any, where: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(g, str) and g.strip() for g in value):
        raise AccessFileError(f"{where} must be a list of group names, e.g. [all-staff]")
    return tuple(sorted({g.strip() for g in value}))


class AccessResolver:
    """Resolves a file's groups from the rules of its folder chain. Rules are registered per
    folder ('' is the root) before files are resolved."""

    def __init__(self) -> None:
        self._rules: dict[str, AccessRule] = {}

    def add(self, folder: str, rule: AccessRule) -> None:
        self._rules[folder] = rule

    def groups_for(self, uri: str) -> tuple[str, ...]:
        path = PurePosixPath(uri)
        folder = "" if str(path.parent) == "." else str(path.parent)
        own = self._rules.get(folder)
        name = normalise_name(path.name)
        if own and name in own.files:
            return own.files[name]
        while True:
            rule = self._rules.get(folder)
            if rule and rule.groups is not None:
                return rule.groups
            if folder == "":
                return ()
            parent = str(PurePosixPath(folder).parent)
            folder = "" if parent == "." else parent

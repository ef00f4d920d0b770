"""Folder ACLs from `_access.yaml` files (format in DESIGN.md and README).

An access file applies to its folder and everything below until a deeper one replaces it;
`files:` overrides single files of its own folder. No access file at all means default deny.
"""

from __future__ import annotations

import difflib
import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Any

from rag_pipeline.common.config import shown
from rag_pipeline.common.groups import group_problem
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
        raise AccessFileError(f"{where}: unknown keys {', '.join(sorted(map(shown, unknown)))}; allowed: groups, files")
    groups = _groups(raw["groups"], f"{where}: groups") if "groups" in raw else None
    files_raw = raw.get("files") or {}
    if not isinstance(files_raw, dict):
        raise AccessFileError(f"{where}: 'files' must map file names to group lists")
    files: dict[str, tuple[str, ...]] = {}
    for name, value in files_raw.items():
        if not isinstance(name, str) or "/" in name or name in ("", ".", ".."):
            raise AccessFileError(f"{where}: files key {shown(name)} must be a file name in this folder")
        key = normalise_name(name)
        if key in files:
            raise AccessFileError(f"{where}: files names {shown(name)} twice (the same name in another Unicode form); "
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
    for group in value:
        problem = group_problem(group.strip())
        if problem:
            raise AccessFileError(f"{where}: {problem}; fix the group name or the folder cannot be synced")
    return tuple(sorted({g.strip() for g in value}))


def check_overrides(rule: AccessRule, where: str, names: Iterable[str]) -> None:
    """Every `files:` key must name a file of the access file's own folder (`names`: every file
    there, hidden or not). A key that matches none (a case difference, a trailing space, a typo,
    a glob, a file since deleted or renamed) would leave that file with the folder's groups,
    wider than its author meant: an AccessFileError naming the key, never a silent fallback."""
    present = {normalise_name(n): n for n in names}
    for key in rule.files:
        if key in present:
            continue
        raise AccessFileError(
            f"{where}: files key {key!r} matches no file in its folder{_closest(key, list(present.values()))}; "
            "keys are exact file names (same case, no extra spaces, no globs). Fix the name, or remove the "
            "entry if the file was deleted or renamed; until then this source is not synced"
        )


def _closest(key: str, names: list[str]) -> str:
    if any(c in key for c in "*?["):
        return " (globs are not supported: name each file)"
    folded = [n for n in names if normalise_name(n).casefold().strip() == key.casefold().strip()]
    near = folded or difflib.get_close_matches(key, names, n=1, cutoff=0.8)
    return f" (did you mean {near[0]!r}?)" if near else ""


# A name that is an access file's once case, spaces, invisible characters, full-width forms,
# '-' for '_' and a leading '_' are set aside; or one typo from it; or `_access` with another
# configuration extension or none. Such a file is neither an access file nor content: it is
# refused. (`access.txt` or `access.md` without the '_' are ordinary documents.)
_LOOKALIKE_EXTENSIONS = ("yaml", "yml", "json", "toml", "txt", "conf", "cfg", "ini")
_LOOKALIKE_STEM = re.compile(r"^_+access(\.(" + "|".join(_LOOKALIKE_EXTENSIONS) + r"))?$")


def is_lookalike(name: str) -> bool:
    """Whether `name` is spelled like an access file without being one (`_access.yml`,
    `_Access.yaml`, `_ACCESS.YAML`, `_access.yaml `, `access.yaml`, `_acess.yaml`...). Hidden
    names are not: they are never listed (macOS copies `._access.yaml` beside the real one)."""
    if name == ACCESS_FILE or name.startswith("."):
        return False
    skeleton = "".join(c for c in unicodedata.normalize("NFKC", name).casefold()
                       if not c.isspace() and unicodedata.category(c) not in ("Cf", "Cc")).replace("-", "_")
    if _LOOKALIKE_STEM.match(skeleton):
        return True
    underscored = skeleton if skeleton.startswith("_") else "_" + skeleton
    return any(_one_edit_apart(underscored, target) for target in (ACCESS_FILE, "_access.yml"))


def _one_edit_apart(a: str, b: str) -> bool:
    """At most one character inserted, deleted, replaced or two neighbours swapped."""
    if a == b:
        return True
    if abs(len(a) - len(b)) > 1:
        return False
    if len(a) == len(b):
        diff = [i for i in range(len(a)) if a[i] != b[i]]
        return len(diff) == 1 or (len(diff) == 2 and diff[1] == diff[0] + 1
                                  and a[diff[0]] == b[diff[1]] and a[diff[1]] == b[diff[0]])
    short, long = (a, b) if len(a) < len(b) else (b, a)
    i = next((i for i in range(len(short)) if short[i] != long[i]), len(short))
    return short[i:] == long[i + 1:]


def lookalike_error(where: str) -> AccessFileError:
    return AccessFileError(
        f"{where}: named like an access file but not exactly {ACCESS_FILE!r}; it is neither read as one "
        f"nor indexed. Rename it to {ACCESS_FILE} (lower case, no spaces) or remove it; until then this "
        "source is not synced"
    )


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

"""YAML reading for config, access files and evaluation sets: always the safe loader, in its
C implementation when libyaml is present (several times faster on large evaluation sets).
Whatever the text, the answer is a value or a YAMLError (`UnreadableValueError` for values
Python cannot build), which each reader turns into its own clear error.

Duplicate keys are an error: YAML's default of "the last one wins" would let a second
`files:` entry for the same name silently replace the first one's groups."""

from __future__ import annotations

import stat
from pathlib import Path
from typing import Any

import yaml

_Base = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
YAMLError = yaml.YAMLError


class DuplicateKeyError(yaml.constructor.ConstructorError):
    """A mapping names the same key twice."""


class _Loader(_Base):  # type: ignore[misc,valid-type]
    pass


def _mapping(loader: yaml.SafeLoader, node: yaml.MappingNode) -> dict[Any, Any]:
    loader.flatten_mapping(node)
    seen: set[Any] = set()
    for key_node, _ in node.value:
        key = loader.construct_object(key_node, deep=True)
        if isinstance(key, (str, int, float, bool, type(None))) and key in seen:
            raise DuplicateKeyError(None, None, f"duplicate key {repr(key)[:80]}", key_node.start_mark)
        if isinstance(key, (str, int, float, bool, type(None))):
            seen.add(key)
    return loader.construct_mapping(node, deep=True)


_Loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _mapping)


class UnreadableValueError(yaml.YAMLError):
    """Well-formed YAML holding what Python cannot build: nesting too deep for the loader's
    recursion, an integer of more than 4,300 digits (Python's limit on reading one), a date
    that does not exist. A YAMLError, so every reader reports it as it reports bad YAML."""


def load_yaml(text: str) -> Any:
    try:
        return yaml.load(text, Loader=_Loader)  # noqa: S506 -- a safe loader
    except RecursionError:
        raise UnreadableValueError("nested too deeply") from None
    except ValueError as exc:
        raise UnreadableValueError(f"a value cannot be read ({exc})") from None


class YamlFileError(ValueError):
    """A YAML file that cannot be read, said so a person knows what to fix; each reader wraps it
    in its own error (config, evaluation set) without changing the words."""


def load_yaml_file(path: Path, limit: int) -> Any:
    """The value of the YAML file at `path`, read only if it is a regular file of at most `limit`
    bytes: a directory, a FIFO or a device (`/dev/zero` never ends) would otherwise crash the
    reader or hold it forever, and a file of gigabytes exhaust memory before YAML says a word."""
    try:
        info = path.stat()
    except FileNotFoundError:
        raise YamlFileError(f"{path} not found; check the path") from None
    except OSError as exc:
        raise YamlFileError(f"{path}: cannot read it ({exc.strerror or exc})") from None
    if stat.S_ISDIR(info.st_mode):
        raise YamlFileError(f"{path} is a directory; pass the YAML file itself{_inside(path)}")
    if not stat.S_ISREG(info.st_mode):
        raise YamlFileError(f"{path} is not a regular file (a pipe, device or socket); save it to a file first")
    try:
        with path.open("rb") as handle:
            data = handle.read(limit + 1)
    except OSError as exc:
        raise YamlFileError(f"{path}: cannot read it ({exc.strerror or exc})") from None
    if len(data) > limit:
        raise YamlFileError(f"{path} is larger than {limit:,} bytes, the limit for this file; "
                            "split it or check that it is the right file")
    try:
        return load_yaml(data.decode("utf-8"))
    except (YAMLError, UnicodeDecodeError) as exc:
        raise YamlFileError(f"{path}: not valid YAML: {exc}") from None


def _inside(folder: Path) -> str:
    """A hint naming the YAML files a folder holds, since the folder was likely meant for one."""
    try:
        names = sorted(p.name for p in folder.iterdir() if p.suffix in (".yaml", ".yml") and p.is_file())
    except OSError:
        return ""
    return f" (it holds {', '.join(names[:5])}{', ...' if len(names) > 5 else ''})" if names else ""

"""YAML reading for config, access files and evaluation sets: always the safe loader, in its
C implementation when libyaml is present (several times faster on large evaluation sets).
Whatever the text, the answer is a value or a YAMLError (`UnreadableValueError` for values
Python cannot build), which each reader turns into its own clear error.

Duplicate keys are an error: YAML's default of "the last one wins" would let a second
`files:` entry for the same name silently replace the first one's groups."""

from __future__ import annotations

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

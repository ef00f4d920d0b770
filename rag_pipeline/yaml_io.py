"""YAML reading for config, access files and evaluation sets: always the safe loader, in its
C implementation when libyaml is present (several times faster on large evaluation sets)."""

from __future__ import annotations

from typing import Any

import yaml

_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
YAMLError = yaml.YAMLError


def load_yaml(text: str) -> Any:
    return yaml.load(text, Loader=_Loader)  # noqa: S506 -- a safe loader

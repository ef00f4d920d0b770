"""Field types shared by the section models of `rag_pipeline.yaml`.

Each section is a frozen pydantic model beside the layer it configures. These types keep the file
as strict as it has always been: a bool is not a number, "5" is not a whole number, 2.5 is not a
whole number, NaN and infinity are not numbers, and text is text. `rag_pipeline.config` turns a
validation error into a ConfigError that names the key; where the type alone would say too
little, a field's `description` is the phrase that error says the value must be.
"""

from __future__ import annotations

import reprlib
from pathlib import Path
from typing import Annotated, Any

from pydantic import AllowInfNan, BeforeValidator, Field, Strict
from pydantic_core import PydanticCustomError, PydanticUseDefault

Whole = Annotated[int, Strict()]
# an int bound (gt=0) reads "must be positive"; a float bound (gt=0.0) reads "must be above 0"
PositiveWhole = Annotated[int, Strict(), Field(gt=0)]
Number = Annotated[float, Strict(), AllowInfNan(False)]  # an int is a number too; a bool is not
PositiveNumber = Annotated[float, Strict(), AllowInfNan(False), Field(gt=0.0)]
Share = Annotated[float, Strict(), AllowInfNan(False), Field(ge=0.0, le=1.0)]
Flag = Annotated[bool, Strict()]
Text = Annotated[str, Strict()]
NonEmptyText = Annotated[str, Strict(), Field(min_length=1)]

_SHOWN = reprlib.Repr()
_SHOWN.maxstring = _SHOWN.maxother = 80
_SHOWN.maxlevel, _SHOWN.maxlist, _SHOWN.maxdict = 2, 6, 6


def shown(value: Any) -> str:
    """A value as an error message quotes it: short whatever the file holds (a 10 MB string, junk
    nested a thousand deep), so the message stays readable and cheap."""
    return _SHOWN.repr(value)


def _default_if_null(value: Any) -> Any:
    if value is None:
        raise PydanticUseDefault()
    return value


# `key:` with nothing after it means "the default", as it always has for sections and lists
NullIsDefault = BeforeValidator(_default_if_null)


def _default_if_blank(value: Any) -> Any:
    if value is None or value == "":
        raise PydanticUseDefault()
    return value


# optional paths (`state_dir`, `eval_set`) have always read an empty string as "not given"
BlankIsDefault = BeforeValidator(_default_if_blank)


def _path_text(value: Any) -> Any:
    if not isinstance(value, str):
        raise PydanticCustomError("string_type", "Input should be a valid string")
    if not value:
        raise PydanticCustomError("string_too_short", "String should have at least 1 character")
    return value


# a path as the file writes it: non-empty text, resolved later against the config file's folder
PathText = Annotated[Path, BeforeValidator(_path_text)]

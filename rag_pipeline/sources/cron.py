"""The cron check for a source's `schedule`: a typo is a config error at load, not a schedule
that silently never fires."""

from __future__ import annotations

from rag_pipeline.common.config import shown

_FIELDS = (("minute", 0, 59), ("hour", 0, 23), ("day of month", 1, 31), ("month", 1, 12), ("day of week", 0, 7))
_NAMES = {**{m: i + 1 for i, m in enumerate("jan feb mar apr may jun jul aug sep oct nov dec".split())},
          **{d: i for i, d in enumerate("sun mon tue wed thu fri sat".split())}}
MACROS = ("@hourly", "@daily", "@weekly", "@monthly")


def checked_cron(value: str) -> str:
    """A standard 5-field cron expression (or @hourly/@daily/@weekly/@monthly), stripped.

    ValueError says what is wrong, worded to follow the key's name."""
    text = value.strip()
    if not text:
        raise ValueError("must be a cron string such as '0 2 * * *'")
    if text in MACROS:
        return text
    parts = text.split()
    if len(parts) != 5:
        raise ValueError(f"{shown(value)} must have 5 fields (minute hour day month weekday) "
                         f"or be one of {', '.join(MACROS)}")
    for part, (field_name, low, high) in zip(parts, _FIELDS, strict=True):
        for item in part.split(","):
            if not _item_ok(item.lower(), low, high):
                raise ValueError(f"{shown(value)}: bad {field_name} field {shown(part)} "
                                 f"(numbers {low}-{high}, '*', ranges a-b, steps /n)")
    return text


def _number(text: str) -> int | None:
    """A small ASCII number ('²' is a digit to str.isdigit, and int() refuses thousands of digits)."""
    return int(text) if text.isascii() and text.isdigit() and len(text) <= 4 else None


def _item_ok(item: str, low: int, high: int) -> bool:
    base, _, step = item.partition("/")
    if step and not _number(step):
        return False
    if base == "*":
        return True
    ends = base.split("-")
    if len(ends) > 2:
        return False
    values = [_NAMES.get(e, _number(e)) for e in ends]
    return all(v is not None and low <= v <= high for v in values) and (len(values) == 1 or values[0] <= values[1])

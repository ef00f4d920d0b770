"""`--as-of` and every other time a user types (common/times.parse_time): ISO 8601 with or
without an offset; anything else, or a time local time cannot place, is a ValueError naming the
value, which each command reports as one line with exit 2."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from rag_pipeline.common.times import parse_time


@pytest.mark.parametrize(("text", "expected"), [
    ("2026-04-03T12:00:00Z", datetime(2026, 4, 3, 12, tzinfo=UTC)),
    ("2026-04-03T12:00:00+00:00", datetime(2026, 4, 3, 12, tzinfo=UTC)),
    (" 0001-01-01T00:00:00Z ", datetime(1, 1, 1, tzinfo=UTC)),
    ("9999-12-31T23:59:59Z", datetime(9999, 12, 31, 23, 59, 59, tzinfo=UTC)),
])
def test_an_iso_time_is_read_with_its_offset(text: str, expected: datetime) -> None:
    assert parse_time(text) == expected


def test_a_time_without_offset_is_local_time() -> None:
    assert parse_time("2026-04-03T12:00:00").tzinfo is not None


@pytest.mark.parametrize(("text", "words"), [
    ("0001-01-01", "out of range"),  # local time cannot place the first day of year 1
    ("yesterday", "is not an ISO 8601 time"),
    ("2026-13-01", "is not an ISO 8601 time"),
    ("2026-04-03T12:00:00+25:00", "is not an ISO 8601 time"),
    ("9" * 10_000, "is not an ISO 8601 time"),
])
def test_a_bad_time_names_the_value(text: str, words: str) -> None:
    with pytest.raises(ValueError, match=words) as caught:
        parse_time(text)
    assert len(str(caught.value)) < 300

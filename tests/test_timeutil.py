"""Command-line times and durations, against hand-computed milliseconds."""

from __future__ import annotations

import pytest

from hbase_migrate.errors import ConfigError
from hbase_migrate.timeutil import (
    format_duration,
    format_time,
    human_duration,
    parse_duration,
    parse_seconds,
    parse_time,
)

# 2023-11-14T22:13:20Z is 1_700_000_000 seconds after the epoch.
T = 1_700_000_000_000


@pytest.mark.parametrize(
    ("text", "ms"),
    [
        ("1700000000000", T),
        ("0", 0),
        ("-1000", -1000),
        ("2023-11-14T22:13:20Z", T),
        ("2023-11-14T22:13:20", T),  # naive means UTC
        ("2023-11-14 22:13:20", T),
        ("2023-11-14T22:13:20.25", T + 250),  # WALPlayer's yyyy-MM-dd'T'HH:mm:ss.SS form
        ("2023-11-14T22:13:20.123+00:00", T + 123),
        ("2023-11-15T00:13:20+02:00", T),
        ("2023-11-14T17:13:20-05:00", T),
        ("2023-11-14", T - (22 * 3600 + 13 * 60 + 20) * 1000),
        ("1970-01-01T00:00:00Z", 0),
        ("  2023-11-14T22:13:20Z ", T),
    ],
)
def test_parse_time(text: str, ms: int) -> None:
    assert parse_time(text) == ms


@pytest.mark.parametrize("text", ["", "yesterday", "2023-13-01", "2023-11-14T25:00", "1.5"])
def test_parse_time_rejects_with_the_value_named(text: str) -> None:
    with pytest.raises(ConfigError, match="--start") as caught:
        parse_time(text, name="--start")
    assert repr(text) in str(caught.value)


@pytest.mark.parametrize(
    ("text", "ms"),
    [
        ("3600000", 3_600_000),
        ("90s", 90_000),
        ("10m", 600_000),
        ("1h", 3_600_000),
        ("2d", 172_800_000),
        ("250ms", 250),
        ("0", 0),
        ("5 M", 300_000),
        ("0.5s", 500),  # decimals, exactly: as 500ms
        ("0.3s", 300),
        ("1.5h", 5_400_000),
        ("0.25m", 15_000),
        ("2.0", 2),
        ("0.001s", 1),
    ],
)
def test_parse_duration(text: str, ms: int) -> None:
    assert parse_duration(text) == ms


@pytest.mark.parametrize("text", ["", "-5m", "1.5", "0.1ms", "10 minutes", "h", "1w", ".5s",
                                  "1.s", "1,5s", "nan", "inf"])
def test_parse_duration_rejects(text: str) -> None:
    with pytest.raises(ConfigError, match="--margin"):
        parse_duration(text, name="--margin")


def test_format_time() -> None:
    assert format_time(T) == "2023-11-14T22:13:20.000Z"
    assert format_time(T + 7) == "2023-11-14T22:13:20.007Z"
    assert format_time(0) == "1970-01-01T00:00:00.000Z"
    assert format_time(-1) == "1969-12-31T23:59:59.999Z"
    assert format_time(1 << 62) == f"{1 << 62}ms"  # beyond any calendar: the number


def test_format_then_parse_is_identity() -> None:
    for ms in (0, T, T + 999, 253402300799999):
        assert parse_time(format_time(ms)) == ms


def test_format_duration() -> None:
    assert format_duration(3_600_000) == "1h"
    assert format_duration(600_000) == "10m"
    assert format_duration(90_000) == "90s"
    assert format_duration(1500) == "1500ms"
    assert format_duration(0) == "0ms"
    assert format_duration(86_400_000) == "1d"


@pytest.mark.parametrize("text", ["0.5ms", "0.0001s", "1.5"])
def test_parse_duration_rejects_fractions_of_a_millisecond(text: str) -> None:
    with pytest.raises(ConfigError) as caught:
        parse_duration(text, name="--interval")
    assert str(caught.value) == f"--interval: {text!r} is not a whole number of milliseconds"


@pytest.mark.parametrize(("text", "seconds"), [("30", 30.0), ("0", 0.0), ("2.5", 2.5),
                                               (" 1e1 ", 10.0)])
def test_parse_seconds(text: str, seconds: float) -> None:
    assert parse_seconds(text, name="--lock-timeout") == seconds


@pytest.mark.parametrize(("text", "message"), [
    ("-5", "expected a finite number of seconds >= 0, got '-5'"),
    ("nan", "expected a finite number of seconds >= 0, got 'nan'"),
    ("inf", "expected a finite number of seconds >= 0, got 'inf'"),
    ("soon", "cannot read 'soon' as a number of seconds"),
])
def test_parse_seconds_rejects(text: str, message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        parse_seconds(text, name="--lock-timeout")
    assert str(caught.value) == f"--lock-timeout: {message}"


def test_human_duration() -> None:
    """Measured durations as people read them (the issue's ``replay lag 492624ms``)."""
    assert human_duration(492_624) == "8 min 12 s"
    assert human_duration(850) == "850 ms"
    assert human_duration(12_345) == "12.3 s"
    assert human_duration(60_000) == "1 min"
    assert human_duration(2 * 3_600_000 + 10 * 60_000 + 59_000) == "2 h 10 min"
    assert human_duration(3 * 86_400_000 + 4 * 3_600_000) == "3 d 4 h"
    assert human_duration(0) == "0 ms"
    assert human_duration(-1500) == "-1.5 s"

"""Times and durations given on the command line, as integer milliseconds.

A time is either milliseconds since the epoch (``1700000000000``) or an ISO-8601 date or
date-time (``2024-05-01``, ``2024-05-01T12:00:00Z``, ``2024-05-01 12:00:00.250+02:00``),
including the ``yyyy-MM-dd'T'HH:mm:ss.SS`` form that WALPlayer accepts. A time without a zone
is UTC, and digits after the seconds are a decimal fraction (``.25`` is 250 ms). WALPlayer
differs on both: it reads such a time in the JVM's local zone and takes ``.25`` as 25 ms.

A duration is a number with an optional unit: ``ms``, ``s``, ``m``, ``h``, ``d``; a bare
number is milliseconds (as HBase's ``*.period`` settings are). The number may have decimals
(``0.5s`` is ``500ms``, ``1.5h`` is ``90m``) as long as it comes to whole milliseconds.
"""

from __future__ import annotations

import math
import re
from datetime import UTC, datetime, timedelta
from fractions import Fraction

from hbase_migrate.errors import ConfigError

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
# how every TIME option's help states the format parse_time reads
TIME_HELP = (" TIME: ISO-8601 (2024-05-01T12:00:00Z, 2024-05-01; no zone is UTC) or "
             "milliseconds since the epoch (1714564800000).")
_DURATION = re.compile(r"(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)?", re.ASCII)
_UNIT_MS = {None: 1, "ms": 1, "s": 1000, "m": 60_000, "h": 3_600_000, "d": 86_400_000}


def parse_time(value: str, *, name: str = "time") -> int:
    """Parse a command-line time to milliseconds since the epoch (UTC when no zone is given).

    ``name`` is the option being parsed, used in the error message.
    """
    text = value.strip()
    if re.fullmatch(r"-?\d+", text, re.ASCII):
        return int(text)
    try:
        parsed = datetime.fromisoformat(text)
    except ValueError:
        raise ConfigError(
            f"{name}: cannot read {value!r} as a time; expected milliseconds since the epoch "
            "or an ISO-8601 date/time such as 2024-05-01T12:00:00Z"
        ) from None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    return (parsed - _EPOCH) // timedelta(milliseconds=1)


def parse_duration(value: str, *, name: str = "duration") -> int:
    """Parse ``90s``, ``0.5s``, ``10m``, ``1.5h``, ``2d``, ``250ms`` or a bare ``3600000``
    (ms) to milliseconds; decimals are exact and must come to whole milliseconds."""
    match = _DURATION.fullmatch(value.strip().lower())
    if match is None:
        raise ConfigError(
            f"{name}: cannot read {value!r} as a duration; expected a non-negative number "
            "(decimals allowed, as in 0.5s) with an optional unit ms, s, m, h or d (a bare "
            "number is milliseconds)"
        )
    ms = Fraction(match[1]) * _UNIT_MS[match[2]]  # exact: 0.3s is 300 ms, not 300.00000001
    if ms.denominator != 1:
        raise ConfigError(f"{name}: {value!r} is not a whole number of milliseconds")
    return int(ms)


def parse_seconds(value: str, *, name: str = "seconds") -> float:
    """Parse a number of seconds (``30``, ``2.5``); it must be finite and not negative."""
    try:
        seconds = float(value)
    except ValueError:
        raise ConfigError(f"{name}: cannot read {value!r} as a number of seconds") from None
    return check_seconds(seconds, name=name, given=value)


def check_seconds(seconds: float, *, name: str = "seconds", given: object = None) -> float:
    """``seconds`` when it is a finite number >= 0; else a ConfigError naming ``name``."""
    if isinstance(seconds, bool) or not isinstance(seconds, (int, float)) \
            or not math.isfinite(seconds) or seconds < 0:
        shown = seconds if given is None else given
        raise ConfigError(f"{name}: expected a finite number of seconds >= 0, got {shown!r}")
    return float(seconds)


def check_window(start: int | None, end: int | None) -> None:
    """A time window ``[start, end)`` must not be empty (None: open on that side)."""
    if start is not None and end is not None and start >= end:
        raise ConfigError(f"empty time window: start {format_time(start)} is not before end "
                          f"{format_time(end)}")


def format_time(ms: int) -> str:
    """Format milliseconds since the epoch as ISO-8601 UTC, e.g. ``2023-11-14T22:13:20.000Z``."""
    try:
        m = _EPOCH + timedelta(milliseconds=ms)
    except OverflowError:
        return f"{ms}ms"  # beyond year 9999: no calendar form, keep the number
    return (
        f"{m.year:04d}-{m.month:02d}-{m.day:02d}T{m.hour:02d}:{m.minute:02d}:{m.second:02d}"
        f".{m.microsecond // 1000:03d}Z"
    )


def format_duration(ms: int) -> str:
    """A duration in the form the command line reads back: ``1h``, ``10m``, ``90s``,
    ``1500ms`` (settings, windows); :func:`human_duration` for measured ones."""
    for unit, size in (("d", 86_400_000), ("h", 3_600_000), ("m", 60_000), ("s", 1000)):
        if ms and ms % size == 0:
            return f"{ms // size}{unit}"
    return f"{ms}ms"


def human_duration(ms: float) -> str:
    """A measured duration (a lag, a step's time) as people read it: ``850 ms``,
    ``12.3 s``, ``8 min 12 s``, ``2 h 10 min``, ``3 d 4 h``. Every lag or duration the
    project prints goes through here."""
    if ms < 0:
        return "-" + human_duration(-ms)
    if ms < 1000:
        return f"{ms:.0f} ms"
    if ms < 60_000:
        return f"{ms / 1000:.1f} s"
    minutes, seconds = divmod(int(ms // 1000), 60)
    if minutes < 60:
        return f"{minutes} min" + (f" {seconds} s" if seconds else "")
    hours, minutes = divmod(minutes, 60)
    if hours < 24:
        return f"{hours} h" + (f" {minutes} min" if minutes else "")
    return f"{hours // 24} d" + (f" {hours % 24} h" if hours % 24 else "")

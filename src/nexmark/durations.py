"""Durations as people and engines write them: '30s', '30 s', '10 min', '1h', '500 ms', '2 d'.

One parser for the command line and for engine options (Flink's forms: a number and a unit
such as ms, s, sec, min, h, d, or their long names), so a value reads the same on every path.
"""

from __future__ import annotations

import re

from nexmark.errors import UsageError

_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([a-zµ]*)\s*$", re.IGNORECASE)
_UNIT_S = {
    "": 1.0,
    "ns": 1e-9,
    "nano": 1e-9,
    "nanos": 1e-9,
    "nanosecond": 1e-9,
    "nanoseconds": 1e-9,
    "us": 1e-6,
    "µs": 1e-6,
    "micro": 1e-6,
    "micros": 1e-6,
    "microsecond": 1e-6,
    "microseconds": 1e-6,
    "ms": 1e-3,
    "milli": 1e-3,
    "millis": 1e-3,
    "millisecond": 1e-3,
    "milliseconds": 1e-3,
    "s": 1.0,
    "sec": 1.0,
    "secs": 1.0,
    "second": 1.0,
    "seconds": 1.0,
    "m": 60.0,
    "min": 60.0,
    "mins": 60.0,
    "minute": 60.0,
    "minutes": 60.0,
    "h": 3600.0,
    "hour": 3600.0,
    "hours": 3600.0,
    "d": 86400.0,
    "day": 86400.0,
    "days": 86400.0,
}


def parse_seconds(text: str, what: str) -> float:
    """'30', '30s', '10 min', '1h', '500ms' -> seconds; a bare number is seconds.

    Raises:
        UsageError: naming `what` when the text is not a duration.
    """
    m = _DURATION.match(str(text))
    unit = m.group(2).lower() if m else None
    if not m or unit not in _UNIT_S:
        raise UsageError(f"{what} must be a duration like 30s, 10min or 1h, got {text!r}")
    return float(m.group(1)) * _UNIT_S[unit]


def format_seconds(seconds: float) -> str:
    """A short readable form: '500 ms', '30 s', '5 min', '2 h'."""
    for unit, size in (("h", 3600.0), ("min", 60.0), ("s", 1.0)):
        if seconds >= size and (seconds / size).is_integer():
            return f"{int(seconds / size)} {unit}"
    return f"{seconds * 1000:g} ms" if seconds < 1 else f"{seconds:g} s"

"""Counts written the way people say them: 200M, 1.5K, 1e6, 10_000."""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation

from nexmark.errors import UsageError

_SUFFIXES = {"": 1, "K": 10**3, "M": 10**6, "G": 10**9, "B": 10**9, "T": 10**12}
_PATTERN = re.compile(r"^\s*([-+]?[0-9_.]+(?:[eE][-+]?[0-9]+)?)\s*([kKmMgGbBtT]?)\s*$")


def parse_count(text: str | int, what: str = "count") -> int:
    """An exact integer from '200M', '1.5K', '1e6', '10_000' or an int.

    Args:
        text: The value; suffixes K, M, G (or B), T are powers of 1000, case-insensitive.
        what: The name used in the error message (e.g. "--events").

    Raises:
        UsageError: Not a number, or not a whole number (e.g. "1.0005K").
    """
    if isinstance(text, int):
        return text
    match = _PATTERN.match(str(text))
    if not match:
        raise UsageError(f"{what}: not a number: {text!r} (examples: 200M, 1.5K, 1e6)")
    number, suffix = match.groups()
    try:
        value = Decimal(number.replace("_", "")) * _SUFFIXES[suffix.upper()]
    except InvalidOperation:
        raise UsageError(f"{what}: not a number: {text!r} (examples: 200M, 1.5K, 1e6)") from None
    if value != value.to_integral_value():
        raise UsageError(f"{what}: not a whole number: {text!r}")
    return int(value)

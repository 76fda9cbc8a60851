"""Order-insensitive comparison of two multisets of rows, with exact decimals and timestamps.

Rows from an engine may come back as Python values, as strings (from files) or with other
numeric types than the reference's. `coerce_row` brings them to one canonical form per column
type before comparing, without ever rounding: a DECIMAL is compared as an exact `Decimal`
(a float is converted with its full binary value, so a DOUBLE where a DECIMAL was meant shows
up as a difference), a TIMESTAMP as a naive `datetime` to the microsecond.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from decimal import Decimal, InvalidOperation

# Logical column types the references declare; anything else is compared as it is.
INTEGER = "BIGINT"
STRING = "VARCHAR"
DECIMAL = "DECIMAL"
TIMESTAMP = "TIMESTAMP"
FLOAT = "DOUBLE"  # a binary fraction (e.g. a fractional AVG), compared exactly as a float
ANY = "ANY"  # compared as it comes (e.g. processing-time window bounds)


def coerce(value: object, type_: str) -> object:
    """One value in the canonical form of its column type; None stays None.

    Raises:
        ValueError: When the value cannot be read as that type (reported as a difference).
    """
    if value is None:
        return None
    if type_ == INTEGER:
        return _to_int(value)
    if type_ == STRING:
        return value if isinstance(value, str) else str(value)
    if type_ == DECIMAL:
        return _to_decimal(value)
    if type_ == TIMESTAMP:
        return _to_datetime(value)
    if type_ == FLOAT:
        return float(value)  # type: ignore[arg-type]
    return value


def _to_int(value: object) -> int:
    if isinstance(value, bool):
        raise ValueError(f"boolean {value!r} where an integer was expected")
    if isinstance(value, int):
        return value
    if isinstance(value, str):
        return int(value)
    if isinstance(value, Decimal) and value == value.to_integral_value():
        return int(value)
    # Pandas / numpy integers: only when they are exactly integral.
    as_int = int(value)  # type: ignore[call-overload]
    if as_int != value:
        raise ValueError(f"{value!r} is not an integer")
    return as_int


def _to_decimal(value: object) -> Decimal:
    if isinstance(value, Decimal):
        return value
    if isinstance(value, (int, float)):
        return Decimal(value)  # a float keeps its exact binary value: no hidden rounding
    try:
        return Decimal(str(value))
    except InvalidOperation as exc:
        raise ValueError(f"{value!r} is not a decimal") from exc


def _to_datetime(value: object) -> datetime:
    if isinstance(value, str):
        value = datetime.fromisoformat(value.strip())
    if hasattr(value, "to_pydatetime"):  # pandas.Timestamp
        value = value.to_pydatetime()
    if not isinstance(value, datetime):
        raise ValueError(f"{value!r} is not a timestamp")
    if value.tzinfo is not None:  # compare instants as naive UTC, like TIMESTAMP(3) columns
        value = value.astimezone(timezone.utc).replace(tzinfo=None)
    return value


def coerce_row(row: Sequence[object], types: Sequence[str]) -> tuple:
    """A row in canonical form; a row of the wrong width is returned unchanged (it will differ)."""
    if len(row) != len(types):
        return tuple(row)
    try:
        return tuple(coerce(v, t) for v, t in zip(row, types, strict=True))
    except (ValueError, TypeError, OverflowError):
        return tuple(row)


@dataclass
class RowDiff:
    """The difference between an expected and an actual multiset of rows.

    Attributes:
        expected_rows: Number of expected rows (duplicates counted).
        actual_rows: Number of actual rows.
        missing: Expected rows absent from the actual ones (row -> how many are missing).
        unexpected: Actual rows that were not expected (row -> how many too many).
    """

    expected_rows: int
    actual_rows: int
    missing: Counter = field(default_factory=Counter)
    unexpected: Counter = field(default_factory=Counter)

    @property
    def missing_count(self) -> int:
        return sum(self.missing.values())

    @property
    def unexpected_count(self) -> int:
        return sum(self.unexpected.values())

    @property
    def matches(self) -> bool:
        return not self.missing and not self.unexpected

    def examples(self, limit: int = 3) -> tuple[list[tuple], list[tuple]]:
        """A few missing and a few unexpected rows, in a stable order for display."""
        return _first(self.missing, limit), _first(self.unexpected, limit)


def _first(rows: Counter, limit: int) -> list[tuple]:
    return sorted(rows, key=_sort_key)[:limit]


def _sort_key(row: tuple) -> tuple:
    # None and mixed types must not break sorting: compare by (is None, type name, text).
    return tuple((v is None, type(v).__name__, str(v)) for v in row)


def diff_rows(expected: Iterable[tuple], actual: Iterable[tuple]) -> RowDiff:
    """Compare two multisets of rows, ignoring order but not duplicates."""
    want = Counter(expected)
    got = Counter(actual)
    return RowDiff(
        expected_rows=sum(want.values()),
        actual_rows=sum(got.values()),
        missing=want - got,
        unexpected=got - want,
    )

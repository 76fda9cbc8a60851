"""The one flat event table every engine reads: column order, types and conventions.

One row per event, in event-number order. Columns of the other two kinds are empty (null).
Every engine's source DDL and the reference results are derived from `COLUMNS`, so the order
here is the file format (see docs/dataset-format.md).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum


class Kind(IntEnum):
    """Event kind, stored in the first column."""

    PERSON = 0
    AUCTION = 1
    BID = 2


@dataclass(frozen=True)
class Column:
    name: str
    type: str  # logical type: BIGINT, VARCHAR, TIMESTAMP(3)
    kind: Kind | None  # the event kind that fills it; None = every kind
    view_name: str  # the column's name in its kind's view (person / auction / bid)


def _c(name: str, type_: str, kind: Kind | None, view_name: str | None = None) -> Column:
    return Column(name, type_, kind, view_name or name)


P, A, B = Kind.PERSON, Kind.AUCTION, Kind.BID

COLUMNS: tuple[Column, ...] = (
    _c("event_type", "INT", None),
    _c("p_id", "BIGINT", P, "id"),
    _c("p_name", "VARCHAR", P, "name"),
    _c("p_email", "VARCHAR", P, "email_address"),
    _c("p_credit_card", "VARCHAR", P, "credit_card"),
    _c("p_city", "VARCHAR", P, "city"),
    _c("p_state", "VARCHAR", P, "state"),
    _c("a_id", "BIGINT", A, "id"),
    _c("a_item_name", "VARCHAR", A, "item_name"),
    _c("a_description", "VARCHAR", A, "description"),
    _c("a_initial_bid", "BIGINT", A, "initial_bid"),
    _c("a_reserve", "BIGINT", A, "reserve"),
    _c("a_expires", "TIMESTAMP(3)", A, "expires"),
    _c("a_seller", "BIGINT", A, "seller"),
    _c("a_category", "BIGINT", A, "category"),
    _c("b_auction", "BIGINT", B, "auction"),
    _c("b_bidder", "BIGINT", B, "bidder"),
    _c("b_price", "BIGINT", B, "price"),
    _c("b_channel", "VARCHAR", B, "channel"),
    _c("b_url", "VARCHAR", B, "url"),
    _c("date_time", "TIMESTAMP(3)", None),
    _c("extra", "VARCHAR", None),
)

COLUMN_NAMES: tuple[str, ...] = tuple(c.name for c in COLUMNS)

# Text conventions of the CSV files (documented in docs/dataset-format.md).
DELIMITER = ","
NULL = ""  # an empty field is null; no real value is ever the empty string
# Generator versions up to 3 wrote times as text in this form (2024-01-01 00:00:00.000); it is
# still how times are shown (manifest, docs) and what the legacy format of
# benchmarks/bench_data_path.py writes.
TIMESTAMP_FORMAT = "%Y-%m-%d %H:%M:%S.%f"
WATERMARK_DELAY_MS = 4000
# Since generator version 4 a TIMESTAMP(3) column is stored as its epoch milliseconds (UTC), a
# plain integer, in a file column named `<name>_ms`; engines declare the TIMESTAMP(3) column
# computed from it. Parsing a 23-character time text was the costliest field of a line.
EPOCH_MS_SUFFIX = "_ms"


def is_time(column: Column) -> bool:
    """True for a TIMESTAMP(3) column (stored as epoch milliseconds in the files)."""
    return column.type.startswith("TIMESTAMP")


def file_name(column: Column) -> str:
    """The column's name in the files: `date_time_ms` for `date_time`, else its own."""
    return column.name + EPOCH_MS_SUFFIX if is_time(column) else column.name


def file_type(column: Column) -> str:
    """The column's type in the files: BIGINT (epoch milliseconds) for times, else its own."""
    return "BIGINT" if is_time(column) else column.type


FILE_COLUMN_NAMES: tuple[str, ...] = tuple(file_name(c) for c in COLUMNS)


def view_columns(kind: Kind) -> list[Column]:
    """The columns of one kind's view, in order: its own columns, then date_time and extra."""
    return [c for c in COLUMNS if c.kind == kind] + [
        c for c in COLUMNS if c.kind is None and c.name != "event_type"
    ]

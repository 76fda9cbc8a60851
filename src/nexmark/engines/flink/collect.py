"""Read back the rows a COLLECT sink committed, typed like the query's result.

The sink writes Debezium JSON through Flink's filesystem connector. Files become visible (their
name loses the leading dot) only when the checkpoint that covers them completes, so reading the
visible files gives each committed row exactly once, across cancel and restore.

Debezium JSON keeps whether a row is added or removed, not whether it was part of an update: an
update's before image (-U) is written as a delete and its after image (+U) as an insert, so rows
come back as ADD or RETRACT changes. Applying them as a multiset (+1 / -1 per row) gives the
exact result (the engine's `Emission.CHANGELOG`).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, datetime, timezone
from decimal import Decimal
from pathlib import Path
from typing import Any

from nexmark.engines.semantics import Change, RowKind

_OPS = {"c": RowKind.ADD, "r": RowKind.ADD, "u": RowKind.ADD, "d": RowKind.RETRACT}


@dataclass(frozen=True)
class ResultColumn:
    name: str
    kind: str  # "int", "decimal", "float", "timestamp", "date", "bool", "str"
    scale: int = 0  # decimal places, for "decimal"


def _kind_of(data_type: Any) -> tuple[str, int]:
    from pyflink.table import types as t

    if isinstance(data_type, (t.TinyIntType, t.SmallIntType, t.IntType, t.BigIntType)):
        return "int", 0
    if isinstance(data_type, t.DecimalType):
        return "decimal", data_type.scale
    if isinstance(data_type, (t.FloatType, t.DoubleType)):
        return "float", 0
    if isinstance(data_type, (t.TimestampType, t.LocalZonedTimestampType)):
        return "timestamp", 0
    if isinstance(data_type, t.DateType):
        return "date", 0
    if isinstance(data_type, t.BooleanType):
        return "bool", 0
    return "str", 0


def result_columns(table: Any) -> list[ResultColumn]:
    """The columns of a PyFlink `Table` (a query's result), with how to decode each."""
    schema = table.get_schema()
    names = schema.get_field_names()
    return [
        ResultColumn(n, *_kind_of(dt))
        for n, dt in zip(names, schema.get_field_data_types(), strict=True)
    ]


def _timestamp(text: str) -> datetime:
    # Flink prints "2024-01-01 00:00:05.02" (SQL style, trailing zeros dropped) or ISO with "Z".
    value = datetime.fromisoformat(text.replace("Z", "+00:00"))
    return value.replace(tzinfo=None)


def _decoder(column: ResultColumn) -> Callable[[Any], Any]:
    if column.kind == "int":
        return int
    if column.kind == "decimal":
        quantum = Decimal(1).scaleb(-column.scale)
        return lambda v: Decimal(str(v)).quantize(quantum)
    if column.kind == "float":
        return float
    if column.kind == "timestamp":
        return _timestamp
    if column.kind == "date":
        return date.fromisoformat
    if column.kind == "bool":
        return bool
    return str


def committed_files(collect_dir: Path) -> list[Path]:
    """Visible (committed) files under `collect_dir`, sorted; in-progress files start with '.'."""
    if not collect_dir.is_dir():
        return []
    return sorted(
        p
        for p in collect_dir.rglob("*")
        if p.is_file() and not any(part.startswith((".", "_")) for part in p.parts[-1:])
    )


def uncommitted_files(
    collect_dir: Path, written_before: float, written_after: float = 0.0
) -> list[Path]:
    """Hidden (in-progress or pending) non-empty files last written between `written_after`
    and `written_before` (unix s): data a completed checkpoint covers whose commit (the rename
    that makes it visible, after the checkpoint's completion notice) has not happened yet.
    Older hidden files are an earlier job's uncommitted tail, rolled back for good."""
    if not collect_dir.is_dir():
        return []
    pending = []
    for path in collect_dir.rglob(".*"):
        try:
            stat = path.stat()
        except FileNotFoundError:  # committed (renamed) while we looked
            continue
        if path.is_file() and stat.st_size > 0 and written_after <= stat.st_mtime <= written_before:
            pending.append(path)
    return pending


def read_stamps(stamps_dir: Path) -> list[tuple[int, float]]:
    """The committed latency stamps (ddl.stamps_query) as (t in epoch ms, wall in unix s):
    the rows added (an updating query's retractions are no row leaving the query)."""
    stamps = []
    for path in committed_files(stamps_dir):
        for line in path.read_text().splitlines():
            if not line.strip():
                continue
            record = json.loads(line)
            if _OPS[record["op"]] is not RowKind.ADD or record["after"]["t"] is None:
                continue
            t, wall = (_epoch_s(_timestamp(record["after"][k])) for k in ("t", "wall"))
            stamps.append((round(t * 1000), wall))
    return stamps


def _epoch_s(value: datetime) -> float:
    """Unix seconds of a naive UTC datetime (the jobs' session time zone is UTC)."""
    return value.replace(tzinfo=timezone.utc).timestamp()


def read_rows(collect_dir: Path, columns: list[ResultColumn]) -> list[Change]:
    """Every committed row as a change (ADD or RETRACT) of typed values, file by file."""
    decoders = [_decoder(c) for c in columns]
    rows: list[Change] = []
    for path in committed_files(collect_dir):
        for line in path.read_text().splitlines():
            if not line.strip():
                continue
            record = json.loads(line, parse_float=Decimal)
            op = _OPS[record["op"]]
            image = record["before"] if op is RowKind.RETRACT else record["after"]
            rows.append(
                Change(
                    op,
                    tuple(
                        None if image.get(c.name) is None else dec(image[c.name])
                        for c, dec in zip(columns, decoders, strict=True)
                    ),
                )
            )
    return rows

"""The COLLECT sink: one JSON-lines file per micro-batch, exactly once across the restart.

`foreachBatch` gets each batch's rows with its batch id. They are written to
`batch-<id>.jsonl` through a hidden temporary name and a rename, so a file appears whole. A batch
that ran but whose commit did not reach the checkpoint (the query stopped in between) is run
again by the restored query with the same offsets and the same state, and rewrites the same file:
reading every file gives each row once.

Append-mode queries emit final rows (`+I`). Update-mode queries emit, per batch, the new row of
every key the batch changed (an upsert); `read_rows` turns that into a changelog with the
query's key columns: `-U` of the key's previous row, then `+U` of the new one.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from datetime import date, datetime, timezone
from decimal import Decimal
from pathlib import Path
from typing import Any

SCHEMA_FILE = "_schema.json"


def batch_writer(collect_dir: Path) -> Callable[[Any, int], None]:
    """The `foreachBatch` function writing each batch's rows to `collect_dir`."""
    collect_dir.mkdir(parents=True, exist_ok=True)

    def write(df: Any, batch_id: int) -> None:
        schema_path = collect_dir / SCHEMA_FILE
        if not schema_path.exists():
            _write_atomically(schema_path, df.schema.json())
        from pyspark.sql.functions import struct, to_json

        lines = [r[0] for r in df.select(to_json(struct("*"))).collect()]
        _write_atomically(
            collect_dir / f"batch-{batch_id:010d}.jsonl", "".join(f"{ln}\n" for ln in lines)
        )

    return write


def stamp_writer(column: str, sample: float, stamps_dir: Path) -> Callable[[Any, int], None]:
    """The `foreachBatch` function of a query whose rows are stamped for their latency
    (JobSpec.latency): the batch's output is computed once, as the `noop` sink would, and a
    `sample` share of its rows is brought back as `column`'s epoch ms; the wall time after the
    batch's rows exist is each one's stamp (a micro-batch's rows leave the query together,
    when it commits). One file per batch id, so a batch run again rewrites its own."""
    stamps_dir.mkdir(parents=True, exist_ok=True)

    def write(df: Any, batch_id: int) -> None:
        from pyspark.sql import functions as F  # noqa: N812 - pyspark's convention

        times = df.select(F.unix_millis(F.col(column)).alias("t")).where("t IS NOT NULL")
        if sample < 1.0:
            times = times.sample(fraction=sample, seed=batch_id)
        rows = times.collect()
        wall = time.time()
        stamps = [[row[0], wall] for row in rows]
        _write_atomically(stamps_dir / f"batch-{batch_id:010d}.json", json.dumps(stamps))

    return write


def read_stamps(stamps_dir: Path) -> list[tuple[int, float]]:
    """Every batch's latency stamps as (t in epoch ms, wall in unix s)."""
    return [
        (int(t), float(wall))
        for path in sorted(stamps_dir.glob("batch-*.json"))
        for t, wall in json.loads(path.read_text())
    ]


def _write_atomically(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def _timestamp(text: str) -> datetime:
    value = datetime.fromisoformat(text.replace("Z", "+00:00"))
    if value.tzinfo is not None:
        value = value.astimezone(timezone.utc).replace(tzinfo=None)
    return value


def _converter(spark_type: Any) -> Callable[[Any], Any]:
    name = spark_type if isinstance(spark_type, str) else spark_type.get("type")
    if not isinstance(name, str):
        return lambda v: v
    if name.startswith("decimal"):
        return lambda v: Decimal(str(v))
    if name in ("long", "integer", "short", "byte"):
        return int
    if name in ("double", "float"):
        return float
    if name.startswith("timestamp"):
        return _timestamp
    if name == "date":
        return date.fromisoformat
    return lambda v: v


def read_rows(
    collect_dir: Path, columns: list[str] | None = None, keys: tuple[str, ...] = ()
) -> list[tuple[str, tuple]]:
    """Every committed row as (changelog kind, row), batch by batch.

    Args:
        collect_dir: The sink's directory.
        columns: Column order of the rows (default: the result schema's).
        keys: Key columns of an update-mode query (empty: append mode, every row `+I`).
    """
    schema_path = collect_dir / SCHEMA_FILE
    if not schema_path.exists():
        return []
    fields = json.loads(schema_path.read_text(encoding="utf-8"))["fields"]
    convert = {f["name"]: _converter(f["type"]) for f in fields}
    names = columns or [f["name"] for f in fields]
    rows: list[tuple[str, tuple]] = []
    last: dict[tuple, tuple] = {}
    for path in sorted(collect_dir.glob("batch-*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            record = json.loads(line, parse_float=Decimal)
            row = tuple(None if record.get(n) is None else convert[n](record[n]) for n in names)
            if not keys:
                rows.append(("+I", row))
                continue
            key = tuple(record.get(k) for k in keys)
            if key in last:
                rows.append(("-U", last[key]))
                rows.append(("+U", row))
            else:
                rows.append(("+I", row))
            last[key] = row
    return rows

"""Dataset-part files in the formats Flink reads, written from the generator's columns.

For the engine's own checks (a remote cluster's format check: one event), its tests and the
data-path benchmark. Datasets themselves are written by `nexmark.workload.writer`. Parquet and
Avro files hold the CSV files' columns, in the same order and by their file names
(`schema.file_name`: `date_time_ms`, `a_expires_ms`), the times as int64 epoch milliseconds:
Flink's `parquet` and `avro` formats find a column by its name.
"""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa

from nexmark.workload import generator as gen


def file_table(start: int, stop: int, config: gen.GeneratorConfig | None = None) -> pa.Table:
    """Events [start, stop) as the files hold them."""
    events = gen.generate_events(config or gen.GeneratorConfig(), start, stop)
    table = gen.to_file_columns(events).drop(["event_number"])
    return table.cast(gen.file_arrow_schema())  # the names Flink binds by


def write_parquet(
    table: pa.Table, path: Path, compression: str = "snappy", row_group_size: int = 1 << 20
) -> None:
    import pyarrow.parquet as pq

    pq.write_table(table, path, compression=compression, row_group_size=row_group_size)


def avro_schema() -> dict:
    """The files' Avro schema: nullable columns as unions with null. Flink's `avro` format
    resolves it against the schema it derives from the table (by field name)."""
    types = {pa.int32(): "int", pa.int64(): "long", pa.string(): "string"}
    fields = [
        {"name": f.name, "type": ["null", types[f.type]] if f.nullable else types[f.type]}
        for f in gen.file_arrow_schema()
    ]
    return {"type": "record", "name": "event", "namespace": "nexmark", "fields": fields}


def write_avro(table: pa.Table, path: Path, codec: str = "null") -> None:
    """An Avro container file (fastavro, which PyFlink's apache-beam dependency installs)."""
    import fastavro

    schema = fastavro.parse_schema(avro_schema())
    rows = (row for batch in table.to_batches(65536) for row in batch.to_pylist())
    with Path(path).open("wb") as fh:
        fastavro.writer(fh, schema, rows, codec=codec)


def write_probe_file(folder: Path, file_format: str) -> Path:
    """A part of one event (event 0) in `file_format`, in a new `folder`."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"part-00000-000.{file_format}"
    table = file_table(0, 1)
    if file_format == "parquet":
        write_parquet(table, path)
    elif file_format == "avro":
        write_avro(table, path)
    else:
        raise ValueError(f"no probe file for format {file_format!r}")
    return path

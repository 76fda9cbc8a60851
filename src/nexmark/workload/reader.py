"""Reading a dataset back as Arrow record batches or rows, in event order.

The batches have `generator.arrow_schema()`: the schema.py columns with their types (timestamps
as timestamp[ms], empty fields as nulls) plus `event_number`, so they equal what
`generator.generate_events` returns for the same range. DuckDB can query them directly.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import numpy as np
import pyarrow as pa
import pyarrow.csv as pcsv

from nexmark.errors import DatasetError, UsageError
from nexmark.workload.dataset import DataFile, Dataset
from nexmark.workload.generator import arrow_schema
from nexmark.workload.pools import as_arrow
from nexmark.workload.schema import COLUMN_NAMES

_BLOCK_BYTES = 8 << 20  # CSV bytes parsed per batch (about 40K events)


def _open(dataset: Dataset | str | os.PathLike) -> Dataset:
    return dataset if isinstance(dataset, Dataset) else Dataset(dataset)


def _csv_options() -> tuple[pcsv.ReadOptions, pcsv.ParseOptions, pcsv.ConvertOptions]:
    schema = arrow_schema(event_number=False)
    read = pcsv.ReadOptions(column_names=list(COLUMN_NAMES), block_size=_BLOCK_BYTES)
    parse = pcsv.ParseOptions(quote_char=False, double_quote=False, escape_char=False)
    convert = pcsv.ConvertOptions(
        column_types={f.name: f.type for f in schema},
        null_values=[""],
        strings_can_be_null=True,
    )
    return read, parse, convert


def _file_batches(f: DataFile, start: int, stop: int) -> Iterator[pa.RecordBatch]:
    """Batches of one file, restricted to event numbers [start, stop)."""
    read, parse, convert = _csv_options()
    schema = arrow_schema()
    n = f.first_event
    try:
        stream = pcsv.open_csv(f.path, read, parse, convert)
    except (OSError, pa.ArrowInvalid) as exc:
        raise DatasetError(f"{f.path}: cannot read ({exc})") from None
    for batch in stream:
        lo, hi = max(start - n, 0), min(stop - n, batch.num_rows)
        if lo < hi:
            numbers = as_arrow(np.arange(n + lo, n + hi, dtype=np.int64), pa.int64())
            columns = batch.slice(lo, hi - lo).columns + [numbers]
            yield pa.RecordBatch.from_arrays(columns, schema=schema)
        n += batch.num_rows
        if n >= stop:
            return


def read_batches(
    dataset: Dataset | str | os.PathLike,
    part: str | None = None,
    start: int | None = None,
    stop: int | None = None,
) -> Iterator[pa.RecordBatch]:
    """Stream events of a dataset as record batches with `arrow_schema()` (+ event_number).

    Args:
        dataset: A Dataset or its directory.
        part: "warmup", "benchmark", or None for both (warm-up first).
        start: First event number to return (default: the part's first).
        stop: One past the last event number to return (default: the part's end).

    Raises:
        DatasetError: Not a complete dataset, or a file cannot be parsed.
        UsageError: Unknown part.
    """
    ds = _open(dataset)
    lo, hi = (0, ds.events) if part is None else ds.part_range(part)
    start = lo if start is None else max(start, lo)
    stop = hi if stop is None else min(stop, hi)
    if start < 0:
        raise UsageError(f"start must be >= 0, got {start}")
    for f in ds.files(part):
        if f.events and f.first_event < stop and f.stop_event > start:
            yield from _file_batches(f, start, stop)


def read_table(
    dataset: Dataset | str | os.PathLike,
    part: str | None = None,
    start: int | None = None,
    stop: int | None = None,
) -> pa.Table:
    """All of `read_batches` as one table (mind the memory on large datasets)."""
    batches = list(read_batches(dataset, part, start, stop))
    return pa.Table.from_batches(batches, schema=arrow_schema())


def read_rows(
    dataset: Dataset | str | os.PathLike,
    part: str | None = None,
    start: int | None = None,
    stop: int | None = None,
) -> Iterator[dict]:
    """Events as dicts {column: value} (None for nulls, datetime for timestamps)."""
    for batch in read_batches(dataset, part, start, stop):
        yield from batch.to_pylist()

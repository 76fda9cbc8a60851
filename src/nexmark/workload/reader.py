"""Reading a dataset back as Arrow record batches or rows, in event order.

The batches have `generator.arrow_schema()`: the schema.py columns with their types (timestamps,
stored as epoch milliseconds, as timestamp[ms]; empty fields as nulls) plus `event_number`, so
they equal what `generator.generate_events` returns for the same range. DuckDB can query them
directly. A dataset at `s3://bucket/prefix` reads the same (`nexmark.storage`).
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import numpy as np
import pyarrow as pa
import pyarrow.csv as pcsv
import pyarrow.parquet as pq

from nexmark.errors import DatasetError, UsageError
from nexmark.storage import files as storage
from nexmark.storage.s3 import S3Url
from nexmark.workload.dataset import DataFile, Dataset
from nexmark.workload.generator import arrow_schema, file_arrow_schema, from_file_columns
from nexmark.workload.pools import as_arrow

_BLOCK_BYTES = 8 << 20  # CSV bytes parsed per batch (about 40K events)
_BATCH_ROWS = 32_768  # rows per batch handed out


def _open(dataset: Dataset | str | os.PathLike | S3Url) -> Dataset:
    return dataset if isinstance(dataset, Dataset) else Dataset(dataset)


def _csv_options() -> tuple[pcsv.ReadOptions, pcsv.ParseOptions, pcsv.ConvertOptions]:
    schema = file_arrow_schema()  # times as epoch milliseconds, cast once read
    read = pcsv.ReadOptions(column_names=schema.names, block_size=_BLOCK_BYTES)
    parse = pcsv.ParseOptions(quote_char=False, double_quote=False, escape_char=False)
    convert = pcsv.ConvertOptions(
        column_types={f.name: f.type for f in schema},
        null_values=[""],
        strings_can_be_null=True,
    )
    return read, parse, convert


class _ParquetStream:
    """A Parquet file's record batches, with the CSV stream's `read_next_batch`."""

    def __init__(self, path) -> None:
        schema = file_arrow_schema()
        # A local file by its path (pyarrow's own reader), an object through the S3 file system,
        # each row group's columns fetched at once (pre_buffer): column by column, a 22 MB
        # object took 4.3 s from a local s3proxy, 1.0 s so.
        if isinstance(path, S3Url):
            parquet = pq.ParquetFile(storage.open_input(path), pre_buffer=True)
        else:
            parquet = pq.ParquetFile(path)
        self._batches = parquet.iter_batches(batch_size=_BATCH_ROWS, columns=schema.names)
        self._schema = schema

    def read_next_batch(self) -> pa.RecordBatch:
        return next(self._batches).cast(self._schema)


class _FileCursor:
    """One file's rows, handed out in pieces of a given length (its blocks, in order)."""

    def __init__(self, f: DataFile) -> None:
        self.path = f.path
        try:
            if f.path.suffix == ".parquet":
                self._stream = _ParquetStream(f.path)
            elif isinstance(f.path, S3Url):
                self._stream = pcsv.open_csv(storage.open_input(f.path), *_csv_options())
            else:
                self._stream = pcsv.open_csv(f.path, *_csv_options())
        except (OSError, pa.ArrowException) as exc:
            raise DatasetError(f"{f.path}: cannot read ({exc})") from None
        self._batch: pa.RecordBatch | None = None
        self._offset = 0

    def take(self, rows: int) -> list[pa.RecordBatch]:
        pieces = []
        while rows > 0:
            if self._batch is None or self._offset == self._batch.num_rows:
                try:
                    self._batch, self._offset = self._stream.read_next_batch(), 0
                except StopIteration:
                    raise DatasetError(f"{self.path}: fewer rows than its manifest") from None
                except (OSError, pa.ArrowException) as exc:
                    raise DatasetError(f"{self.path}: cannot read ({exc})") from None
                continue
            k = min(rows, self._batch.num_rows - self._offset)
            pieces.append(self._batch.slice(self._offset, k))
            self._offset, rows = self._offset + k, rows - k
        return pieces


def _slice_batches(files: list[DataFile], start: int, stop: int) -> Iterator[pa.RecordBatch]:
    """The events of one time slice (its files are its stripes), in event order, restricted to
    event numbers [start, stop): block j of the slice comes from stripe j mod stripes."""
    schema, layout = arrow_schema(), files[0].layout
    cursors: dict[int, _FileCursor] = {}
    pieces: list[pa.RecordBatch] = []
    rows = 0
    for j, a in enumerate(range(layout.slice_start, layout.slice_stop, layout.block)):
        if a >= stop:
            break
        b = min(a + layout.block, layout.slice_stop)
        stripe = j % len(files)
        if stripe not in cursors:
            cursors[stripe] = _FileCursor(files[stripe])
        block = cursors[stripe].take(b - a)  # read even when skipped: CSV cannot seek
        lo, hi = max(start, a), min(stop, b)
        if lo >= hi:
            continue
        table = pa.Table.from_batches(block).slice(lo - a, hi - lo).combine_chunks()
        table = from_file_columns(table)
        numbers = as_arrow(np.arange(lo, hi, dtype=np.int64), pa.int64())
        columns = [table.column(i).chunk(0) for i in range(table.num_columns)] + [numbers]
        pieces.append(pa.RecordBatch.from_arrays(columns, schema=schema))
        rows += hi - lo
        if rows >= _BATCH_ROWS:
            yield _combine(pieces, schema)
            pieces, rows = [], 0
    if pieces:
        yield _combine(pieces, schema)


def _combine(pieces: list[pa.RecordBatch], schema: pa.Schema) -> pa.RecordBatch:
    return pa.Table.from_batches(pieces, schema=schema).combine_chunks().to_batches()[0]


def read_batches(
    dataset: Dataset | str | os.PathLike | S3Url,
    part: str | None = None,
    start: int | None = None,
    stop: int | None = None,
) -> Iterator[pa.RecordBatch]:
    """Stream events of a dataset as record batches with `arrow_schema()` (+ event_number), in
    event order whatever the file layout.

    Args:
        dataset: A Dataset, its directory or its `s3://` location.
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
    slices: dict[tuple[str, int], list[DataFile]] = {}
    for f in ds.files(part):
        slices.setdefault((f.part, f.layout.slice), []).append(f)
    for files in slices.values():
        layout = files[0].layout
        if layout.slice_start < stop and layout.slice_stop > start:
            yield from _slice_batches(files, start, stop)


def read_table(
    dataset: Dataset | str | os.PathLike | S3Url,
    part: str | None = None,
    start: int | None = None,
    stop: int | None = None,
) -> pa.Table:
    """All of `read_batches` as one table (mind the memory on large datasets)."""
    batches = list(read_batches(dataset, part, start, stop))
    return pa.Table.from_batches(batches, schema=arrow_schema())


def read_rows(
    dataset: Dataset | str | os.PathLike | S3Url,
    part: str | None = None,
    start: int | None = None,
    stop: int | None = None,
) -> Iterator[dict]:
    """Events as dicts {column: value} (None for nulls, datetime for timestamps)."""
    for batch in read_batches(dataset, part, start, stop):
        yield from batch.to_pylist()

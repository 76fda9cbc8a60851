"""The fast path to the CSV files: events start..stop-1 straight to CSV text.

`generator.kind_columns` draws every field as numbers (numpy, vectorized); this module turns
them into text with one compiled loop over the events in order (csvkernel.py, numba). Each
kind's line becomes a small program (constant bytes, integer, timestamp, string from a table)
over one flat array of the chunk's columns, and strings are copied from one concatenation of
the per-seed tables. Arrow's string kernels, used before, cost about 30 ns per field of every
line; this loop costs little more than copying the bytes. The text equals pyarrow's CSV output
for `generator.generate_events` with its times as epoch milliseconds (a test compares the two).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from nexmark.workload import generator as gen
from nexmark.workload import pools as pl
from nexmark.workload.schema import COLUMNS, Kind

# The operation codes of csvkernel.py, repeated here so that importing this module does not
# import numba (csvkernel is imported on the first formatting call).
_CONST, _INT, _TIME, _TEXT = 0, 1, 2, 3
_INT_BYTES, _TIME_BYTES = 20, 32
_WIDEST = {_INT: _INT_BYTES, _TIME: _TIME_BYTES}  # the most bytes a number or time can take
_BLOCK = 16  # csvkernel.BLOCK: slack after every byte source and the output
_SLACK = np.zeros(_BLOCK, dtype=np.uint8)


@dataclass(frozen=True)
class _Tables:
    """Every string table of one seed's Pools, concatenated: entry `base[id(table)] + i` is
    `table[i]`, its bytes data[offsets[entry]:offsets[entry + 1]]."""

    pools: pl.Pools
    offsets: np.ndarray  # int64
    data: np.ndarray  # uint8
    base: dict[int, int]
    longest: dict[int, int]  # bytes of each table's longest entry


def _string_parts(arr: pa.StringArray) -> tuple[np.ndarray, np.ndarray]:
    """(offsets, data) of a string array as numpy views, without copying."""
    offsets = np.frombuffer(arr.buffers()[1], dtype=np.int32)[
        arr.offset : arr.offset + len(arr) + 1
    ]
    data = arr.buffers()[2]
    return offsets, np.frombuffer(data, np.uint8) if data is not None else np.empty(0, np.uint8)


def _concatenate(pools: pl.Pools) -> _Tables:
    tables = [
        t
        for t in (getattr(pools, f.name) for f in dataclasses.fields(pools))
        if isinstance(t, pa.StringArray)
    ]
    offsets, data, base, longest = [], [], {}, {}
    entries = size = 0
    for table in tables:
        table_offsets, table_data = _string_parts(table)
        first, last = int(table_offsets[0]), int(table_offsets[-1])
        offsets.append(table_offsets[:-1].astype(np.int64) - first + size)
        data.append(table_data[first:last])
        base[id(table)], longest[id(table)] = entries, int(np.diff(table_offsets).max(initial=0))
        entries, size = entries + len(table), size + last - first
    offsets.append(np.array([size], dtype=np.int64))
    data.append(_SLACK)
    return _Tables(pools, np.concatenate(offsets), np.concatenate(data), base, longest)


_tables_by_seed: dict[int, _Tables] = {}


def _tables(seed: int) -> _Tables:
    pools = pl.pools(seed)
    tables = _tables_by_seed.get(seed)
    if tables is None or tables.pools is not pools:  # built once per process and seed
        tables = _tables_by_seed[seed] = _concatenate(pools)
    return tables


class _Program:
    """The line programs of every kind for one chunk: ops, constants, and the flat values."""

    def __init__(self, tables: _Tables) -> None:
        self.tables = tables
        self.ops: list[tuple[int, int, int]] = []
        self.op_start = [0]
        self.consts = bytearray()
        self.values: list[np.ndarray] = []
        self.size = 0  # entries in `values` so far
        self.bound = 0  # an upper bound of the bytes of the whole chunk
        self._line_bound = 0

    def constant(self, text: str) -> None:
        start = len(self.consts)
        self.consts += text.encode("ascii")
        if len(self.ops) > self.op_start[-1] and self.ops[-1][0] == _CONST:
            start = self.ops.pop()[1]  # adjoining constants of one line: one copy
        self.ops.append((_CONST, start, len(self.consts)))
        self._line_bound += len(text)

    def column(self, code: int, values: np.ndarray, table: pa.StringArray | None = None) -> None:
        base = 0 if table is None else self.tables.base[id(table)]
        self.ops.append((code, self.size, base))
        self.values.append(np.asarray(values, dtype=np.int64))
        self.size += len(values)
        self._line_bound += _WIDEST[code] if table is None else self.tables.longest[id(table)]

    def end_kind(self, rows: int) -> None:
        self.op_start.append(len(self.ops))
        self.bound += rows * self._line_bound
        self._line_bound = 0


def _add_kind(
    program: _Program,
    kind: Kind,
    cols: gen._Columns,
    config: gen.GeneratorConfig,
    text_times: bool = False,
):
    """Append the line program of one kind: its fields in schema order, empty for the columns
    of other kinds, then a newline. Times are epoch milliseconds, or text with `text_times`."""
    text_table = program.tables.pools.text
    time_code = _TIME if text_times else _INT
    for i, c in enumerate(COLUMNS):
        if i:
            program.constant(",")
        if c.name == "event_type":
            program.constant(str(int(kind)))
        elif c.name == "date_time":
            program.column(time_code, gen.event_time_ms(cols.n, config))
        elif c.name == "extra":
            program.column(_TEXT, cols.extra, text_table)
        elif c.kind != kind:
            continue  # another kind's column: empty
        elif c.name in cols.numbers:
            code = time_code if c.type.startswith("TIMESTAMP") else _INT
            program.column(code, cols.numbers[c.name])
        else:
            for piece in cols.strings[c.name]:
                if isinstance(piece, str):
                    program.constant(piece)
                else:
                    program.column(_TEXT, piece[1], piece[0])
    program.constant("\n")
    program.end_kind(len(cols.n))


class CsvFormatter:
    """Formats event ranges of one generator configuration as CSV text.

    The text goes into a buffer the formatter keeps and reuses (a fresh one per chunk would be
    page-faulted in again every time), so `format` returns a view that is valid only until the
    next call.

    Args:
        config: The generator configuration.
        text_times: Write times as text (`2024-01-01 00:00:00.000`), the format of generator
            versions up to 3, instead of epoch milliseconds. Datasets never use it; the data
            path benchmark writes the same events both ways to compare the readers.
    """

    def __init__(self, config: gen.GeneratorConfig, text_times: bool = False) -> None:
        from nexmark.workload import csvkernel  # numba: imported and compiled on first use

        self.config = gen._as_config(config)
        self.text_times = text_times
        self._write_lines = csvkernel.write_lines
        self._buffer = np.empty(0, dtype=np.uint8)

    def format(self, start: int, stop: int) -> memoryview:
        """The CSV text of events start..stop-1, one newline-terminated line each."""
        return self.format_numbers(np.arange(start, stop, dtype=np.int64))

    def format_numbers(self, numbers: np.ndarray) -> memoryview:
        """The CSV text of the events `numbers` (in that order), one line each."""
        kind, parts = gen.kind_columns_of(self.config, numbers)
        program = _Program(_tables(self.config.seed))
        for k, cols in zip(Kind, parts, strict=True):
            _add_kind(program, k, cols, self.config, self.text_times)
        if len(self._buffer) < program.bound + _BLOCK:
            self._buffer = np.empty(program.bound + _BLOCK, dtype=np.uint8)
        values = np.concatenate(program.values) if program.values else np.empty(0, np.int64)
        size = self._write_lines(
            kind,
            np.array(program.ops, dtype=np.int64).reshape(-1, 3),
            np.array(program.op_start, dtype=np.int64),
            values,
            program.tables.offsets,
            program.tables.data,
            np.frombuffer(bytes(program.consts) + bytes(_BLOCK), dtype=np.uint8),
            self._buffer,
        )
        return self._buffer[:size].data


def format_csv(
    config: gen.GeneratorConfig, start: int, stop: int, text_times: bool = False
) -> bytes:
    """The CSV text of events start..stop-1 (one line each, newline-terminated)."""
    return bytes(CsvFormatter(config, text_times).format(start, stop))

"""The fast path to the CSV files: events start..stop-1 straight to CSV text, in pieces.

Formatting a typed table with pyarrow's CSV writer was the slowest step, so lines are built per
kind with one `binary_join_element_wise` over that kind's columns (runs of empty columns become
constant strings); the runs of equal kinds are then written in event order with `os.writev`,
without copying them together first. The text equals pyarrow's CSV output for
`generator.generate_events` (a test compares the two).
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from nexmark.workload import generator as gen
from nexmark.workload import pools as pl
from nexmark.workload.schema import COLUMNS, Kind

_TIMESTAMP = pa.timestamp("ms")
_COMMA = pl.string_scalar(",")
_joined_tables: dict[tuple[int, int], pa.StringArray] = {}
_Gather = tuple[pa.StringArray, np.ndarray]  # text = table[index]


def _joined(first: pa.StringArray, second: pa.StringArray) -> pa.StringArray:
    """`first[i] + "," + second[i]` for two tables drawn with the same index (channel, url)."""
    key = (id(first), id(second))
    if key not in _joined_tables:
        _joined_tables[key] = pc.binary_join_element_wise(first, second, _COMMA)
    return _joined_tables[key]


def _numbers_text(values: np.ndarray, type_: pa.DataType) -> pa.Array | _Gather:
    """Numbers (or times) as text. Ids and event times span fewer distinct values than there
    are rows (100 events share a millisecond), so those format their range once and gather."""
    if len(values):
        low, high = int(values.min()), int(values.max())
        if high - low < len(values):
            span = np.arange(low, high + 1, dtype=np.int64)
            return pc.cast(gen.as_arrow(span, type_), pa.string()), values - low
    return pc.cast(gen.as_arrow(values, type_), pa.string())


def _source(name: str, cols: gen._Columns, config: gen.GeneratorConfig) -> pa.Array | _Gather:
    """The text of one column: finished, or a (table, index) gather still to do."""
    if name in cols.numbers:
        type_ = _TIMESTAMP if name == "a_expires" else pa.int64()
        return _numbers_text(cols.numbers[name], type_)
    if name == "date_time":
        return _numbers_text(gen.event_time_ms(cols.n, config), _TIMESTAMP)
    if name == "extra":
        return pl.pools(config.seed).text, cols.extra
    return cols.strings[name]


def _layout(kind: Kind, cols: gen._Columns) -> list[str | list[str]]:
    """A line of `kind` as constants (runs of empty fields) and groups of value column names.

    Joined with "," this gives the CSV line. It starts with a newline that ends the line
    before, which is cheaper than appending one; `format_pieces` moves it to the end.
    """
    layout: list[str | list[str]] = []
    for c in COLUMNS:
        if c.name == "event_type":
            layout.append(f"\n{int(kind)}")
        elif c.kind not in (kind, None):
            if isinstance(layout[-1], str):
                layout[-1] += ","
            else:
                layout.append("")
        elif isinstance(layout[-1], list) and _same_draw(cols, layout[-1][-1], c.name):
            layout[-1].append(c.name)  # e.g. channel and url: one take from a joined table
        else:
            layout.append([c.name])
    return layout


def _same_draw(cols: gen._Columns, first: str, second: str) -> bool:
    a, b = cols.strings.get(first), cols.strings.get(second)
    return a is not None and b is not None and a[1] is b[1]


def _lines(kind: Kind, cols: gen._Columns, config: gen.GeneratorConfig) -> pa.StringArray:
    """The CSV lines of one kind's events, each starting with a newline."""
    pieces: list = []
    for item in _layout(kind, cols):
        if isinstance(item, str):
            pieces.append(item)
            continue
        if len(item) == 2:
            (first, index), (second, _) = cols.strings[item[0]], cols.strings[item[1]]
            source = _joined(first, second), index
        else:
            source = _source(item[0], cols, config)
        if isinstance(source, tuple):
            table, index = source
            if pieces and isinstance(pieces[-1], str) and len(table) <= len(index):
                # Fold the constant before it into a small table: one join piece less.
                constant = pl.string_scalar(pieces.pop())
                table = pc.binary_join_element_wise(constant, table, _COMMA)
            source = gen.take(table, index)
        pieces.append(source)
    pieces = [pl.string_scalar(p) if isinstance(p, str) else p for p in pieces]
    return pc.binary_join_element_wise(*pieces, _COMMA)


def _string_parts(arr: pa.StringArray) -> tuple[np.ndarray, np.ndarray]:
    """(offsets, data) of a string array as numpy views, without copying."""
    offsets = np.frombuffer(arr.buffers()[1], dtype=np.int32)[
        arr.offset : arr.offset + len(arr) + 1
    ]
    data = arr.buffers()[2]
    return offsets, np.frombuffer(data, dtype=np.uint8) if data is not None else np.empty(
        0, np.uint8
    )


def _runs(kind: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Runs of equal kinds in event order: (kind, first row within that kind, length)."""
    change = np.flatnonzero(kind[1:] != kind[:-1]) + 1
    first = np.concatenate([[0], change])
    length = np.diff(np.concatenate([first, [len(kind)]]))
    run_kind = kind[first]
    rank = np.empty_like(length)
    for k in Kind:
        mine = run_kind == k
        rank[mine] = np.cumsum(length[mine]) - length[mine]
    return run_kind, rank, length


def format_pieces(config: gen.GeneratorConfig, start: int, stop: int) -> list[memoryview]:
    """The CSV text of events start..stop-1 as consecutive pieces (views, no copy).

    The kinds come in runs (1 person, 3 auctions, 46 bids) and a run's lines are contiguous
    in its kind's text, so each piece is one run; the writer hands them to `os.writev`.
    """
    kind, parts = gen.kind_columns(config, start, stop)
    if stop <= start:
        return []
    lines = [
        _string_parts(_lines(k, c, config)) if len(c.n) else None
        for k, c in zip(Kind, parts, strict=True)
    ]
    run_kind, rank, length = _runs(kind)
    begin, end = np.empty_like(rank), np.empty_like(rank)
    for k, kind_lines in enumerate(lines):
        if kind_lines is not None:
            mine = run_kind == k
            begin[mine] = kind_lines[0][rank[mine]]
            end[mine] = kind_lines[0][rank[mine] + length[mine]]
    texts = [memoryview(kind_lines[1]) if kind_lines else None for kind_lines in lines]
    runs = zip(run_kind.tolist(), begin.tolist(), end.tolist(), strict=True)
    pieces = [texts[k][a:b] for k, a, b in runs]
    # Each line starts with its newline: drop the very first, end with one.
    pieces[0] = pieces[0][1:]
    pieces.append(memoryview(b"\n"))
    return pieces


def format_csv(config: gen.GeneratorConfig, start: int, stop: int) -> bytes:
    """The CSV text of events start..stop-1 (one line each, newline-terminated)."""
    return b"".join(format_pieces(gen._as_config(config), start, stop))

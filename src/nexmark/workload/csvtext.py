"""The fast path to the CSV files: events start..stop-1 straight to CSV text, one buffer.

Formatting a typed table with pyarrow's CSV writer was the slowest step, so lines are built per
kind with one `binary_join_element_wise` over that kind's columns (runs of empty columns become
constant strings), then interleaved into event order with one `take`. The text is exactly what
the reader parses back into `generator.generate_events` (tests compare the two).
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from nexmark.workload import generator as gen
from nexmark.workload import pools as pl
from nexmark.workload.schema import COLUMNS, Kind

_joined_tables: dict[tuple[int, int], pa.StringArray] = {}


def _joined(first: pa.StringArray, second: pa.StringArray) -> pa.StringArray:
    """`first[i] + "," + second[i]` for two tables drawn with the same index (channel, url)."""
    key = (id(first), id(second))
    if key not in _joined_tables:
        _joined_tables[key] = pc.binary_join_element_wise(first, second, ",")
    return _joined_tables[key]


def _text(name: str, cols: gen._Columns, config: gen.GeneratorConfig) -> pa.Array:
    if name in cols.numbers:
        values = cols.numbers[name]
        if name == "a_expires":
            return pc.cast(pa.array(values.astype("datetime64[ms]")), pa.string())
        return pc.cast(pa.array(values), pa.string())
    if name == "date_time":
        times = gen.event_time_ms(cols.n, config).astype("datetime64[ms]")
        return pc.cast(pa.array(times), pa.string())
    if name == "extra":
        return pc.take(pl.pools(config.seed).text, cols.extra)
    table, index = cols.strings[name]
    return pc.take(table, index)


def _layout(kind: Kind, cols: gen._Columns) -> list[str | list[str]]:
    """A line of `kind` as constants (runs of empty fields) and groups of value column names.

    Joined with "," this gives the CSV line. It starts with a newline that ends the line
    before, which is cheaper than appending one; `format_csv` moves it to the end.
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
    pieces = []
    for item in _layout(kind, cols):
        if isinstance(item, str):
            pieces.append(pa.scalar(item, pa.string()))
        elif len(item) == 2:
            (first, index), (second, _) = cols.strings[item[0]], cols.strings[item[1]]
            pieces.append(pc.take(_joined(first, second), index))
        else:
            pieces.append(_text(item[0], cols, config))
    return pc.binary_join_element_wise(*pieces, ",")


def format_csv(config: gen.GeneratorConfig, start: int, stop: int) -> bytes:
    """The CSV text of events start..stop-1 (one line each, newline-terminated)."""
    config = gen._as_config(config)
    parts = gen.kind_columns(config, start, stop)
    lines = [_lines(k, cols, config) for k, cols in zip(Kind, parts, strict=True) if len(cols.n)]
    if not lines:
        return b""
    # Interleave the kinds back into event order: position of each event in `lines`.
    n = np.arange(start, stop, dtype=np.int64)
    kind = gen.kinds(n, config)
    order = np.empty(len(n), dtype=np.int64)
    base = 0
    for k, cols in zip(Kind, parts, strict=True):
        order[kind == k] = np.arange(base, base + len(cols.n))
        base += len(cols.n)
    text = pc.take(pa.concat_arrays(lines), order)
    offsets = np.frombuffer(text.buffers()[1], dtype=np.int32)
    data = memoryview(text.buffers()[2])[offsets[text.offset] + 1 : offsets[-1]]
    return b"".join((data, b"\n"))

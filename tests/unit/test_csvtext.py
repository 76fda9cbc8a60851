"""The compiled CSV formatter (csvtext.py + csvkernel.py) against independent formatters:
pyarrow's CSV writer on the typed table, Python's int formatting, pyarrow's timestamp cast."""

from __future__ import annotations

import io
from datetime import datetime

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pcsv
import pytest

from nexmark.workload import csvkernel
from nexmark.workload import generator as gen
from nexmark.workload.csvtext import CsvFormatter, format_csv


def pyarrow_csv(
    config: gen.GeneratorConfig, start: int, stop: int, text_times: bool = False
) -> bytes:
    table = gen.generate_events(config, start, stop).drop_columns(["event_number"])
    if not text_times:  # the files hold times as epoch milliseconds
        table = gen.to_file_columns(table)
    out = io.BytesIO()
    pcsv.write_csv(table, out, pcsv.WriteOptions(include_header=False, quoting_style="none"))
    return out.getvalue()


@pytest.mark.parametrize(
    "config, start, stop",
    [
        # Another seed, a slow rate and a base time before 1970 (negative epoch milliseconds).
        (gen.GeneratorConfig(seed=7, rate=333, base_time=datetime(1969, 12, 31, 23, 59)), 0, 3000),
        # Other proportions (persons and auctions in runs), far into a long dataset.
        (gen.GeneratorConfig(proportions=(2, 5, 3)), 10**9, 10**9 + 3000),
        # Leap days and year ends pass by at a fast clock.
        (gen.GeneratorConfig(rate=1, base_time=datetime(2023, 12, 31, 23)), 5_000_000, 5_001_000),
    ],
)
def test_equals_pyarrow_csv_for_other_configs(config, start, stop):
    assert format_csv(config, start, stop) == pyarrow_csv(config, start, stop)
    # The older format (times as text), kept for the data path benchmark's comparison.
    legacy = format_csv(config, start, stop, text_times=True)
    assert legacy == pyarrow_csv(config, start, stop, text_times=True)


def test_times_are_epoch_milliseconds_and_the_lines_otherwise_unchanged():
    config = gen.GeneratorConfig()
    new = format_csv(config, 0, 200).decode().splitlines()
    old = format_csv(config, 0, 200, text_times=True).decode().splitlines()
    first = new[0].split(",")
    assert first[20] == "1704067200000"  # date_time_ms of event 0: 2024-01-01 00:00:00.000
    assert old[0].split(",")[20] == "2024-01-01 00:00:00.000"
    for a, b in zip(new, old, strict=True):
        a, b = a.split(","), b.split(",")
        times = [i for i, c in enumerate(gen.COLUMNS) if gen.is_time(c) and a[i]]
        assert [x for i, x in enumerate(a) if i not in times] == [
            x for i, x in enumerate(b) if i not in times
        ]


def test_a_reused_formatter_gives_the_same_text_as_a_fresh_one():
    config = gen.GeneratorConfig(seed=3)
    formatter = CsvFormatter(config)
    big = bytes(formatter.format(0, 5000))  # grows the buffer
    small = bytes(formatter.format(100, 130))  # reuses it: no stale bytes may leak in
    assert small == format_csv(config, 100, 130)
    assert big.startswith(format_csv(config, 0, 100))
    assert formatter.format(7, 7).nbytes == 0


def test_integers_as_python_writes_them():
    values = [0, 7, 9, 10, 99, 100, 101, 999, 1000, 12_345, 10**9, 10**18 - 1, 10**18]
    values += [2**63 - 1, -1, -10, -99_999, -(2**63 - 1)]
    out = np.zeros(32, dtype=np.uint8)
    for v in values:
        end = csvkernel._write_int(out, 3, np.int64(v))
        assert bytes(out[3:end]).decode() == str(v)


def test_timestamps_as_pyarrow_casts_them():
    rng = np.random.default_rng(0)
    year_1, year_9999 = -62_135_596_800_000, 253_402_300_799_999
    ms = rng.integers(year_1, year_9999, 2000)
    ms = np.concatenate([ms, [year_1, year_9999, -1, 0, 1, 951_782_400_000, 4_107_542_400_000]])
    expected = pc.cast(pa.array(ms, pa.int64()).cast(pa.timestamp("ms")), pa.string())
    out = np.zeros(64, dtype=np.uint8)
    for value, text in zip(ms.tolist(), expected.to_pylist(), strict=True):
        end = csvkernel._write_time(out, 0, np.int64(value))
        assert bytes(out[:end]).decode() == text, value


def test_csvtext_and_the_kernel_agree_on_codes_and_sizes():
    from nexmark.workload import csvtext

    # csvtext repeats these so that importing it does not import numba.
    assert (csvtext._CONST, csvtext._INT, csvtext._TIME, csvtext._TEXT) == (
        csvkernel.CONST, csvkernel.INT, csvkernel.TIME, csvkernel.TEXT,
    )  # fmt: skip
    assert (csvtext._INT_BYTES, csvtext._TIME_BYTES, csvtext._BLOCK) == (
        csvkernel.INT_BYTES, csvkernel.TIME_BYTES, csvkernel.BLOCK,
    )  # fmt: skip

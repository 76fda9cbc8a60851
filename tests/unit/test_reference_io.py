"""Reading a dataset for the reference (events, readers, final watermark) and q10's files."""

from __future__ import annotations

import dataclasses
from datetime import datetime, timedelta

import pytest

from nexmark.engines.semantics import (
    Emission,
    FinalWatermark,
    IntegerAverage,
    ResultSemantics,
    SideLookup,
    WindowFiring,
)
from nexmark.errors import DatasetError
from nexmark.verify.outputs import read_partitioned_csv
from nexmark.verify.reference import final_watermark_of, load_events, reference
from nexmark.workload.schema import COLUMNS


def _ms(when: str) -> str:
    """A time as the files store it: epoch milliseconds."""
    return str((datetime.fromisoformat(when) - datetime(1970, 1, 1)) // timedelta(milliseconds=1))


def _bid_line(auction: int, price: int, when: str) -> str:
    values = {
        "event_type": "2",
        "b_auction": str(auction),
        "b_bidder": "7",
        "b_price": str(price),
        "b_channel": "Google",
        "b_url": "https://h/a/b/c/p",
        "date_time": _ms(when),
        "extra": "e",
    }
    return ",".join(values.get(c.name, "") for c in COLUMNS)


def _write(path, lines):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n")


@pytest.fixture
def dataset(tmp_path):
    root = tmp_path / "ds"
    _write(root / "warmup" / "part-00000.csv", [_bid_line(1, 100, "2024-01-01 00:00:01.000")])
    _write(root / "warmup" / "part-00001.csv", [_bid_line(2, 200, "2024-01-01 00:00:02.000")])
    _write(
        root / "benchmark" / "part-00000.csv",
        [
            _bid_line(3, 300, "2024-01-01 00:00:09.000"),
            _bid_line(3, 301, "2024-01-01 00:00:10.000"),
        ],
    )
    _write(root / "benchmark" / "part-00001.csv", [_bid_line(4, 400, "2024-01-01 00:00:12.500")])
    return root


def test_load_events_numbers_events_and_readers_in_file_order(dataset):
    data = load_events(dataset)
    table = data.table.to_pydict()
    assert table["event_number"] == [0, 1, 2, 3, 4]
    assert table["segment"] == [0, 1, 2, 2, 3]
    assert table["b_price"] == [100, 200, 300, 301, 400]
    assert table["p_id"] == [None] * 5  # empty field = null
    assert table["date_time"][4] == datetime(2024, 1, 1, 0, 0, 12, 500000)


# An engine whose final watermark is its slowest reader's (as Flink's).
SLOWEST_READER = ResultSemantics(
    emission=Emission.CHANGELOG,
    window_firing=WindowFiring.LAST_MS,
    final_watermark=FinalWatermark.MIN_OVER_READERS,
    integer_average=IntegerAverage.TRUNCATED,
    side_lookup=SideLookup.VERSIONED_AT_WATERMARK,
    watermark_slack_ms=0,
    idle_sources=frozenset({"kafka"}),
)


def test_final_watermark_is_the_slowest_benchmark_reader_minus_4s(dataset):
    # Readers end at 10.000 and 12.500: the watermark stops at 10.000 - 4 s.
    data = load_events(dataset)
    assert data.final_watermark is None  # the engine's rule decides it
    assert data.for_engine(SLOWEST_READER).final_watermark == datetime(2024, 1, 1, 0, 0, 6)
    assert final_watermark_of([], FinalWatermark.MIN_OVER_READERS) is None


def test_readers_that_turn_idle_make_the_rows_up_to_the_fastest_optional(dataset):
    """From Kafka, Flink's restored readers turn idle once done: the last watermark lies
    between the slowest reader's (10.000 - 4 s) and the fastest's (12.500 - 4 s). The top is
    the final watermark and everything from the bottom up is slack (optional rows)."""
    data = load_events(dataset)
    from_files = data.for_engine(SLOWEST_READER.for_source("files"))
    assert from_files.final_watermark == datetime(2024, 1, 1, 0, 0, 6)
    assert from_files.watermark_slack_ms == 0
    from_kafka = data.for_engine(SLOWEST_READER.for_source("kafka"))
    assert from_kafka.final_watermark == datetime(2024, 1, 1, 0, 0, 8, 500000)
    assert from_kafka.watermark_slack_ms == 2500  # the readers' spread
    # An engine whose watermark is over the whole input keeps it from every source.
    whole = dataclasses.replace(SLOWEST_READER, final_watermark=FinalWatermark.MAX_OVER_INPUT)
    assert whole.for_source("kafka") is whole
    assert data.for_engine(whole.for_source("kafka")).watermark_slack_ms == 0


def test_reference_reads_the_loaded_dataset(dataset):
    data = load_events(dataset).for_engine(SLOWEST_READER)
    assert sorted(reference("q2", data).rows) == []
    assert len(reference("q0", data).rows) == 5


def test_events_not_read_for_an_engine_have_no_reference(dataset):
    # No engine's rules by default: the caller states them (EventData.for_engine).
    with pytest.raises(ValueError, match="without an engine's result semantics"):
        reference("q0", load_events(dataset))


def test_missing_part_is_a_dataset_error(tmp_path):
    (tmp_path / "warmup").mkdir()
    with pytest.raises(DatasetError, match="no data files"):
        load_events(tmp_path)


def test_partitioned_csv_keeps_only_committed_files_and_adds_partitions(tmp_path):
    part = tmp_path / "dt=2024-01-01" / "hm=00%3A05"
    _write(part / "part-1-0", ["1,2,3,Google,u,2024-01-01 00:05:00.5,e"])
    _write(part / ".part-1-1.inprogress", ["9,9,9,x,u,2024-01-01 00:05:01,e"])
    _write(tmp_path / "dt=2024-01-01" / "_SUCCESS", [""])
    rows = read_partitioned_csv(tmp_path, ("dt", "hm"))
    assert rows == [
        ("1", "2", "3", "Google", "u", "2024-01-01 00:05:00.5", "e", "2024-01-01", "00:05")
    ]

"""The profile's summary from async-profiler's collapsed stacks: kinds of work and hot frames."""

from __future__ import annotations

import pytest

from nexmark.engines.profiling import OTHER, kind_of, summarise

RUN, TASK = "java/lang/Thread.run", "org/apache/flink/streaming/runtime/tasks/StreamTask.invoke"
VALUE_STATE = "org/apache/flink/contrib/streaming/state/RocksDBValueState.value"
DESERIALIZE = "org/apache/flink/api/common/typeutils/base/LongSerializer.deserialize"
FETCH = "org/apache/flink/connector/file/src/impl/FileSourceSplitReader.fetch"
READ_VALUE = "org/apache/parquet/column/impl/ColumnReaderBase.readValue"
COLLAPSED = "\n".join(
    [
        f"{RUN};{TASK};org/rocksdb/RocksDB.get;rocksdb::DBImpl::Get 50",
        f"{RUN};{TASK};{VALUE_STATE};{DESERIALIZE} 20",
        f"{RUN};{FETCH};{READ_VALUE} 20",
        "GCTaskThread;G1ParEvacuateFollowersClosure::do_void 6",
        f"{RUN};org/apache/flink/table/runtime/operators/join/Join.process 4",
        "not a sample line",
    ]
)


def test_each_stack_goes_to_the_kind_nearest_its_leaf() -> None:
    assert kind_of(["a", "org/rocksdb/RocksDB.get", "rocksdb::DBImpl::Get"]) == "state backend"
    # Serialization called from the state backend is serialization: the leaf side wins.
    assert kind_of(["RocksDBValueState.value", "LongSerializer.deserialize"]) == "serialization"
    assert kind_of(["GCTaskThread", "G1ParEvacuateFollowersClosure::do_void"]) == (
        "garbage collection"
    )
    assert kind_of(["java/lang/Thread.run", "Join.process"]) == OTHER


def test_the_summary_shares_add_up_to_the_samples() -> None:
    summary = summarise(COLLAPSED)
    assert summary.samples == 100
    assert summary.kinds == pytest.approx(
        {
            "state backend": 0.5,
            "serialization": 0.2,
            "file reading": 0.2,
            "garbage collection": 0.06,
            OTHER: 0.04,
        }
    )
    assert sum(summary.kinds.values()) == pytest.approx(1.0)
    assert list(summary.kinds)[0] == "state backend"  # largest first
    assert summary.top_frames[0] == ("rocksdb::DBImpl::Get", pytest.approx(0.5))
    assert [f for f, _ in summary.top_frames][1:3] == [DESERIALIZE, READ_VALUE]


def test_no_samples_is_an_empty_summary_not_a_division_by_zero() -> None:
    summary = summarise("")
    assert summary.samples == 0 and summary.kinds == {} and summary.top_frames == []


def test_top_frames_are_cut_at_the_limit() -> None:
    lines = [f"root;frame{i} {100 - i}" for i in range(30)]
    summary = summarise(lines, top=5)
    assert [f for f, _ in summary.top_frames] == [f"frame{i}" for i in range(5)]

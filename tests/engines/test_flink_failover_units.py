"""The Flink failover's pieces that need no JVM: the restored position read from a
TaskManager's log lines (as Flink 2.3 writes them), and the options of a failover run."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from nexmark.engines.flink import options as opts
from nexmark.engines.flink.recovery import finished_splits, restored_splits
from nexmark.errors import EngineError

STAMP = "2026-12-01 14:13:48,874"
LOGGER = "INFO  org.apache.flink.connector.base.source.reader.SourceReaderBase [] - "


def _line(stamp: str, splits: str) -> str:
    return f"{stamp} {LOGGER}Adding split(s) to reader: [{splits}]"


def _split(path: Path, position: str) -> str:
    head = f"FileSourceSplit: file:{path} [0, 5361626) (no host info)"
    return f"{head} ID=0000000002 position={position}"


def _since(stamp: str) -> float:
    return time.mktime(time.strptime(stamp[:19], "%Y-%m-%d %H:%M:%S")) + int(stamp[20:]) / 1000


def test_the_last_restored_position_of_each_file_since_the_failure_counts(tmp_path):
    part = tmp_path / "benchmark"
    part.mkdir()
    a, b = part / "part-00000-000.csv", part / "part-00000-001.csv"
    for path in (a, b):
        path.write_bytes(b"1\n2\n3\n4\n5\n")
    skip = "CheckpointedPosition: offset=NO_OFFSET, recordsToSkip="
    log = "\n".join(
        [
            _line("2026-12-01 14:13:36,611", _split(a, "null")),  # the first start: ignored
            _line(STAMP, _split(a, f"{skip}17025")),
            _line(STAMP, _split(b, "CheckpointedPosition: offset=4, recordsToSkip=1")),
            _line(STAMP, _split(tmp_path / "warmup" / "x.csv", f"{skip}9")),  # another part
            f"{STAMP} INFO  something else entirely",
        ]
    )
    found = restored_splits(log, part, since=_since(STAMP) - 0.5)
    assert {p.name: s.events for p, s in found.items()} == {
        "part-00000-000.csv": 17025,
        "part-00000-001.csv": 2 + 1,  # two lines before byte 4, then one record skipped
    }
    assert restored_splits(log, part, since=_since(STAMP) + 60) == {}


def test_a_restored_position_on_a_store_is_read_from_the_objects_url():
    """A part on an object store: the readers log `s3://bucket/key` splits; those of the part's
    prefix count, by the URL the job reads them under (its feed's), others are left out."""
    from nexmark.storage.s3 import S3Url

    part = S3Url.parse("s3://ckpt/run/q5/run-2/source/benchmark")
    skip = "CheckpointedPosition: offset=NO_OFFSET, recordsToSkip="

    def split(url: str, position: str) -> str:
        return (
            f"FileSourceSplit: {url} [0, 5361626) (no host info) ID=0000000003 position={position}"
        )

    log = "\n".join(
        [
            _line(STAMP, split(f"{part}/part-00000-000.parquet", f"{skip}4242")),
            _line(
                STAMP,
                split("s3://ckpt/run/q5/run-1/source/warmup/part-00000-000.parquet", f"{skip}7"),
            ),  # fmt: skip
            _line(STAMP, split("s3://Not_A_Bucket/x.parquet", f"{skip}1")),
        ]
    )
    found = restored_splits(log, part, since=_since(STAMP) - 0.5)
    assert {str(p): s.events for p, s in found.items()} == {f"{part}/part-00000-000.parquet": 4242}
    assert next(iter(found)) == part / "part-00000-000.parquet"  # the feed's own key


def test_a_parquet_position_counts_records_from_the_files_start_and_never_an_offset(tmp_path):
    part = tmp_path / "benchmark"
    part.mkdir()
    path = part / "part-00000-000.parquet"
    path.write_bytes(b"PAR1")  # only its name is read: Parquet positions need no file access
    skip = "CheckpointedPosition: offset=NO_OFFSET, recordsToSkip=120"
    found = restored_splits(_line(STAMP, _split(path, skip)), part, since=_since(STAMP) - 0.5)
    assert [s.events for s in found.values()] == [120]
    # A byte offset in a Parquet file is what Flink's reader never restores: not guessed at.
    offset = _line(STAMP, _split(path, "CheckpointedPosition: offset=4, recordsToSkip=1"))
    with pytest.raises(EngineError, match="not a CSV file"):
        restored_splits(offset, part, since=_since(STAMP) - 0.5)


def test_a_failover_run_restarts_jobs_and_records_what_shapes_its_times():
    flink = {"restart-strategy.type": "none", "execution.checkpointing.num-retained": "3"}
    job = opts.failover_job_options(flink)
    assert job["restart-strategy.type"] == "fixed-delay"
    assert job["restart-strategy.fixed-delay.delay"] == "1 s"
    assert int(job["execution.checkpointing.num-retained"]) >= 10
    mine = {**flink, "restart-strategy.fixed-delay.delay": "5 s"}
    assert opts.failover_job_options(mine)["restart-strategy.fixed-delay.delay"] == "5 s"
    # The state metrics stay on: the slowdown once blamed on them was the metrics' freeze.
    rocks = {**flink, "state.backend.type": "rocksdb"}
    assert not [k for k in opts.failover_job_options(rocks) if ".metrics." in k]
    recorded = opts.failover_recorded({"heartbeat.timeout": "4 s", "state.backend.type": "rocksdb"})
    assert recorded["nexmark.failover.heartbeat.timeout"] == "4 s"
    assert recorded["nexmark.failover.heartbeat.interval"] == "10 s"  # Flink's default
    assert recorded["nexmark.failover.resourcemanager.standalone.start-up-time"] == "24 h"


def test_splits_read_to_their_end_count_only_after_the_restore():
    before, after = "2026-12-01 14:43:20,000", "2026-12-01 14:43:42,524"
    log = "\n".join(
        f"{stamp} INFO  org.apache.flink.connector.base.source.reader.SourceReaderBase [] - "
        f"Finished reading split(s) [{ids}]"
        for stamp, ids in ((before, "0000000001"), (after, "0000000002, 0000000003"))
    )
    assert finished_splits(log, since=_since(after) - 1) == {"0000000002", "0000000003"}
    assert finished_splits(log, since=_since(before)) == {"0000000001", "0000000002", "0000000003"}

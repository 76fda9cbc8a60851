"""The Spark engine reading a load's topics (engines/spark/source.py, restore.kafka_subscription)
on a real embedded broker and real Spark: the warm-up on the warm-up topic, its checkpoint,
the restore onto the benchmark topic, and the collected results equal to the same two phases
read from the dataset's files. Micro-batches are bounded (maxOffsetsPerTrigger) to a few per
phase, so the watermark crosses batches as it does on files, and the restored query's first
batch already reads the benchmark topic's partitions as new ones."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest
from kafka_helpers import EVENTS, PARTITIONS

from nexmark.engines.source import FileSource, KafkaSource
from nexmark.engines.spark.job import kafka_offsets, log_ids
from nexmark.engines.spec import JobSpec, SinkKind
from nexmark.errors import EngineError
from nexmark.protocol.preparation.parts import PhaseParts
from nexmark.settings import Settings
from nexmark.workload.dataset import Dataset, DatasetParams
from nexmark.workload.writer import ensure_dataset

pytestmark = [pytest.mark.slow, pytest.mark.spark]

BATCH_EVENTS = 2_000  # micro-batches of the tiny load: 8 in the warm-up (15K events), 3 after
# 20K events at 500 ev/s: 40 s of event time, so 10 s windows close in both phases (the
# shared tiny load's rate would close none). Replaces tests/sources' `dataset` here: the
# module's broker loads this one.
PARAMS = DatasetParams(events=EVENTS, rate=500, files=PARTITIONS, slices=4)


@pytest.fixture(scope="module")
def dataset(tmp_path_factory: pytest.TempPathFactory) -> Dataset:
    root = tmp_path_factory.mktemp("kspark-data")
    return ensure_dataset(PARAMS, out=root / PARAMS.dataset_id, show_progress=False)


def _topic(loaded, broker, part: str) -> KafkaSource:
    return KafkaSource(
        bootstrap=broker.bootstrap,
        topic=loaded.topics[part],
        part=part,
        partitions=loaded.partitions,
        counts=tuple(loaded.counts[part]),
        load_id=loaded.load_id,
    )


def _wait_events(job, n: int, timeout_s: float = 180) -> None:
    deadline = time.monotonic() + timeout_s
    while job.events_emitted() < n:
        assert not job.status().state.terminal, job.status()
        assert time.monotonic() < deadline, f"{job.events_emitted()} of {n} events"
        time.sleep(0.2)


def _records_per_batch(job) -> list[int]:
    """Records each batch this job ran read (its offsets log), batches that read none left out."""
    ids = [i for i in log_ids(job.checkpoint / "offsets") if i > (job.restored_batch or -1)]
    start = job.restored_batch if job.restored_batch is not None else None
    totals = [0 if start is None else _total(kafka_offsets(job.checkpoint, start))]
    totals += [_total(kafka_offsets(job.checkpoint, i)) for i in ids]
    return [b - a for a, b in zip(totals, totals[1:], strict=False) if b > a]


def _total(offsets) -> int:
    return sum(sum(parts.values()) for parts in (offsets or {}).values())


def _two_phases(engine, query, warmup, benchmark, work, warmup_events, benchmark_events):
    """Warm-up, its checkpoint, cancel; the benchmark part restored from it, to its end."""
    spec = JobSpec(query, warmup, work, parallelism=2, sink=SinkKind.COLLECT)
    first = engine.submit(spec)
    _wait_events(first, warmup_events)
    cp = first.trigger_checkpoint(180)
    first.cancel()
    spec = JobSpec(query, benchmark, work, restore=cp.snapshot, parallelism=2)
    spec.sink, spec.collect_dir = SinkKind.COLLECT, work / "collect-benchmark"
    second = engine.submit(spec)
    _wait_events(second, benchmark_events)
    second.trigger_checkpoint(180)
    second.cancel()
    rows = sorted(map(repr, first.collected_rows())) + sorted(map(repr, second.collected_rows()))
    return first, second, rows


@pytest.mark.parametrize("query", ["q5", "q3"])  # windowed; a join (both stateful)
def test_kafka_two_phases_equal_the_files(
    spark_engine, broker, dataset, loaded, tmp_path, monkeypatch, query
):
    parts = PhaseParts.of(dataset)
    warmup, benchmark = _topic(loaded, broker, "warmup"), _topic(loaded, broker, "benchmark")
    assert (warmup.events, benchmark.events) == (parts.warmup_events, parts.benchmark_events)
    assert len(warmup.counts) == PARTITIONS
    # From the files, as the engine runs them.
    _, _, from_files = _two_phases(
        spark_engine,
        query,
        FileSource.of(parts.warmup_dir),
        FileSource.of(parts.benchmark_dir),
        tmp_path / "files",
        parts.warmup_events,
        parts.benchmark_events,
    )
    # From Kafka, in bounded micro-batches.
    small = Settings.load(overrides=[f"spark.nexmark.slice.events={BATCH_EVENTS}"])
    monkeypatch.setattr(spark_engine, "settings", small)
    first, second, from_kafka = _two_phases(
        spark_engine,
        query,
        warmup,
        benchmark,
        tmp_path / "kafka",
        warmup.events,
        benchmark.events,
    )
    assert from_files and from_kafka == from_files
    # Bounded: several batches per phase, none above the bound (read from the offsets log:
    # a self-join's progress counts each record once per scan of the source).
    for job in (first, second):
        reads = _records_per_batch(job)
        assert len(reads) >= 3 and max(reads) <= BATCH_EVENTS, reads
    # The offsets each phase ends at are the load's counts; the restored query went on from
    # the warm-up's, which it subscribes to as well (nothing more read there).
    assert first.source_offsets() == {warmup.topic: list(warmup.counts)}
    assert second.source_offsets() == {
        warmup.topic: list(warmup.counts),
        benchmark.topic: list(benchmark.counts),
    }
    assert first.events_per_reader() == list(warmup.counts)
    assert second.events_per_reader() == list(benchmark.counts)
    assert (first.events_emitted(), second.events_emitted()) == (warmup.events, benchmark.events)
    # The state came through the restore: the proof compared it row for row.
    check = second.restore_check
    assert check is not None and check["expected"] == check["found"] and sum(check["found"]) > 0
    assert second.restored_from().id == second.restored_batch


def test_kafka_is_not_fed_at_a_rate(spark_engine, broker, loaded, tmp_path):
    spec = JobSpec("q0", _topic(loaded, broker, "warmup"), tmp_path, rate_fed=True)
    with pytest.raises(EngineError, match="rate-fed"):
        spark_engine.submit(spec)


@pytest.mark.timeout(900)
def test_verify_on_spark_from_kafka_matches(broker, tmp_path) -> None:
    """The whole command on Spark: `nexmark verify --engine spark --source kafka` loads the
    dataset into the module's broker (as a user's cluster) and a windowed query and a join
    match the reference, each restored from the warm-up topic onto the benchmark topic. In a
    process of its own: the CLI starts its own Spark session."""
    env = {**os.environ, "NEXMARK_DATA_DIR": str(tmp_path / "data")}
    done = subprocess.run(
        [
            sys.executable, "-m", "nexmark", "verify", "--engine", "spark", "-q", "q5,q3",
            "--events", "20K", "--parallelism", "2", "--source", "kafka",
            "--kafka-bootstrap", broker.bootstrap,
        ],
        capture_output=True, text=True, env=env, timeout=840, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "2 partitions per part" in done.stderr
    rows = [line for line in done.stdout.splitlines() if line.startswith("│ q")]
    assert [r.split("│")[1:3] for r in rows] == [[" q5    ", " match  "], [" q3    ", " match  "]]

"""The Spark engine's reading of a Kafka query's checkpoint (no Spark): the offsets log's
source line, the records read between two batches, and the topics a restore subscribes to."""

from __future__ import annotations

import json
from pathlib import Path

from nexmark.engines.source import KafkaSource
from nexmark.engines.spark.job import kafka_offsets
from nexmark.engines.spark.restore import kafka_subscription

WARMUP, BENCHMARK = "nexmark-x-p2-csv-warmup", "nexmark-x-p2-csv-benchmark"
# The batch's metadata line as Spark 4.3 writes it (shortened): a JSON object of its own.
META = {"batchWatermarkMs": 1704067207998, "batchTimestampMs": 1, "conf": {"a": "b"}}


def _offsets(checkpoint: Path, batch: int, source: dict) -> None:
    log = checkpoint / "offsets"
    log.mkdir(parents=True, exist_ok=True)
    (log / str(batch)).write_text(f"v1\n{json.dumps(META)}\n{json.dumps(source)}")


def _source(topic: str) -> KafkaSource:
    return KafkaSource("127.0.0.1:9092", topic, "benchmark", 2, (2500, 2500), "x")


def test_the_offsets_log_gives_each_partitions_next_offset(tmp_path):
    _offsets(tmp_path, 7, {WARMUP: {"0": 7500, "1": 7500}})
    _offsets(tmp_path, 12, {WARMUP: {"0": 7500, "1": 7500}, BENCHMARK: {"1": 2500, "0": 2499}})
    assert kafka_offsets(tmp_path, 7) == {WARMUP: {0: 7500, 1: 7500}}
    assert kafka_offsets(tmp_path, 12)[BENCHMARK] == {0: 2499, 1: 2500}
    assert kafka_offsets(tmp_path, 8) is None  # no such batch
    (tmp_path / "offsets" / "9").write_text(f"v1\n{json.dumps(META)}\n")  # no source line
    assert kafka_offsets(tmp_path, 9) is None


def test_a_restore_subscribes_to_the_checkpoints_topics_and_its_own(tmp_path):
    _offsets(tmp_path, 7, {WARMUP: {"0": 7500, "1": 7500}})
    assert kafka_subscription(_source(WARMUP), tmp_path, None) == [WARMUP]
    assert kafka_subscription(_source(BENCHMARK), tmp_path, 7) == [BENCHMARK, WARMUP]
    # A failover restart on its own checkpoint, which already holds both: each once.
    _offsets(tmp_path, 12, {WARMUP: {"0": 7500, "1": 7500}, BENCHMARK: {"0": 1, "1": 1}})
    assert kafka_subscription(_source(BENCHMARK), tmp_path, 12) == [BENCHMARK, WARMUP]

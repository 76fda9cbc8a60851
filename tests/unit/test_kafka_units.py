"""The pure parts of Kafka as a source (sources/kafka/): bootstrap parsing, the broker's
configuration, how a load cuts a part into partitions, its manifest, the engines' Kafka options,
and the one-line failures that need no broker (nothing reachable, no mvn)."""

from __future__ import annotations

import os
import socket
import sys
from pathlib import Path

import numpy as np
import pytest

from cli_process import nexmark
from nexmark.errors import DiskFullError, UsageError
from nexmark.sources.kafka import jars
from nexmark.sources.kafka import load as kload
from nexmark.sources.kafka.broker import (
    ExternalCluster,
    KafkaError,
    check_port_free,
    cluster_id,
    parse_bootstrap,
    server_properties,
)
from nexmark.workload.csvtext import CsvFormatter
from nexmark.workload.dataset import DatasetParams
from nexmark.workload.writer import ensure_dataset


def test_bootstrap_is_host_and_port() -> None:
    assert parse_bootstrap("kafka-1.example:9092,kafka-2:9092") == ("kafka-1.example", 9092)
    assert parse_bootstrap("[::1]:9093") == ("::1", 9093)
    for bad in ("localhost", "host:port", ":9092", "host:0", "host:70000"):
        with pytest.raises(UsageError, match="is not HOST:PORT"):
            parse_bootstrap(bad)


def test_a_port_in_use_is_one_line() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        port = sock.getsockname()[1]
        with pytest.raises(UsageError, match=f"port {port} on 127.0.0.1 is not free .*in use"):
            check_port_free(port)


def test_server_properties_keep_events_and_listen_on_loopback(tmp_path: Path) -> None:
    text = server_properties(tmp_path / "data", 19092, 19093)
    props = dict(line.split("=", 1) for line in text.splitlines())
    assert props["listeners"] == "PLAINTEXT://127.0.0.1:19092,CONTROLLER://127.0.0.1:19093"
    assert props["controller.quorum.voters"] == "1@127.0.0.1:19093"
    assert props["log.retention.ms"] == "-1"  # 2024 record timestamps would age out at once
    assert props["auto.create.topics.enable"] == "false"
    assert props["log.dirs"] == str(tmp_path / "data")
    assert len(cluster_id()) == 22 and cluster_id() != cluster_id()


def test_a_cluster_id_never_reads_as_an_option() -> None:
    """The storage tool takes `-t <id>`: an id starting with "-" failed one CI run's format.
    1 id in 32 starts so: 2000 draws miss it with odds of 1e-28."""
    ids = [cluster_id() for _ in range(2000)]
    assert not [i for i in ids if i.startswith("-")]
    assert all(len(i) == 22 for i in ids)


def test_broker_jars_are_pinned_with_a_binding() -> None:
    groups = jars.PINNED.groups()
    assert jars.PINNED.transitive(jars.BROKER)
    names = [str(j) for j in groups[jars.BROKER]]
    assert "org.apache.kafka:kafka_2.13:4.4.0" in names
    assert any("slf4j" in n for n in names)  # kafka_2.13 brings no SLF4J binding
    assert [str(j) for j in groups[jars.FLINK_CONNECTOR]] == [
        "org.apache.flink:flink-sql-connector-kafka:5.0.0-2.2"
    ]
    assert "org.apache.spark:spark-sql-kafka-0-10_2.13:4.2.0" in {
        str(j) for j in groups[jars.SPARK_CONNECTOR]
    }


@pytest.mark.parametrize("partitions", [1, 2, 3, 4])
def test_partitions_hold_every_event_once_in_event_order(partitions: int) -> None:
    params = DatasetParams(events=50_000, files=2)
    counts = kload.expected_counts(params, partitions)
    for part in ("warmup", "benchmark"):
        a, b = params.part_range(part)
        layouts = kload.partition_layouts(params, part, partitions)
        assert len(layouts) == partitions
        numbers = [lay.numbers() for lay in layouts]
        assert [len(n) for n in numbers] == counts[part]
        for n in numbers:
            assert np.all(np.diff(n) > 0)  # event order within a partition
            assert n[0] - a < layouts[0].block * partitions  # every partition starts early...
            assert b - 1 - n[-1] < layouts[0].block * partitions  # ...and ends late
        assert np.array_equal(np.sort(np.concatenate(numbers)), np.arange(a, b))


def test_a_partition_holds_the_lines_of_the_csv_file_of_its_stripe(tmp_path: Path) -> None:
    """With as many partitions as the dataset has files, partition p holds exactly the lines
    of file p, byte for byte: the same events, in the same order, in the same text."""
    params = DatasetParams(events=30_000, files=2, format="csv")
    dataset = ensure_dataset(params, out=tmp_path / "ds", show_progress=False)
    formatter = CsvFormatter(params.generator_config)
    for part in ("warmup", "benchmark"):
        files = sorted(dataset.part_dir(part).glob("*.csv"))
        for layout, file in zip(kload.partition_layouts(params, part, 2), files, strict=True):
            assert bytes(formatter.format_numbers(layout.numbers())) == file.read_bytes()


def test_load_ids_and_topics_name_the_events_not_the_file_layout() -> None:
    csv = DatasetParams(events=40_000, files=2, format="csv")
    parquet = DatasetParams(events=40_000, files=4)
    assert kload.load_id(csv, 2) == kload.load_id(parquet, 2)
    assert kload.load_id(csv, 2) != kload.load_id(csv, 3)
    lid = kload.load_id(csv, 2)
    assert kload.topic_name(lid, "warmup") == f"nexmark-{lid}-warmup"


def test_load_manifest_round_trips_and_ignores_unknown_fields() -> None:
    params = DatasetParams(events=40_000, files=2)
    manifest = kload.LoadManifest(
        load_id="x",
        state=kload.COMPLETE,
        dataset_id=params.dataset_id,
        events_id=params.events_id,
        params=params.to_dict(),
        record_format="csv",
        partitions=2,
        topics={"warmup": "a", "benchmark": "b"},
        counts=kload.expected_counts(params, 2),
        started_at="2026-01-01T00:00:00Z",
        seconds=1.5,
    )
    assert manifest.events == 40_000
    value = manifest.to_json()
    assert kload.LoadManifest.from_json(value) == manifest
    extra = value.replace(b'{"counts"', b'{"later_field": 1, "counts"')
    assert kload.LoadManifest.from_json(extra) == manifest


def test_not_enough_disk_for_a_load_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(DiskFullError, match=r"the Kafka load needs about .* free of"):
        kload.check_free_space(tmp_path, 1 << 62)
    kload.check_free_space(tmp_path, 1)


def test_estimated_bytes_bound_the_csv_text() -> None:
    params = DatasetParams(events=100_000, files=2)
    text = CsvFormatter(params.generator_config).format(0, params.events)
    assert len(text) <= kload.estimated_bytes(params) <= len(text) * 1.2 + (64 << 20)


def test_flink_table_is_the_files_table_over_a_topic() -> None:
    """The engine's Kafka table: the files' columns, times and watermark over the connector,
    from the topic's first record, never bounded (both phases keep the source open)."""
    from nexmark.engines.flink import ddl

    table, *views = ddl.kafka_source_statements("t1", "127.0.0.1:9092")
    assert "'connector' = 'kafka'" in table and "'topic' = 't1'" in table
    assert "'scan.startup.mode' = 'earliest-offset'" in table
    assert "scan.bounded.mode" not in table
    assert "'csv.null-literal' = ''" in table
    assert "`date_time` AS CAST(TO_TIMESTAMP_LTZ(`date_time_ms`, 3) AS TIMESTAMP(3))" in table
    assert "WATERMARK FOR `date_time`" in table
    assert len(views) == 3  # person, auction, bid


def test_spark_reads_the_topics_from_their_first_records() -> None:
    from nexmark.engines.source import KafkaSource
    from nexmark.engines.spark.source import kafka_options

    src = KafkaSource("h:1", "t1", "benchmark", 2, (5, 5), "load-1")
    options = kafka_options(src, ["t0", "t1"], 100)
    assert options["subscribe"] == "t0,t1" and options["startingOffsets"] == "earliest"
    assert options["kafka.bootstrap.servers"] == "h:1"
    assert options["maxOffsetsPerTrigger"] == "100"
    assert "maxOffsetsPerTrigger" not in kafka_options(src, ["t1"], None)


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]  # closed when the block ends: nothing listens there


def test_an_unreachable_cluster_is_one_line() -> None:
    port = _closed_port()
    with pytest.raises(KafkaError, match=f"Kafka broker at 127.0.0.1:{port} not reachable"):
        ExternalCluster(f"127.0.0.1:{port}").start(timeout_s=2)


@pytest.fixture(scope="module")
def tiny_dataset(tmp_path_factory: pytest.TempPathFactory):
    params = DatasetParams(events=2_000, files=2)
    return ensure_dataset(params, out=tmp_path_factory.mktemp("kds") / "ds", show_progress=False)


def test_load_into_an_unreachable_cluster_exits_with_one_line(tiny_dataset, nexmark_main) -> None:
    port = _closed_port()
    done = nexmark_main("load", str(tiny_dataset.path), "--kafka-bootstrap", f"127.0.0.1:{port}")
    assert done.returncode == 4
    assert done.stderr.strip().splitlines() == [
        f"error: Kafka broker at 127.0.0.1:{port} not reachable (no TCP answer)"
    ]


def test_broker_jars_missing_without_mvn_is_one_line(tiny_dataset, tmp_path: Path) -> None:
    """An empty jar cache (another HOME) and no mvn on PATH: the broker cannot start."""
    env = dict(os.environ, HOME=str(tmp_path), PATH=str(Path(sys.executable).parent))
    done = nexmark("load", str(tiny_dataset.path), "--kafka-dir", str(tmp_path / "k"), env=env)
    assert done.returncode == 4
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("error: Kafka's kafka-broker jars (kafka_2.13-4.4.0.jar")
    assert "needs Maven (mvn), not found on PATH" in lines[0]

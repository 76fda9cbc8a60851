"""Flink reading a load's Kafka topic (`KafkaSource`, docs/kafka.md): the connector's jar on
the job's class path, the checks before a job reads a topic, and the option that keeps event
time moving after a restore onto another topic.

Why the idle timeout: the benchmark job is restored from the warm-up's checkpoint but reads
the benchmark topic. The restored Kafka source state holds the warm-up topic's splits, and the
connector keeps them (KafkaSourceEnumerator: "TODO: Handle removed partitions"; each reader
restores its own splits from its state): each reader then has a split of the warm-up topic,
at its end, that never yields a record again. Per-split watermarks take the minimum over a
reader's splits, so that split would hold the job's watermark back for ever and no window would
fire in the scored phase (seen: without it, q5's benchmark job never got a watermark;
docs/kafka.md). Marked idle after `IDLE_TIMEOUT` without a record, the finished split leaves
the minimum; a split that reads
yields records all along, and the source operator pauses the idleness clock while its output
is back-pressured (Flink's PausableRelativeClock), so a busy split is not taken for idle.
"""

from __future__ import annotations

from pathlib import Path

from nexmark.engines.source import KafkaSource
from nexmark.errors import DatasetError, UsageError
from nexmark.maven import KAFKA_JARS

# The connector's pin lives with the other Kafka jars (sources/kafka/jars.toml, group
# kafka-flink), read by the ground layer's one reader.
_PINNED = KAFKA_JARS
FLINK_CONNECTOR = "kafka-flink"

IDLE_TIMEOUT_KEY = "table.exec.source.idle-timeout"
IDLE_TIMEOUT = "1 s"


def connector_jars() -> list[Path]:
    """flink-sql-connector-kafka (pinned in sources/kafka/jars.toml), fetched when missing."""
    return _PINNED.ensure([FLINK_CONNECTOR])


def job_options(job: dict[str, str], restored: bool) -> dict[str, str]:
    """What a job reading Kafka adds to its options (recorded with them): the connector's jar
    in `pipeline.jars` (shipped with the job to the cluster, a remote one too), and, for a
    restored job only, the source idle timeout (see the module's doc) unless the settings name
    one. Only there: idleness is judged on the wall clock, so a split starved of CPU for
    longer than the timeout is taken for idle and its events may then come late; a job that
    restores nothing has no finished split to leave out, and reads without it."""
    uris = [p.resolve().as_uri() for p in connector_jars()]
    given = [u for u in job.get("pipeline.jars", "").split(";") if u]
    added = {"pipeline.jars": ";".join(dict.fromkeys([*given, *uris]))}
    if restored and IDLE_TIMEOUT_KEY not in job:
        added[IDLE_TIMEOUT_KEY] = IDLE_TIMEOUT
    return added


def check_topic(source: KafkaSource, readers: int, rate_fed: bool) -> None:
    """One partition per source reader: the connector gives each reader whole partitions, so
    any other count leaves a reader idle or with two partitions (whose event times interleave
    and hold its watermark at the slower one's). One line each."""
    if rate_fed:
        raise UsageError(
            "Flink cannot feed a Kafka topic at a set rate: the rate feed releases a part's "
            "files on a clock (releasing offsets on a clock is not built)"
        )
    if source.partitions != readers:
        raise DatasetError(
            f"the Kafka topic {source.topic} has {source.partitions} partitions but the job "
            f"runs {readers} source readers (parallelism {readers}): each reader needs exactly "
            f"one partition; load the dataset with --partitions {readers}"
        )

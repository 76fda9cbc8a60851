"""How each engine reads a load's topic: Flink SQL's `kafka` table and Spark's `kafka` source
options, for the connector probes (tests/sources/) and, later, the engines' source.

Both read the record value as the dataset's CSV line, so the table is the files' one (the
`csv` format, the same options) with the file connector swapped for Kafka's. Nothing here
imports an engine: the options are plain strings.
"""

from __future__ import annotations

from nexmark.workload.schema import COLUMNS, WATERMARK_DELAY_MS, file_name, file_type, is_time

# Flink's `csv` format as the file source uses it (engines/flink/ddl.py CSV_OPTIONS): fields are
# never quoted; an empty field is null.
FLINK_CSV_OPTIONS = {"csv.null-literal": "", "csv.disable-quote-character": "true"}


def flink_kafka_options(topic: str, bootstrap: str, bounded: bool = True) -> dict[str, str]:
    """The `kafka` connector's options over one topic: from its first record; with `bounded`,
    up to the end offsets it has when the job starts (a part's topic is complete by then)."""
    options = {
        "connector": "kafka",
        "topic": topic,
        "properties.bootstrap.servers": bootstrap,
        # No consumer group offsets are committed or used: the job's checkpoints hold its
        # offsets. A group id is still required by the Kafka consumer.
        "properties.group.id": f"nexmark-{topic}",
        "scan.startup.mode": "earliest-offset",
        "format": "csv",
        **FLINK_CSV_OPTIONS,
    }
    if bounded:
        options["scan.bounded.mode"] = "latest-offset"
    return options


def flink_source_ddl(table: str, topic: str, bootstrap: str, bounded: bool = True) -> str:
    """A Flink SQL table over a load's topic, with the file source's columns (times as epoch
    milliseconds, `date_time` and `a_expires` computed) and watermark."""
    physical = [f"`{file_name(c)}` {file_type(c)}" for c in COLUMNS]
    computed = [
        f"`{c.name}` AS CAST(TO_TIMESTAMP_LTZ(`{file_name(c)}`, 3) AS TIMESTAMP(3))"
        for c in COLUMNS
        if is_time(c)
    ]
    columns = ",\n  ".join([*physical, *computed])
    with_clause = ",\n  ".join(
        f"'{k}' = '{v}'" for k, v in flink_kafka_options(topic, bootstrap, bounded).items()
    )
    delay_s = WATERMARK_DELAY_MS // 1000
    return (
        f"CREATE TEMPORARY TABLE `{table}` (\n  {columns},\n"
        f"  WATERMARK FOR `date_time` AS `date_time` - INTERVAL '{delay_s}' SECOND\n"
        f") WITH (\n  {with_clause}\n)"
    )


def spark_kafka_options(topic: str, bootstrap: str) -> dict[str, str]:
    """Spark's `kafka` source over one topic, from its first record to its end offsets (a
    batch read; a streaming read takes the same options but endingOffsets)."""
    return {
        "kafka.bootstrap.servers": bootstrap,
        "subscribe": topic,
        "startingOffsets": "earliest",
        "endingOffsets": "latest",
    }

"""Flink SQL around a query: the `events` source over a dataset part, the kind views, the sink."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from nexmark.storage.s3 import S3Url
from nexmark.workload.schema import (
    COLUMNS,
    WATERMARK_DELAY_MS,
    Kind,
    file_name,
    file_type,
    is_time,
    view_columns,
)

SOURCE_TABLE = "events"
# Flink names the source operator after the table; its metrics start with this.
SOURCE_METRIC_PREFIX = f"Source__{SOURCE_TABLE}["
# The Kafka connector names its source operator itself ("KafkaSource-" + the table's path):
# its vertex's name holds this, its metrics start with the second.
KAFKA_SOURCE_NAME = f"KafkaSource-default_catalog.default_database.{SOURCE_TABLE}"
KAFKA_METRIC_PREFIX = f"Source__KafkaSource-default_catalog_default_database_{SOURCE_TABLE}."


def is_query(statement: str) -> bool:
    """True for a SELECT (or WITH ... SELECT) the engine wraps into its sink."""
    head = statement.lstrip("( \n\t").split(None, 1)[0].upper()
    return head in ("SELECT", "WITH")


# How often an open source lists its directory. Its files are linked in once every task runs
# (workload/feed.py), and no event is read before the next listing: that wait is inside Time (from
# every task running), half an interval on average. Each listing costs the JobManager about
# 1 ms of CPU (measured: an idle open job used 0.035 more cores listing every 20 ms than every
# 100 ms), all through the scored phase: 100 ms costs ~0.3% of a core and waits 50 ms.
MONITOR_INTERVAL = "100 ms"


# The CSV format's options. Fields are never quoted (docs/dataset-format.md), so the parser
# need not look for quotes; an empty field is null.
CSV_OPTIONS = {"csv.null-literal": "", "csv.disable-quote-character": "true"}
# The file formats a dataset part can be in, by file extension: Flink's `csv` format ships with
# PyFlink; `parquet` and `avro` need the jars of `jars.py` on the classpath.
FORMATS = ("csv", "parquet", "avro")


# Times are stored as epoch milliseconds; TO_TIMESTAMP_LTZ reads them as an instant and the cast
# to TIMESTAMP(3) gives its UTC wall time, since every job runs with this session time zone
# (options.job_options sets it).
TIME_ZONE = "UTC"


def time_expression(column: str) -> str:
    """The TIMESTAMP(3) value of an epoch-millisecond column (in the UTC session time zone)."""
    return f"CAST(TO_TIMESTAMP_LTZ(`{column}`, 3) AS TIMESTAMP(3))"


def source_ddl(
    part_dir: Path | S3Url,
    keep_open: bool,
    monitor_interval: str = MONITOR_INTERVAL,
    text_times: bool = False,
    csv_options: dict[str, str] | None = None,
    format: str = "csv",
) -> str:
    """The `events` table over every file of a dataset part.

    The files store times as epoch milliseconds (`date_time_ms`, `a_expires_ms`); the table
    declares `date_time` and `a_expires` as TIMESTAMP(3) columns computed from them, so the
    views and queries see the same columns as before, and the watermark is on `date_time`.

    Args:
        part_dir: The part directory (warmup/ or benchmark/).
        keep_open: Keep watching the directory after the last file, so the source never ends
            (no end of input, no final watermark) - what the warm-up phase needs.
        monitor_interval: How often an open source looks for new files.
        text_times: Files of the older format, with times as text (`2024-01-01 00:00:00.000`)
            parsed by the CSV format: only for benchmarks/bench_data_path.py's comparison.
        csv_options: The CSV format's options (default `CSV_OPTIONS`).
        format: The files' format, one of `FORMATS`. Parquet and Avro files hold the same
            physical columns, by the same names (`date_time_ms`, ...; Flink's parquet format
            finds a column by its name), so the table is the same but for its format option.
    """
    if format not in FORMATS:
        raise ValueError(f"unknown file format {format!r} (known: {', '.join(FORMATS)})")
    if text_times:
        physical = [f"`{c.name}` {c.type}" for c in COLUMNS]
        computed = []
    else:
        physical = [f"`{file_name(c)}` {file_type(c)}" for c in COLUMNS]
        computed = [f"`{c.name}` AS {time_expression(file_name(c))}" for c in COLUMNS if is_time(c)]
    columns = ",\n  ".join([*physical, *computed, "`p_time` AS PROCTIME()"])
    delay_s = WATERMARK_DELAY_MS // 1000
    options = {
        "connector": "filesystem",
        # (a prefix on an object store as its s3:// URL, read through Flink's S3 plugin)
        "path": str(part_dir) if isinstance(part_dir, S3Url) else part_dir.resolve().as_uri(),
        "format": format,
    }
    if isinstance(part_dir, S3Url):
        # Only the data files: a store may list an object still being written under another
        # name (s3proxy does: `<key>-<uuid>`), which the source would take for a file.
        options["source.path.regex-pattern"] = rf".*\.{format}"
    if format == "csv":
        options.update(CSV_OPTIONS if csv_options is None else csv_options)
    if keep_open:
        options["source.monitor-interval"] = monitor_interval
    with_clause = ",\n  ".join(f"'{k}' = '{v}'" for k, v in options.items())
    return (
        f"CREATE TEMPORARY TABLE `{SOURCE_TABLE}` (\n  {columns},\n"
        f"  WATERMARK FOR `date_time` AS `date_time` - INTERVAL '{delay_s}' SECOND\n"
        f") WITH (\n  {with_clause}\n)"
    )


def source_only_query() -> str:
    """The calibration job's query, for a discarding sink: the least any query does per event.

    Every line is still read, tokenized and turned into Jackson's tree (the CSV format does
    that for all 22 fields whatever is selected), its kind and event time converted, and the
    watermark generated; the planner pushes the projection into the source, so no other field
    is converted. Converting the columns a query needs counts as that query's work. No query
    can run faster than this job: it is the data path's ceiling.
    """
    return f"SELECT `event_type`, `date_time` FROM `{SOURCE_TABLE}`"


def view_ddl(kind: Kind) -> str:
    """View `person`, `auction` or `bid`: that kind's rows with its own column names + p_time."""
    columns = ", ".join(f"`{c.name}` AS `{c.view_name}`" for c in view_columns(kind))
    return (
        f"CREATE TEMPORARY VIEW `{kind.name.lower()}` AS SELECT {columns}, `p_time` "
        f"FROM `{SOURCE_TABLE}` WHERE `event_type` = {int(kind)}"
    )


def source_statements(part_dir: Path | S3Url, keep_open: bool, **source: Any) -> list[str]:
    """Every statement that defines the query's inputs (`source`: see `source_ddl`)."""
    return [source_ddl(part_dir, keep_open, **source)] + [view_ddl(kind) for kind in Kind]


def kafka_source_statements(topic: str, bootstrap: str) -> list[str]:
    """The query's inputs over a load's topic (--source kafka): the `events` table is the files'
    one (the record value is the CSV line: the same columns, times, `p_time` and watermark) over
    the Kafka connector, never bounded (both phases keep the source open, as the file source
    does), and the same views. No consumer group offsets are used: the job's checkpoints hold
    its offsets (the group id is what the consumer requires; the reader commits to it on each
    checkpoint, which is what `FlinkJob.source_offsets` reads back)."""
    table = source_ddl(Path("."), keep_open=False)
    options = {
        "connector": "kafka",
        "topic": topic,
        "properties.bootstrap.servers": bootstrap,
        "properties.group.id": f"nexmark-{topic}",
        "scan.startup.mode": "earliest-offset",
        "format": "csv",
        **CSV_OPTIONS,
    }
    with_clause = ",\n  ".join(f"'{k}' = '{v}'" for k, v in options.items())
    table = table[: table.index(") WITH (")] + f") WITH (\n  {with_clause}\n)"
    return [table] + [view_ddl(kind) for kind in Kind]


def sink_descriptor(collect_dir: Path | None, table: Any = None) -> Any:
    """The sink a query's final SELECT is written to.

    Args:
        collect_dir: None for a discarding (blackhole) sink; else the directory of a
            read-back sink. That one writes the full changelog as Debezium JSON through the
            filesystem connector, which commits files only when a checkpoint completes, so
            the committed rows are exactly-once across cancel and restore.
        table: The query's result; its schema becomes the sink's (needed to register the sink
            under a name, see `SINK_TABLE`). None: the planner derives it from the insert.
    """
    from pyflink.table import Schema, TableDescriptor

    if collect_dir is None:
        builder = TableDescriptor.for_connector("blackhole")
    else:
        builder = (
            TableDescriptor.for_connector("filesystem")
            .option("path", collect_dir.resolve().as_uri())
            .option("auto-compaction", "true")
            .format("debezium-json")
        )
    if table is not None:
        row_type = table.get_schema().to_row_data_type()
        builder = builder.schema(Schema.new_builder().from_row_data_type(row_type).build())
    return builder.build()


# The latency stamps (JobSpec.latency): a second sink fed a sample of the query's rows, each
# with one time column and the wall time it reached the sink. Registered under fixed names,
# as `SINK_TABLE`, so the warm-up and the restored job have the same operators.
RESULT_VIEW = "nexmark_result"
STAMPS_TABLE = "nexmark_latency"


def stamps_query(column: str, sample: float, writes: bool = True) -> str:
    """The sampled rows of `RESULT_VIEW` as (t, wall): the column's time and the wall time at
    the sink, cast in the UTC session time zone (`TIME_ZONE`).

    The sample is deterministic (the same rows on every run): the rows whose millisecond of
    the second, plus 7 per second of the minute, falls in one residue class in
    `round(1 / sample)`. The second's term moves the sampled millisecond from second to
    second, so that neither a dataset whose events are a whole number of milliseconds apart
    nor a feed's time slices keep sampling the same position (at 100,000 events per second
    of event time, 1 in 100 is 100 rows every 10,000 events). The wall time is
    CURRENT_ROW_TIMESTAMP(), evaluated for the sampled rows only: CURRENT_TIMESTAMP is
    computed once per row before the filter in the code Flink generates, and RAND() per row
    was dearer still (benchmarks/bench_latency.py, docs/protocol.md "Cost, measured").

    `writes=False` gives the same query (the same operators, so a job restored from its
    snapshot maps them) selecting no row: the residue -1, which MOD of these non-negative
    terms never is. A warm-up job stamps nothing (`stamps_written`)."""
    every = 1 if sample >= 1.0 else max(1, min(1000, round(1 / sample)))
    ms = f"EXTRACT(MILLISECOND FROM `{column}`) + 7 * EXTRACT(SECOND FROM `{column}`)"
    return (
        f"SELECT CAST(`{column}` AS TIMESTAMP(3)) AS t, "
        f"CAST(CURRENT_ROW_TIMESTAMP() AS TIMESTAMP(3)) AS wall FROM `{RESULT_VIEW}` "
        f"WHERE MOD({ms}, {every}) = {0 if writes else -1}"
    )


def stamps_written(restored: bool, rate_fed: bool) -> bool:
    """Whether a job's stamps sink gets rows: only a restored or rate-fed job's (a phase whose
    latency is read), never a warm-up's.

    Flink's file sink with auto-compaction deletes the `.uncompacted-*` files a checkpoint
    names once a later checkpoint of the same job completes (CompactOperator's expired files,
    cleared on `notifyCheckpointComplete`), and the plain file sink commits the pending
    files it names: its own restore is only ever from its latest checkpoint. The benchmark
    phase restores the warm-up's phase checkpoint, and a periodic checkpoint may complete
    between that one and the cancel; no copy of the folder taken after the checkpoint can be
    sure to come first. A warm-up whose stamps sink never had a row names no file in any
    checkpoint, so nothing a later checkpoint does can fail the restore; its stamps were never
    read (they precede every release)."""
    return restored or rate_fed


def stamps_descriptor(stamps_dir: Path) -> Any:
    """Where the stamps go: Debezium JSON files (the format accepts an updating query's
    changes too), committed at each checkpoint like the COLLECT sink's (auto-compaction is
    what rolls a row format's files on every checkpoint; without it they stay in progress)."""
    from pyflink.table import DataTypes, Schema, TableDescriptor

    schema = (
        Schema.new_builder()
        .column("t", DataTypes.TIMESTAMP(3))
        .column("wall", DataTypes.TIMESTAMP(3))
        .build()
    )
    return (
        TableDescriptor.for_connector("filesystem")
        .schema(schema)
        .option("path", stamps_dir.resolve().as_uri())
        .option("auto-compaction", "true")
        .format("debezium-json")
        .build()
    )


# Jobs write into a sink registered under this fixed name. An inline (anonymous) sink table
# gets a name from a JVM-wide counter, which changes the identity of the file sink's stateful
# operators between two submissions, and the restored job then cannot map their state.
SINK_TABLE = "nexmark_sink"

"""Flink SQL around a query: the `events` source over a dataset part, the kind views, the sink."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from nexmark.workload.schema import COLUMNS, WATERMARK_DELAY_MS, Kind, view_columns

SOURCE_TABLE = "events"
# Flink names the source operator after the table; its metrics start with this.
SOURCE_METRIC_PREFIX = f"Source__{SOURCE_TABLE}["


def is_query(statement: str) -> bool:
    """True for a SELECT (or WITH ... SELECT) the engine wraps into its sink."""
    head = statement.lstrip("( \n\t").split(None, 1)[0].upper()
    return head in ("SELECT", "WITH")


# How often an open source lists its directory. A restored job's enumerator makes its first
# listing one interval after it starts, and reads nothing before that: with 1 s, Time (from
# every task running) held 1-2 s in which no event could be read. A listing of a part's few
# files costs microseconds, so list often.
MONITOR_INTERVAL = "100 ms"


def source_ddl(part_dir: Path, keep_open: bool, monitor_interval: str = MONITOR_INTERVAL) -> str:
    """The `events` table over every CSV file of a dataset part.

    Args:
        part_dir: The part directory (warmup/ or benchmark/).
        keep_open: Keep watching the directory after the last file, so the source never ends
            (no end of input, no final watermark) - what the warm-up phase needs.
        monitor_interval: How often an open source looks for new files.
    """
    columns = ",\n  ".join(f"`{c.name}` {c.type}" for c in COLUMNS)
    delay_s = WATERMARK_DELAY_MS // 1000
    monitor = f",\n  'source.monitor-interval' = '{monitor_interval}'" if keep_open else ""
    return (
        f"CREATE TEMPORARY TABLE `{SOURCE_TABLE}` (\n  {columns},\n"
        f"  `p_time` AS PROCTIME(),\n"
        f"  WATERMARK FOR `date_time` AS `date_time` - INTERVAL '{delay_s}' SECOND\n"
        f") WITH (\n  'connector' = 'filesystem',\n  'path' = '{part_dir.resolve().as_uri()}',\n"
        f"  'format' = 'csv',\n  'csv.null-literal' = ''{monitor}\n)"
    )


def view_ddl(kind: Kind) -> str:
    """View `person`, `auction` or `bid`: that kind's rows with its own column names + p_time."""
    columns = ", ".join(f"`{c.name}` AS `{c.view_name}`" for c in view_columns(kind))
    return (
        f"CREATE TEMPORARY VIEW `{kind.name.lower()}` AS SELECT {columns}, `p_time` "
        f"FROM `{SOURCE_TABLE}` WHERE `event_type` = {int(kind)}"
    )


def source_statements(part_dir: Path, keep_open: bool) -> list[str]:
    """Every statement that defines the query's inputs."""
    return [source_ddl(part_dir, keep_open)] + [view_ddl(kind) for kind in Kind]


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


# Jobs write into a sink registered under this fixed name. An inline (anonymous) sink table
# gets a name from a JVM-wide counter, which changes the identity of the file sink's stateful
# operators between two submissions, and the restored job then cannot map their state.
SINK_TABLE = "nexmark_sink"

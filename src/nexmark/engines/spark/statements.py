"""A query's Spark SQL and how its result is written: Spark's own `sql/qN.sql` where its
dialect differs from the shared SQL (workload/sql/), else the shared one, the write mode
from `sql/queries.toml` (writes.py) and the stream writer of its sink; the one-line reasons
Spark's parse errors give."""

from __future__ import annotations

import contextlib
import logging
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from nexmark.engines.base import SOURCE_ONLY, LatencyStamps
from nexmark.engines.spark import source, writes
from nexmark.engines.spark.collect import batch_writer, stamp_writer
from nexmark.engines.spark.job import _spark_message
from nexmark.errors import UnsupportedQueryError
from nexmark.storage import files
from nexmark.storage.files import Location
from nexmark.workload import queries
from nexmark.workload.dataset import DEFAULT_FORMAT

# Spark's own SQL: a qN.sql only where its dialect differs from the shared SQL
# (workload/sql/); how it writes each query is data beside it (writes.py, sql/queries.toml).
SQL_DIR = resources.files(__package__) / "sql"


def quiet_query_context_loggers() -> None:
    """PySpark logs every analysis error it raises as a JSON stack dump to stderr; the engine
    reports Spark's reason as one line itself (an unsupported query, a failed job)."""
    from pyspark.logger import PySparkLogger

    for name in ("SQLQueryContextLogger", "DataFrameQueryContextLogger"):
        PySparkLogger.getLogger(name).setLevel(logging.CRITICAL)


def parse_error_context(text: str) -> str:
    """The SQL line a Spark parse error points at (its "== SQL ==" part, the line above the
    `---^^^` marker), as ", at `...`"; empty for any other error. The parser's message names
    only the token ("Syntax error at or near '('"): the line says which construct it refused
    (the CEP queries: `MATCH_RECOGNIZE (`, which Spark SQL does not have and reads as an alias).
    """
    if "PARSE_SYNTAX_ERROR" not in text or "== SQL ==" not in text:
        return ""
    lines = text.split("== SQL ==", 1)[1].splitlines()
    for above, line in zip(lines, lines[1:], strict=False):
        if line.startswith("-") and line.rstrip().endswith("^") and above.strip():
            return f", at `{above.strip()}`"
    return ""


def has_spark_sql(name: str) -> bool:
    """Whether Spark has SQL for the query (its own file or the shared one) and knows how to
    write it."""
    try:
        queries.sql_file(name, SQL_DIR)
    except Exception:  # noqa: BLE001
        return False
    return name in writes.table()


@dataclass(frozen=True)
class SparkQuery:
    """A query's Spark SQL and how its result is written."""

    statements: list[str]
    mode: str  # "append" or "update"
    keys: tuple[str, ...]  # update mode: the result's key columns
    output_dir: Path | None = None  # a query writing files itself (q10): where
    partition: tuple[str, ...] = ()  # and its partition columns


# The calibration job (protocol/suite/calibrate.py): every event read and its kind and event time
# parsed (the CSV reader parses only the columns selected), nothing else; discarded.
SOURCE_ONLY_QUERY = SparkQuery(
    [f"SELECT `event_type`, `date_time` FROM `{source.SOURCE_VIEW}`"], "append", ()
)


def spark_query(name: str, work_dir: Path) -> SparkQuery:
    """The query's statements for Spark (its own `sql/qN.sql`, else the shared one) and how
    `sql/queries.toml` says to write them.

    Raises:
        UnsupportedQueryError: There is no Spark SQL for the query.
    """
    query = queries.get(name)
    if not has_spark_sql(query.name):
        raise UnsupportedQueryError(f"no Spark SQL for {query.name}")
    write = writes.of(query.name)
    placeholders = queries.prepare_query_dirs(query, work_dir)
    output_dir = Path(placeholders["output_dir"]) if write.files else None
    statements = queries.sql(query, SQL_DIR, **placeholders)
    return SparkQuery(statements, write.mode, write.keys, output_dir, write.partition)


def query_output(df: Any, name: str) -> Any:
    """The query's result as a sink other than the stamps takes it: without the column it
    carries for the latency stamps alone (`Query.stamp_column`)."""
    if name == SOURCE_ONLY:
        return df
    keep = queries.get(name).output_columns(list(df.columns))
    return df if keep is None else df.select(*keep)


def stream_writer(
    df: Any,
    sq: SparkQuery,
    checkpoint: Location,
    collect_dir: Path | None,
    stamps: tuple[LatencyStamps, Path] | None = None,
) -> Any:
    """The query's stream writer, checkpointed at `checkpoint`: its own file sink (q10), the
    latency stamps' sink, the COLLECT sink at `collect_dir`, or else the noop sink."""
    writer = df.writeStream.outputMode(sq.mode).option(
        "checkpointLocation", files.as_engine_path(checkpoint)
    )
    if sq.output_dir is not None:  # the query's own file sink (q10), exactly once
        return (
            writer.format("csv")
            .option("path", str(sq.output_dir.resolve()))
            .option("timestampFormat", "yyyy-MM-dd HH:mm:ss.SSS")
            .partitionBy(*sq.partition)
        )
    if collect_dir is None and stamps is not None:
        latency, stamps_dir = stamps
        return writer.foreachBatch(stamp_writer(latency.column, latency.sample, stamps_dir))
    if collect_dir is None:
        return writer.format("noop")
    return writer.foreachBatch(batch_writer(collect_dir))


def dataframe(
    spark: Any, sq: SparkQuery, watch_dir: Location, max_files: int, file_format: str
) -> Any:
    """The query's result over the files arriving in `watch_dir` (as a stream)."""
    source.register_inputs(spark, watch_dir, max_files, file_format)
    return _statements(spark, sq)


def kafka_dataframe(spark: Any, sq: SparkQuery, kafka_opts: dict[str, str]) -> Any:
    """The query's result over a Kafka subscription (`kafka_opts`)."""
    source.register_events(spark, source.read_kafka_events(spark, kafka_opts))
    return _statements(spark, sq)


def _statements(spark: Any, sq: SparkQuery) -> Any:
    for statement in sq.statements[:-1]:
        spark.sql(statement)
    return spark.sql(sq.statements[-1])


def explain(spark: Any, name: str, check_alive: Callable[[], None]) -> str | None:
    """Why Spark cannot run the query (None: it can). The query is started on an empty
    directory: Spark's analyzer and its streaming checks (UnsupportedOperationChecker) run at
    start(); their error is the reason. `check_alive` tells a dead JVM from a refusal."""
    with tempfile.TemporaryDirectory(prefix="nexmark-spark-explain-") as tmp:
        work = Path(tmp)
        try:
            sq = spark_query(name, work)
        except UnsupportedQueryError as exc:
            return str(exc)
        watch = work / "source"
        watch.mkdir()
        try:
            df = dataframe(spark, sq, watch, 1, DEFAULT_FORMAT)
            writer = stream_writer(df, sq, work / "checkpoint", None)
            query = writer.trigger(availableNow=True).start()
        except Exception as exc:  # noqa: BLE001 - Spark's reason is the answer
            check_alive()
            return _spark_message(exc) + parse_error_context(str(exc))
        with contextlib.suppress(Exception):
            query.stop()
    return None

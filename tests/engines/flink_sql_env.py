"""A PyFlink table environment set up like the engine's, for the query tests.

The inputs come from the engine's own DDL module (`nexmark.engines.flink.ddl`), and the planner
options (mini-batch, split distinct aggregation, ...) from the shipped defaults, so the tests
plan exactly what a benchmark run plans. One JVM serves a whole test module.
"""

from __future__ import annotations

from pathlib import Path

from nexmark.engines.flink import ddl
from nexmark.engines.flink.gateway import table_environment
from nexmark.engines.py4j_errors import java_message
from nexmark.settings import Settings
from nexmark.workload.dataset import part_format


def planner_options(**extra: str) -> dict[str, str]:
    """The shipped `table.*` options (the ones that shape a plan), plus `extra`."""
    shipped = Settings.defaults().flink_options()
    options = {k: v for k, v in shipped.items() if k.startswith("table.")}
    options.update(extra)
    return options


def table_env(part_dir: Path, keep_open: bool, options: dict[str, str]):
    """A streaming TableEnvironment with `events` over `part_dir` and the three kind views."""
    t_env = table_environment(options)
    file_format = part_format(part_dir, ddl.FORMATS)
    for statement in ddl.source_statements(part_dir, keep_open, format=file_format):
        t_env.execute_sql(statement)
    return t_env


def column_types(table) -> list[str]:
    """The table's column types as Flink prints them, without nullability or time markers."""
    columns = table._j_table.getResolvedSchema().getColumns()
    return [
        columns.get(i).getDataType().getLogicalType().copy(True).asSummaryString().split(" *")[0]
        for i in range(columns.size())
    ]


def flink_message(exc: BaseException) -> str:
    """The first line of a Java exception's message, without the Java class name (read from the
    throwable: PySpark's py4j hook, once installed in this process, leaves Flink's errors raw)."""
    first = java_message(exc).split(" ... ")[0]
    head, sep, rest = first.partition(": ")
    return rest if sep and "." in head and " " not in head else first

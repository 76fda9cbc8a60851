"""A Flink job's plan: a table environment with the job's source and the query's statements,
the sinks its result goes to (the sampled latency stamps' beside the query's own), and the
planner's reason for a query it cannot run."""

from __future__ import annotations

from importlib import resources
from pathlib import Path
from typing import Any

from nexmark.engines.flink.ddl import (
    RESULT_VIEW,
    SINK_TABLE,
    STAMPS_TABLE,
    is_query,
    kafka_source_statements,
    sink_descriptor,
    source_only_query,
    source_statements,
    stamps_descriptor,
    stamps_query,
    stamps_written,
)
from nexmark.engines.flink.gateway import JVM_DEATH_GRACE_S, Gateway, table_environment
from nexmark.engines.py4j_errors import java_message
from nexmark.engines.source import KafkaSource, local_folder
from nexmark.engines.spec import JobSpec
from nexmark.errors import EngineError
from nexmark.workload import queries

# Flink's own SQL: a qN.sql only where its dialect differs from the shared SQL (workload/sql/).
SQL_DIR = resources.files(__package__) / "sql"


def plan(
    gateway: Gateway,
    spec: JobSpec,
    options: dict[str, str],
    source_options: dict[str, Any],
    source_dir: Any = None,
    file_format: str = "csv",
) -> tuple[Any, str]:
    """A table environment with the inputs and the query's setup statements; the last one.
    The source reads `source_dir` (default: the spec's part), files of `file_format`, with
    the extra `source_options` of ddl.source_statements."""
    if spec.source_only:
        statements = [source_only_query()]
    else:
        placeholders = queries.prepare_query_dirs(spec.query, spec.work_dir)
        statements = queries.sql(spec.query, SQL_DIR, **placeholders)
    # Every call below goes to the JVM, which can die under any of them (the table
    # environment's creation included): each failure is then reported as its death.
    try:
        t_env = table_environment(options)
        if isinstance(spec.source, KafkaSource):
            sources = kafka_source_statements(spec.source.topic, spec.source.bootstrap)
        else:
            sources = source_statements(
                source_dir or local_folder(spec.source, "Flink"),
                keeps_source_open(spec),
                **{"format": file_format, **source_options},
            )
        for statement in sources:
            t_env.execute_sql(statement)
        for statement in statements[:-1]:
            t_env.execute_sql(statement)
    except Exception as exc:  # noqa: BLE001
        gateway.check_alive(grace_s=JVM_DEATH_GRACE_S)
        raise EngineError(f"Flink refused {spec.query}: {java_message(exc)}") from None
    return t_env, statements[-1]


def planner_reason(gateway: Gateway, t_env: Any, last: str) -> str | None:
    """Ask the planner for the whole job (sink included); its error is the reason."""
    try:
        statement_set = t_env.create_statement_set()
        if is_query(last):
            statement_set.add_insert(sink_descriptor(None), t_env.sql_query(last))
        else:
            statement_set.add_insert_sql(last)
        statement_set.explain()
    except Exception as exc:  # noqa: BLE001 - the planner's reason is the answer
        gateway.check_alive()
        return java_message(exc)
    return None


def insert_with_stamps(t_env: Any, table: Any, output: Any, spec: JobSpec, stamps_dir: Path) -> Any:
    """One job writing the query's rows to its sink, as without stamps, and a sample of them,
    stamped, to the stamps sink (none in a warm-up: `stamps_written`): the planner reuses the
    query's plan for both inserts, so it runs once and only the sampled rows take the extra
    branch. `output` is `table` as the sink takes it (`sink_output`); the stamps read `table`,
    stamp column included."""
    assert spec.latency is not None
    t_env.create_temporary_view(RESULT_VIEW, table)
    t_env.create_temporary_table(STAMPS_TABLE, stamps_descriptor(stamps_dir))
    statements = t_env.create_statement_set()
    statements.add_insert(SINK_TABLE, output)
    writes = stamps_written(spec.restore is not None, spec.rate_fed)
    stamps = stamps_query(spec.latency.column, spec.latency.sample, writes)
    statements.add_insert(STAMPS_TABLE, t_env.sql_query(stamps))
    return statements.execute()


def sink_output(table: Any, spec: JobSpec) -> Any:
    return table if spec.source_only else output_table(table, queries.get(spec.query))


def output_table(table: Any, query: queries.Query) -> Any:
    """The query's result as its sink takes it: without the column it carries for the latency
    stamps alone (`Query.stamp_column`), which only the stamps read."""
    keep = query.output_columns(list(table.get_schema().get_field_names()))
    if keep is None:
        return table
    from pyflink.table.expressions import col

    return table.select(*[col(n) for n in keep])


def keeps_source_open(spec: JobSpec) -> bool:
    """Whether the job's source keeps watching its directory (never ends by itself). A
    restored bounded file source would read only the files in its state: keep it open."""
    return spec.keep_source_open or spec.restore is not None

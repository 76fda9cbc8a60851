"""`nexmark queries`: the Nexmark queries, what each computes and the state it keeps."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.table import Table

from nexmark.console import out
from nexmark.engines import registry
from nexmark.workload.queries import Query, select, sql_text


def queries_table(selected: list[Query]) -> Table:
    """A Rich table: name, what the query computes, its output columns, its state kind, and
    flags worth knowing."""
    table = Table(title="Nexmark queries", title_justify="left")
    table.add_column("query", style="bold", no_wrap=True)
    table.add_column("computes", ratio=3)
    table.add_column("output columns", ratio=1)
    table.add_column("state", ratio=1)
    table.add_column("notes", ratio=1)
    for q in selected:
        notes = []
        if not q.deterministic:
            notes.append("checked by totals only")
        if q.own_sink:
            notes.append("writes files")
        table.add_row(
            q.name,
            f"[bold]{q.title}[/]: {q.description}",
            ", ".join(q.columns),
            q.state,
            "; ".join(notes),
        )
    return table


def queries_command(
    selection: Annotated[
        str,
        typer.Argument(
            help="'all' (q0..q23), 'cep' (cep0..cep3) or names separated by commas, "
            "e.g. q0,q5,cep1."
        ),
    ] = "all",
    show_sql: Annotated[
        bool, typer.Option("--sql", help="Print each selected query's SQL instead of the table.")
    ] = False,
    engine: Annotated[
        str, typer.Option(help="The engine whose SQL --sql prints (its own or the shared one).")
    ] = "flink",
) -> None:
    """List the queries: what each computes and the kind of state it keeps."""
    selected = select(selection)
    if not show_sql:
        out.print(queries_table(selected))
        return
    sql_dir = registry.engine_class(engine).sql_dir()
    for q in selected:
        out.rule(f"{q.name}: {q.title}")
        # Plain and unwrapped, so that it can be copied into a SQL client.
        out.print(sql_text(q, sql_dir).rstrip(), markup=False, highlight=False, soft_wrap=True)

"""`nexmark engines`: the installed engines and what each declares it can do (its
`Capabilities`), read from the engine itself, so a new engine shows up without a line here."""

from __future__ import annotations

from rich.table import Table

from nexmark.console import out
from nexmark.engines import registry
from nexmark.engines.base import Engine
from nexmark.errors import UsageError
from nexmark.settings import Settings


def engines_table(found: list[tuple[str, Engine | str]]) -> Table:
    """One row per engine: an instance's capabilities, or why it cannot be loaded."""
    table = Table(title="Engines", title_justify="left")
    table.add_column("engine", style="bold", no_wrap=True)
    table.add_column("targets")
    table.add_column("a job is ready when", ratio=2)
    table.add_column("failover")
    table.add_column("state TTL")
    table.add_column("formats")
    table.add_column("queries", justify="right")
    for name, engine in found:
        if isinstance(engine, str):  # not installed: the one-line reason, with the command
            table.add_row(name, f"[red]{engine}[/]", "", "", "", "", "")
            continue
        caps = engine.capabilities()
        table.add_row(
            name,
            ", ".join(caps.targets),
            caps.ready,
            caps.failover.value,
            caps.state_ttl.value,
            ", ".join(caps.formats),
            str(len(caps.queries)),
        )
    return table


def engines_command() -> None:
    """List the installed engines: where each runs, when its jobs count as ready, what it can
    do about a failed worker, what a state TTL means on it, the formats it reads."""
    found: list[tuple[str, Engine | str]] = []
    for name in registry.available():
        try:  # an instance, never started: capabilities are known without a JVM
            found.append((name, registry.load(name, settings=Settings.defaults())))
        except UsageError as exc:
            found.append((name, str(exc)))
    out.print(engines_table(found))

"""`nexmark engines`: every installed engine's declared capabilities, read from the engine."""

from __future__ import annotations

from rich.console import Console

from cli_process import nexmark
from fake_engine import FakeEngine, FakeWorld
from nexmark.cli.engines import engines_table
from nexmark.engines.base import FailoverSupport


def _cells(text: str, engine: str) -> list[str]:
    line = next(line for line in text.splitlines() if line.startswith(f"│ {engine} "))
    return [cell.strip() for cell in line.split("│")[1:-1]]


def test_the_listing_shows_what_each_engine_declares():
    engine = FakeEngine(FakeWorld(failover=FailoverSupport.OBSERVE))
    missing = "engine 'other' is not installed (no module other): run `pip install other`"
    console = Console(width=240, record=True)
    console.print(engines_table([("fake", engine), ("other", missing)]))
    text = console.export_text()
    caps = engine.capabilities()
    assert _cells(text, "fake") == [
        "fake", "in-process", caps.ready, "observe", "none", "parquet, csv", str(len(caps.queries)),
    ]  # fmt: skip
    assert _cells(text, "other")[1] == missing


def test_the_installed_engines_are_listed_without_starting_one():
    done = nexmark("engines", COLUMNS="240")
    assert done.returncode == 0, done.stderr
    # The package's entry points; Flink expires state on processing time, Spark cannot.
    assert _cells(done.stdout, "flink")[4] == "processing time"
    assert _cells(done.stdout, "spark")[4] == "none"

"""Two consoles (results to stdout, messages and progress to stderr) and a progress factory."""

from __future__ import annotations

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    Task,
    TaskProgressColumn,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.text import Text

out = Console()
err = Console(stderr=True)
# Rich assumes 80 columns when not on a terminal; result tables need more to stay readable.
for _console in (out, err):
    if not _console.is_terminal:
        _console.width = 120


class RateColumn(ProgressColumn):
    """Events per second, from Rich's own speed estimate."""

    def render(self, task: Task) -> Text:
        speed = task.finished_speed or task.speed
        text = "-" if speed is None else f"{human_count(speed)} ev/s"
        return Text(text, style="progress.data.speed")


def human_count(n: float) -> str:
    """1234567 -> '1.23M'."""
    for unit, scale in (("G", 1e9), ("M", 1e6), ("K", 1e3)):
        if abs(n) >= scale:
            return f"{n / scale:.3g}{unit}"
    return f"{n:.0f}"


def human_bytes(n: float) -> str:
    for unit, scale in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if abs(n) >= scale:
            return f"{n / scale:.1f} {unit}"
    return f"{n:.0f} B"


def progress(transient: bool = False) -> Progress:
    """A progress display for event counts: bar, done/total, rate, elapsed and ETA.

    Disabled when stderr is not a terminal, so logs and CI output stay clean.
    """
    return Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TaskProgressColumn(),
        RateColumn(),
        TimeElapsedColumn(),
        TextColumn("ETA"),
        TimeRemainingColumn(),
        console=err,
        transient=transient,
        disable=not err.is_terminal,
    )

"""Progress without a terminal (`console.LogProgress`): the plain lines a log file gets, read
back from a console that is not a terminal, on a fake clock."""

from __future__ import annotations

import io
import re

import pytest
from rich.console import Console

from nexmark import console as nx_console
from nexmark.console import LogProgress, format_eta, progress, progress_interval
from nexmark.errors import UsageError


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def log_progress(interval_s: float = 10.0):
    buf, clock = io.StringIO(), Clock()
    con = Console(file=buf, width=200)
    assert not con.is_terminal  # what a log file, a pipe or CI is
    return LogProgress(con, interval_s=interval_s, clock=clock, heartbeat=False), clock, buf


def lines(buf: io.StringIO) -> list[str]:
    return buf.getvalue().splitlines()


def test_a_line_per_interval_with_done_total_rate_cores_and_eta_then_a_closing_line():
    bar, clock, buf = log_progress(interval_s=10)
    cpu = {"s": 50.0}
    task = bar.add_task("generating", total=1000, cpu=lambda: cpu["s"])
    for _ in range(4):  # 4 s: 25 events and 0.5 CPU seconds a second; no line yet
        clock.now += 1
        cpu["s"] += 0.5
        bar.advance(task, 25)
    assert lines(buf) == []
    for _ in range(6):  # at 10 s: the first line
        clock.now += 1
        cpu["s"] += 0.5
        bar.advance(task, 25)
    assert lines(buf) == ["generating: 250 / 1,000 events (25%), 25 ev/s, 0.50 cores, ETA 30 s"]
    for _ in range(10):  # the next 10 s twice as fast, on two cores: rate and ETA follow
        clock.now += 1
        cpu["s"] += 2.0
        bar.advance(task, 50)
    assert lines(buf)[-1] == "generating: 750 / 1,000 events (75%), 50 ev/s, 2.00 cores, ETA 5 s"
    clock.now += 5
    cpu["s"] += 5.0
    bar.advance(task, 250)  # the total: the closing line, over the whole task
    assert lines(buf)[-1] == "generating done: 1,000 events in 25.0 s, 40 ev/s, 1.20 cores"
    assert len(lines(buf)) == 3
    bar.advance(task, 10)  # nothing after the closing line
    bar.stop()
    assert len(lines(buf)) == 3


def test_bytes_cpu_pushed_and_a_task_stopped_before_its_total():
    bar, clock, buf = log_progress(interval_s=5)
    task = bar.add_task("verifying", total=100 * 2**20, unit="bytes")
    clock.now += 5
    bar.update(task, completed=20 * 2**20, cpu_s=3.0)  # the first CPU figure is the baseline
    assert lines(buf) == ["verifying: 20.0 MiB / 100.0 MiB (20%), 4.0 MiB/s, - cores, ETA 20 s"]
    clock.now += 5
    bar.update(task, completed=30 * 2**20, cpu_s=8.0)
    assert lines(buf)[-1].endswith("2.0 MiB/s, 1.00 cores, ETA 35 s")
    clock.now += 2
    bar.stop()
    assert lines(buf)[-1] == (
        "verifying stopped: 30.0 MiB / 100.0 MiB in 12.0 s, 2.5 MiB/s, 1.00 cores"
    )


def test_no_progress_says_so_instead_of_an_eta():
    bar, clock, buf = log_progress(interval_s=10)
    task = bar.add_task("  q5 benchmark", total=500)
    clock.now += 10
    bar.update(task, completed=0, cpu_s=1.0)
    assert lines(buf) == [
        "  q5 benchmark: 0 / 500 events (0%), 0 ev/s, - cores, ETA - (no progress)"
    ]


def test_a_wait_and_a_silence_get_lines_from_the_heartbeat():
    bar, clock, buf = log_progress(interval_s=10)
    bar.log("source ceiling: [bold]the benchmark part[/] read once")  # markup rendered
    clock.now += 9
    bar.tick()
    assert lines(buf) == ["source ceiling: the benchmark part read once"]
    clock.now += 1
    bar.tick()
    assert (
        lines(buf)[-1]
        == "  still working, 10 s since: source ceiling: the benchmark part read once"
    )
    clock.now += 10
    bar.tick()  # counted from the message, not from the previous heartbeat
    assert (
        lines(buf)[-1]
        == "  still working, 20 s since: source ceiling: the benchmark part read once"
    )
    wait = bar.add_task("  q5 restore")  # no total: a wait
    clock.now += 75
    bar.tick()
    assert lines(buf)[-1] == "  q5 restore: 1 min 15 s so far"
    bar.remove_task(wait)
    assert lines(buf)[-1] == "  q5 restore: 1 min 15 s so far"  # a wait has no closing line
    hidden = bar.add_task("generating", total=10, visible=False)
    clock.now += 30
    bar.update(hidden, completed=10)
    bar.tick()
    assert not any("generating" in line for line in lines(buf))


def test_left_by_an_error_no_closing_line():
    bar, clock, buf = log_progress()
    with pytest.raises(RuntimeError), bar:
        bar.add_task("generating", total=100)
        raise RuntimeError("disk full")
    assert lines(buf) == []  # the error's own line stays the only one


def test_the_interval_comes_from_the_environment(monkeypatch):
    monkeypatch.delenv(nx_console.PROGRESS_INTERVAL_ENV, raising=False)
    assert progress_interval() == nx_console.PROGRESS_INTERVAL_S == 15.0
    monkeypatch.setenv(nx_console.PROGRESS_INTERVAL_ENV, "1 min")
    assert progress_interval() == 60.0
    monkeypatch.setenv(nx_console.PROGRESS_INTERVAL_ENV, "soon")
    with pytest.raises(UsageError, match="NEXMARK_PROGRESS_INTERVAL"):
        progress_interval()


def test_off_a_terminal_progress_is_lines_and_quiet_is_nothing(monkeypatch):
    assert not nx_console.err.is_terminal  # pytest captures stderr
    assert isinstance(progress(), LogProgress)
    monkeypatch.setattr(nx_console, "_quiet", True)
    quiet_bar = progress()
    assert not isinstance(quiet_bar, LogProgress) and quiet_bar.disable


@pytest.mark.parametrize(
    "seconds, text", [(0.4, "0 s"), (59, "59 s"), (200, "3 min 20 s"), (3960, "1 h 06 min")]
)
def test_eta_format(seconds, text):
    assert format_eta(seconds) == text
    assert re.fullmatch(r"\d+ (s|min \d\d s|h \d\d min)", text)


def test_cores_of_a_line_are_over_when_the_cpu_was_read():
    """A pushed CPU reading may be older than the update (a sample's, reused): the line's cores
    divide by the readings' own times, not the updates' (which read 2.17 cores on 2)."""
    bar, clock, buf = log_progress(interval_s=10)
    task = bar.add_task("  q8 benchmark", total=1_000)
    bar.update(task, completed=0, cpu_s=0.0, cpu_at=clock.now)
    read_at = clock.now + 9.0  # two cores busy until this reading
    clock.now += 10  # the update comes a second after the reading
    bar.update(task, completed=500, cpu_s=18.0, cpu_at=read_at)
    assert "2.00 cores" in lines(buf)[-1]

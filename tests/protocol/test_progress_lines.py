"""A run's progress in a log (not a terminal): the fake engine's two phases, on a fake clock,
read back from the captured lines."""

from __future__ import annotations

import io
import re

import pytest
from rich.console import Console

from fake_engine import FakeClock, Script
from fake_runs import fake_run
from nexmark.console import LogProgress
from nexmark.protocol.progress.display import RunDisplay
from nexmark.workload.dataset import Dataset, DatasetParams
from nexmark.workload.writer import ensure_dataset


@pytest.fixture(scope="module")
def dataset(tmp_path_factory: pytest.TempPathFactory) -> Dataset:
    """4,000 events (3,000 warm-up, 1,000 benchmark), 2 files per part."""
    params = DatasetParams(events=4000, files=2, rate=1000)
    root = tmp_path_factory.mktemp("progress-data")
    return ensure_dataset(params, out=root / params.dataset_id, show_progress=False)


def _run(dataset, tmp_path, script: Script, interval_s: float) -> list[str]:
    clock = FakeClock()
    buf = io.StringIO()
    log = LogProgress(Console(file=buf, width=200), interval_s, clock=clock, heartbeat=False)
    with RunDisplay(1, log=log) as display:
        display.query_started("q3", 0)
        fake = fake_run(dataset, tmp_path / "work", script, clock=clock, display=display)
        fake.run.execute()
        display.query_finished("ok", "done")
    fake.engine.close()
    return buf.getvalue().splitlines()


LINE = re.compile(
    r"  q3 (?P<phase>warmup|benchmark): (?P<done>[\d,]+) / (?P<total>[\d,]+) events \(\d+%\), "
    r"(?P<rate>[\d.]+[KM]?) ev/s, (?P<cores>[\d.]+) cores, ETA (?P<eta>\d+) s"
)


def test_each_reading_phase_logs_its_progress_every_interval_and_a_closing_line(dataset, tmp_path):
    # 100 events/s on 1.5 cores: the warm-up's 3,000 events take 30 s, the benchmark's 1,000 10 s.
    lines = _run(dataset, tmp_path, Script(eps=100.0, cores=1.5), interval_s=8.0)
    progress = [m for line in lines if (m := LINE.fullmatch(line))]
    warmup = [m for m in progress if m["phase"] == "warmup"]
    benchmark = [m for m in progress if m["phase"] == "benchmark"]
    assert len(warmup) == 3 and len(benchmark) == 1, lines  # at 8, 16 and 24 s; at 8 s
    for m in progress:
        total = 3000 if m["phase"] == "warmup" else 1000
        done = int(m["done"].replace(",", ""))
        assert int(m["total"].replace(",", "")) == total and 0 < done < total
        assert float(m["rate"]) == pytest.approx(100, rel=0.15)
        assert float(m["cores"]) == pytest.approx(1.5, rel=0.15)
        assert int(m["eta"]) == pytest.approx((total - done) / 100, abs=2)
    dones = [int(m["done"].replace(",", "")) for m in warmup]
    assert dones == sorted(dones) and dones[-1] > dones[0]
    closing = [line for line in lines if " done: " in line]
    assert len(closing) == 2, lines
    assert re.fullmatch(r"  q3 warmup done: 3,000 events in 3\d\.\d s, 9\d ev/s, 1\.\d\d cores",
                        closing[0])  # fmt: skip
    assert closing[1].startswith("  q3 benchmark done: 1,000 events in ")
    # The phases are still named in order, between the progress lines.
    named = [line.strip() for line in lines if re.fullmatch(r"  q3 [a-z-]+", line)]
    assert named[:3] == ["q3 warmup", "q3 phase-checkpoint", "q3 stop"]
    assert lines[0] == "q3 (1/1)" and lines[-1] == "  q3 ok done"


def test_a_phase_that_fails_midway_gets_a_stopped_line(dataset, tmp_path):
    script = Script(eps=100.0, fail_in="warmup")
    clock = FakeClock()
    buf = io.StringIO()
    log = LogProgress(Console(file=buf, width=200), 5.0, clock=clock, heartbeat=False)
    with RunDisplay(1, log=log) as display:
        display.query_started("q3", 0)
        fake = fake_run(dataset, tmp_path / "work", script, clock=clock, display=display)
        with pytest.raises(Exception):  # noqa: B017 - the fake's failure, whatever its type
            fake.run.execute()
        display.query_finished("failed", "job failed")
    fake.engine.close()
    lines = buf.getvalue().splitlines()
    stopped = [line for line in lines if "q3 warmup stopped: " in line]
    assert len(stopped) == 1 and "/ 3,000 events in " in stopped[0], lines
    assert lines[-1] == "  q3 failed job failed"


def test_quiet_or_disabled_prints_no_progress(dataset, tmp_path, monkeypatch):
    from nexmark import console

    monkeypatch.setattr(console, "_quiet", True)
    display = RunDisplay(1)
    assert display._log is None and not display.live  # phase lines only, as before
    assert RunDisplay(1, enabled=False)._log is None

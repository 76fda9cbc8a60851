"""The system check in a run on the fake engine: recorded in results.json, warned about."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fake_engine import FakeClock, FakeEngine, FakeWorld
from nexmark.metrics.system import ProcCpu, SysFs, SystemChecker, SystemCheckOptions
from nexmark.protocol.preparation.options import ProtocolOptions
from nexmark.protocol.suite.runner import SuiteRun, run_suite
from nexmark.workload.dataset import Dataset, DatasetParams
from nexmark.workload.writer import ensure_dataset


@pytest.fixture(scope="module")
def dataset(tmp_path_factory: pytest.TempPathFactory) -> Dataset:
    params = DatasetParams(events=4000, files=2, rate=1000)
    root = tmp_path_factory.mktemp("fake-data")
    return ensure_dataset(params, out=root / params.dataset_id, show_progress=False)


class BusyNeighbour:
    """A process table (the /proc layer) on the check's clock: one other process uses a
    scripted share of a core; this run's processes use much more and are left out."""

    def __init__(self, clock: FakeClock, shares: list[float]) -> None:
        self.clock, self.shares, self.cpu, self.last = clock, list(shares), 0.0, clock()
        self.share = 0.0

    def snapshot(self) -> dict[int, ProcCpu]:
        now = self.clock()
        self.cpu += self.share * (now - self.last)
        self.last = now
        return {
            4242: ProcCpu(4242, "neighbour", 1.0, self.cpu),
            1: ProcCpu(1, "ours", 1.0, 7.0 * now),
        }

    def next_window(self) -> None:
        self.share = self.shares.pop(0)

    def ours(self) -> set[int]:
        return {1}


class ScriptedChecker(SystemChecker):
    """The real checker over the fake table: each window gets the neighbour's next share."""

    def check(self, window_s: float):
        self.table.next_window()
        return super().check(window_s)


def test_the_checks_land_in_results_json_and_a_busy_neighbour_is_warned_about(
    dataset, tmp_path, capsys
):
    clock = FakeClock()
    sysfs = tmp_path / "sysfs"
    for i in range(2):
        path = sysfs / f"sys/devices/system/cpu/cpu{i}/cpufreq/scaling_governor"
        path.parent.mkdir(parents=True)
        path.write_text("performance\n")
    (sysfs / "proc").mkdir()
    (sysfs / "proc/loadavg").write_text("0.75 0.50 0.25 1/90 7\n")
    # Quiet before the run and before q0; busy (0.6 of a core) before q1.
    table = BusyNeighbour(clock, [0.05, 0.0, 0.6])
    options = SystemCheckOptions(run_window_s=2.0, query_window_s=1.0)
    checker = ScriptedChecker(options, table, SysFs(sysfs), clock, clock.sleep, clock)
    results = tmp_path / "r"
    suite = SuiteRun(
        ["q0", "q1"],
        dataset,
        results,
        ProtocolOptions(timeout_s=30.0, sample_interval_s=0.01),
        show_progress=True,
        calibrate=False,
        system_checker=checker,
    )
    run_suite(suite, lambda: FakeEngine(FakeWorld()))
    shown = capsys.readouterr().err
    assert "system: load 0.75 0.50 0.25 on" in shown and "governor performance" in shown
    assert "other processes 0.05 cores over 2.0 s" in shown
    warnings = [line for line in shown.splitlines() if line.startswith("warning:")]
    assert warnings == [
        "warning: other processes used 0.60 cores in the 1.0 s before q1 "
        "(neighbour (pid 4242) 0.60)"
    ]
    doc = json.loads((results / "results.json").read_text())
    by_query = {r["query"]: r for r in doc["results"]}
    for record in by_query.values():
        run_check = record["setup"]["system_check"]
        assert run_check["load_avg"] == [0.75, 0.5, 0.25] and run_check["cpus"] >= 1
        assert run_check["governor"] == "performance" and run_check["boost"] == "unreadable"
        assert run_check["other_cores"] == 0.05 and run_check["window_s"] == 2.0
    assert by_query["q0"]["system_check"]["other_cores"] == 0.0
    assert by_query["q1"]["system_check"]["other_cores"] == 0.6
    assert by_query["q1"]["system_check"]["other_processes"] == [
        {"pid": 4242, "name": "neighbour", "cores": 0.6}
    ]
    csv_header = (results / "results.csv").read_text().splitlines()[0].split(",")
    assert "system_check.other_cores" in csv_header


def test_a_default_suite_checks_without_waiting(dataset, tmp_path):
    # The programmatic default (every other fake-engine test): windows of 0, no figure.
    suite = SuiteRun(
        ["q0"],
        dataset,
        tmp_path / "r",
        ProtocolOptions(timeout_s=30.0, sample_interval_s=0.01),
        show_progress=False,
        calibrate=False,
    )
    (result,) = run_suite(suite, lambda: FakeEngine(FakeWorld()))
    for check in (result.setup.system_check, result.system_check):
        assert check.window_s is not None and check.window_s < 0.5
        assert check.other_cores is None and "too short" in check.note
        assert check.cpus and check.governor and check.boost  # "unreadable" counts as read
    if Path("/proc/loadavg").exists():
        assert result.system_check.load_avg is not None and len(result.system_check.load_avg) == 3

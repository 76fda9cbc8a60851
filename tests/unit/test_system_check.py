"""The system check: sysfs read from a tmp dir, the process table faked or real (no engine)."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from fake_engine import FakeClock
from nexmark.errors import UsageError
from nexmark.metrics.system import (
    UNREADABLE,
    OthersWatch,
    ProcCpu,
    ProcessTable,
    SysFs,
    SystemChecker,
    SystemCheckOptions,
    summary_line,
    warning_line,
)
from nexmark.settings import Settings


def _write(root: Path, relative: str, text: str) -> None:
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def _governors(root: Path, *names: str) -> None:
    for i, name in enumerate(names):
        _write(root, f"sys/devices/system/cpu/cpu{i}/cpufreq/scaling_governor", f"{name}\n")


def test_governor_one_value_mixed_values_or_unreadable(tmp_path):
    assert SysFs(tmp_path).governor() == UNREADABLE  # no cpufreq: a VM or a container
    _governors(tmp_path, "performance", "performance")
    assert SysFs(tmp_path).governor() == "performance"
    _governors(tmp_path, "performance", "powersave", "powersave")
    assert SysFs(tmp_path).governor() == "powersave x2, performance x1"


def test_boost_from_cpufreq_boost_or_intel_no_turbo(tmp_path):
    assert SysFs(tmp_path).boost() == UNREADABLE
    _write(tmp_path, "sys/devices/system/cpu/intel_pstate/no_turbo", "1\n")
    assert SysFs(tmp_path).boost() == "off"  # no_turbo is the inverse of boost
    _write(tmp_path, "sys/devices/system/cpu/intel_pstate/no_turbo", "0\n")
    assert SysFs(tmp_path).boost() == "on"
    _write(tmp_path, "sys/devices/system/cpu/cpufreq/boost", "0\n")  # wins where present
    assert SysFs(tmp_path).boost() == "off"
    _write(tmp_path, "sys/devices/system/cpu/cpufreq/boost", "garbage\n")
    assert SysFs(tmp_path).boost() == "on"  # unreadable there: the intel file says


def test_load_average_from_proc_or_none(tmp_path):
    assert SysFs(tmp_path).load_avg() is None  # a tmp root never falls back to this machine's
    _write(tmp_path, "proc/loadavg", "0.52 0.40 1.25 2/345 6789\n")
    assert SysFs(tmp_path).load_avg() == (0.52, 0.40, 1.25)
    _write(tmp_path, "proc/loadavg", "not numbers\n")
    assert SysFs(tmp_path).load_avg() is None


class FakeTable:
    """A process table on a fake clock: each pid uses its share of a core as time moves."""

    def __init__(self, clock: FakeClock, cores: dict[int, float], ours: set[int]) -> None:
        self.clock, self.cores, self._ours = clock, cores, ours
        self.created = {pid: 1.0 for pid in cores}

    def snapshot(self) -> dict[int, ProcCpu]:
        return {
            pid: ProcCpu(pid, f"proc{pid}", self.created[pid], share * self.clock())
            for pid, share in self.cores.items()
        }

    def ours(self) -> set[int]:
        return set(self._ours)

    def machine_busy_s(self) -> float | None:
        return None  # (the machine's own count: `MachineTable`)

    def own_ended_s(self) -> float:
        return 0.0


class MachineTable(FakeTable):
    """A process table whose machine also ran `ended` cores of processes that no snapshot
    shows (they started and ended between two looks), and whose run's own ended children
    used `own_ended` cores."""

    def __init__(self, clock, cores, ours, ended: float, own_ended: float = 0.0) -> None:
        super().__init__(clock, cores, ours)
        self.ended, self.own_ended = ended, own_ended

    def machine_busy_s(self) -> float | None:
        return (sum(self.cores.values()) + self.ended + self.own_ended) * self.clock()

    def own_ended_s(self) -> float:
        return self.own_ended * self.clock()


def _checker(tmp_path, table, clock, query_window_s=1.0) -> SystemChecker:
    _write(tmp_path, "proc/loadavg", "1.50 1.00 0.50 1/100 42\n")
    options = SystemCheckOptions(run_window_s=2.0, query_window_s=query_window_s)
    return SystemChecker(options, table, SysFs(tmp_path), clock, clock.sleep, clock)


def test_other_processes_cpu_excludes_ours_and_names_the_busiest(tmp_path):
    clock = FakeClock(start=1000.0)
    table = FakeTable(clock, {10: 0.6, 11: 0.1, 12: 0.0, 99: 1.8}, ours={99})
    check = _checker(tmp_path, table, clock).before_query()
    assert check.window_s == pytest.approx(1.0)
    assert check.other_cores == pytest.approx(0.7)  # pid 99 (ours: the engine) left out
    assert [(p.pid, p.cores) for p in check.other_processes] == [(10, 0.6), (11, 0.1)]
    assert check.load_avg == [1.5, 1.0, 0.5] and check.governor == UNREADABLE
    line = warning_line(check, "q5")
    assert line == (
        "warning: other processes used 0.70 cores in the 1.0 s before q5 "
        "(proc10 (pid 10) 0.60, proc11 (pid 11) 0.10)"
    )
    assert "other processes 0.70 cores over 1.0 s" in summary_line(check)


def test_a_phase_watch_counts_other_processes_from_start_to_stop():
    clock = FakeClock(start=1000.0)
    table = FakeTable(clock, {10: 0.6, 11: 0.0, 99: 1.8}, ours={99})
    watch = OthersWatch(table=table, clock=clock)
    clock.sleep(20.0)
    load = watch.stop()
    assert load is not None and load.window_s == pytest.approx(20.0)
    assert load.cores == pytest.approx(0.6) and load.shared  # over a quarter of a core
    assert load.busiest_line() == "proc10 (pid 10) 0.60"


def test_an_engine_outside_this_runs_processes_is_not_a_neighbour():
    """A cluster this run did not start (pid 50, not ours) is the engine: its CPU, which the
    engine reports, is taken out of the other processes' (0.3 cores of pid 10 remain)."""
    clock = FakeClock(start=1000.0)
    table = FakeTable(clock, {10: 0.3, 50: 1.6, 99: 0.0}, ours={99})
    watch = OthersWatch(engine_cpu=lambda: 1.6 * clock(), table=table, clock=clock)
    clock.sleep(10.0)
    load = watch.stop()
    assert load is not None and load.cores == pytest.approx(0.3, abs=0.01)
    # The engine among this run's processes (embedded): nothing is taken out.
    table = FakeTable(clock, {10: 0.1, 99: 1.6}, ours={99})
    watch = OthersWatch(engine_cpu=lambda: 1.6 * clock(), table=table, clock=clock)
    clock.sleep(10.0)
    load = watch.stop()
    assert load is not None and load.cores == pytest.approx(0.1) and not load.shared


def test_a_phase_watch_counts_processes_that_ended_within_it():
    """A test suite run beside a warm-up, started and ended within it, is in no snapshot of
    the process table: the machine's own count holds it (a 200M warm-up once recorded 0.02
    cores of others with tests running beside it)."""
    clock = FakeClock(start=1000.0)
    table = MachineTable(clock, {10: 0.1, 99: 1.0}, ours={99}, ended=0.8, own_ended=0.3)
    watch = OthersWatch(table=table, clock=clock)
    clock.sleep(60.0)
    load = watch.stop()
    assert load is not None and load.cores == pytest.approx(0.9) and load.shared
    assert load.busiest_line() == (
        "proc10 (pid 10) 0.10, ended processes and the kernel (pid 0) 0.80"
    )
    # A quiet machine: the two counts agree, nothing is added (the run's own ended children,
    # 0.3 cores, are not another process).
    table = MachineTable(clock, {10: 0.1, 99: 1.0}, ours={99}, ended=0.02, own_ended=0.3)
    watch = OthersWatch(table=table, clock=clock)
    clock.sleep(60.0)
    load = watch.stop()
    assert load is not None and load.cores == pytest.approx(0.1) and not load.shared


def test_the_machines_count_reads_this_machine():
    busy = ProcessTable().machine_busy_s()
    assert busy is not None and busy > 0
    time.sleep(0.2)
    assert ProcessTable().machine_busy_s() >= busy


def test_a_phase_watch_too_short_or_unreadable_gives_none():
    clock = FakeClock(start=1000.0)
    assert OthersWatch(table=FakeTable(clock, {10: 1.0}, ours=set()), clock=clock).stop() is None

    class Unreadable(FakeTable):
        def snapshot(self):
            raise psutil.AccessDenied(1)

    watch = OthersWatch(table=Unreadable(clock, {}, ours=set()), clock=clock)
    clock.sleep(5.0)
    assert watch.stop() is None


def test_a_quiet_machine_gives_no_warning(tmp_path):
    clock = FakeClock()
    check = _checker(tmp_path, FakeTable(clock, {10: 0.2, 11: 0.05}, set()), clock).before_run()
    assert check.other_cores == pytest.approx(0.25) and check.window_s == pytest.approx(2.0)
    assert warning_line(check, "the run") is None  # a quarter of a core is the limit, not above


def test_a_reused_pid_is_a_new_process(tmp_path):
    clock = FakeClock()

    class Reused(FakeTable):
        calls = 0

        def snapshot(self):
            self.calls += 1
            if self.calls == 1:
                return {10: ProcCpu(10, "old", 1.0, 500.0)}
            return {10: ProcCpu(10, "new", 2.0, 0.3)}  # born within the window

    check = _checker(tmp_path, Reused(clock, {}, set()), clock).before_query()
    assert check.other_cores == pytest.approx(0.3)  # not 0.3 - 500 (a negative nothing)


def test_window_zero_samples_without_waiting_and_gives_no_figure(tmp_path):
    clock = FakeClock()
    table = FakeTable(clock, {10: 5.0}, set())
    start = clock()
    check = _checker(tmp_path, table, clock, query_window_s=0.0).before_query()
    assert clock() - start < 0.01  # no sleep of a window
    assert check.other_cores is None and "too short" in check.note
    assert warning_line(check, "q0") is None
    assert "other processes not measured" in summary_line(check)


def test_an_unreadable_process_table_is_a_note_not_a_failure(tmp_path):
    class Broken:
        def snapshot(self):
            raise PermissionError("no /proc")

    clock = FakeClock()
    check = _checker(tmp_path, Broken(), clock).before_query()
    assert check.other_cores is None and "unreadable" in check.note
    assert check.load_avg == [1.5, 1.0, 0.5]


def test_the_packaged_windows_and_bad_values(tmp_path):
    options = SystemCheckOptions.from_settings(Settings.load())
    assert (options.run_window_s, options.query_window_s, options.warn_cores) == (2.0, 1.0, 0.25)
    fast = Settings.load(overrides=["system_check.query_window=0 s", "system_check.run_window=0"])
    assert SystemCheckOptions.from_settings(fast).query_window_s == 0.0
    for override, message in (
        ("system_check.query_window=2 min", "between 0 and 60 s"),
        ("system_check.run_window=soon", "system_check.run_window"),
        ("system_check.warn_cores=0", "positive number"),
        ("system_check.warn_cores=lots", "positive number"),
    ):
        with pytest.raises(UsageError, match=message):
            SystemCheckOptions.from_settings(Settings.load(overrides=[override]))


BUSY = "import time\nend = time.time() + {s}\nwhile time.time() < end: pass\n"


def _orphan_busy_loops(seconds: float, count: int) -> list[int]:
    """Busy Python loops that are not our descendants (their shell parent exits at once)."""
    script = BUSY.format(s=seconds)
    spawn = f'for i in $(seq {count}); do "$0" -c "$1" >/dev/null 2>&1 </dev/null & echo $!; done'
    done = subprocess.run(
        ["sh", "-c", spawn, sys.executable, script],
        capture_output=True,
        text=True,
        check=True,
        timeout=30,
    )
    return [int(line) for line in done.stdout.split()]


def _stop(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)


class Only(ProcessTable):
    """The real process table, narrowed to some pids: the machine is shared, and the test is
    about these processes, not about what other engineers run meanwhile."""

    def __init__(self, pids: list[int]) -> None:
        self.pids = set(pids)

    def snapshot(self) -> dict[int, ProcCpu]:
        return {pid: p for pid, p in super().snapshot().items() if pid in self.pids}


def _cpu_s(pids: list[int]) -> float:
    total = 0.0
    for pid in pids:
        times = psutil.Process(pid).cpu_times()
        total += times.user + times.system
    return total


def test_busy_other_processes_trigger_the_warning():
    # Eight loops, a few tries: on a machine whose JVMs keep dozens of threads runnable (load
    # 25 on two cores seen) the loops may never reach a quarter of a core; then the figure is
    # still checked against their own CPU each try, and the warning part is skipped, saying so.
    pids = _orphan_busy_loops(10, 8)
    try:
        time.sleep(0.3)  # the interpreters started and spin
        assert not set(pids) & ProcessTable().ours()
        checker = SystemChecker(SystemCheckOptions(query_window_s=1.0), table=Only(pids))
        warned = None
        for _ in range(3):
            start, before = time.monotonic(), _cpu_s(pids)
            check = checker.before_query()
            used, outer = _cpu_s(pids) - before, time.monotonic() - start
            # The check's window lies inside the two reads: at most what they used; short of it
            # by their CPU outside the window, which a starved test process stretches (a 1 s
            # window took 1.7 s at load 25), so only half is asked for: they are counted.
            assert check.other_cores is not None
            inner = check.other_cores * check.window_s
            assert 0.5 * used * check.window_s / outer - 0.02 <= inner <= used + 0.02, (used, outer)
            line = warning_line(check, "q1")
            assert (line is not None) == (check.other_cores > 0.25)
            if line is not None:
                warned = (check, line)
                break
        if warned is None:
            pytest.skip(f"machine too loaded: 8 busy loops got {check.other_cores:.2f} cores")
        check, line = warned
        assert "before q1" in line and any(f"(pid {pid})" in line for pid in pids)
        assert {p.pid for p in check.other_processes} <= set(pids)
    finally:
        for pid in pids:
            _stop(pid)


def test_this_runs_own_child_is_not_counted():
    child = subprocess.Popen([sys.executable, "-c", BUSY.format(s=20)])
    try:
        time.sleep(0.3)
        assert child.pid in ProcessTable().ours()  # as the engine's JVMs are
        checker = SystemChecker(SystemCheckOptions(query_window_s=0.5), table=Only([child.pid]))
        before = _cpu_s([child.pid])
        check = checker.before_query()
        assert _cpu_s([child.pid]) - before > 0.02  # it was busy, and yet:
        assert check.other_cores == 0.0 and check.other_processes == []
    finally:
        child.kill()
        child.wait()


@pytest.mark.flink
def test_the_embedded_flink_jvm_is_ours_and_not_counted(flink_engine):
    # The engine's processes are this process's descendants: its CPU is never "other".
    jvm = flink_engine.gateway.process.pid
    assert jvm in ProcessTable().ours()
    check = SystemChecker(SystemCheckOptions(query_window_s=0.5)).before_query()
    assert all(p.pid != jvm for p in check.other_processes)


@pytest.mark.spark
def test_the_embedded_spark_jvm_is_ours_and_not_counted(spark_engine):
    jvm = spark_engine.jvm_pid
    assert jvm is not None and jvm in ProcessTable().ours()
    check = SystemChecker(SystemCheckOptions(query_window_s=0.5)).before_query()
    assert all(p.pid != jvm for p in check.other_processes)

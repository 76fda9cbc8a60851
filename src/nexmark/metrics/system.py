"""The system check before a run and before each query (pyperf's `system show` habit).

What it reads: the load average (1/5/15 min), the CPU count, the CPU frequency governor and the
boost/turbo state (from sysfs, "unreadable" where the kernel does not expose them, as in most
containers and VMs), and the CPU other processes used over a short window. "Other" means not
this Python process and not any of its descendants: every engine process a local target starts
(Flink's gateway and cluster JVMs, Spark's JVM and its workers) is a child of this process, so
the engine's own CPU is never counted as noise. A remote cluster's JVMs are not ours: on the
same machine they count as other processes (idle between queries, they use little).

Reading never fails a run: what cannot be read is recorded as unreadable (sysfs) or null.
"""

from __future__ import annotations

import os
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import psutil

from nexmark.durations import parse_seconds
from nexmark.errors import UsageError
from nexmark.metrics import speed as yardstick

# The lines that show a check live with the record (results/setup.py), below this layer:
# the tables print them too. Re-exported here for the callers that read them as system.*.
from nexmark.results.setup import (  # noqa: F401 - re-exported
    BUSY_CORES,
    UNREADABLE,
    MachineSpeed,
    OtherProcess,
    SystemCheck,
    busiest,
    busy,
    speed_warnings,
    summary_line,
    warning_line,
)
from nexmark.settings import Settings

# psutil's CPU times move in clock ticks (10 ms): over a shorter window one tick of one process
# would read as a tenth of a core, so no figure is given (window 0: sample without waiting).
MIN_WINDOW_S = 0.1
MAX_WINDOW_S = 60.0
TOP_PROCESSES = 3  # the busiest other processes a check names
# The machine's count (/proc/stat) and the processes' own differ by the kernel's interrupt
# time and by reading them a few ms apart: a gap below this is not taken for ended processes.
ENDED_MARGIN_CORES = 0.05


@dataclass(frozen=True)
class ProcCpu:
    """One process as the process table shows it at one instant."""

    pid: int
    name: str | None
    created: float | None  # its start time: a reused pid is another process
    cpu_s: float  # user + system CPU seconds so far


class ProcessTable:
    """The /proc-reading layer: every process's CPU so far, and which processes are ours."""

    def snapshot(self) -> dict[int, ProcCpu]:
        procs: dict[int, ProcCpu] = {}
        for p in psutil.process_iter(["name", "cpu_times", "create_time"], ad_value=None):
            times = p.info.get("cpu_times")
            if times is None:  # gone or not ours to read: nothing to count
                continue
            procs[p.pid] = ProcCpu(
                p.pid, p.info.get("name"), p.info.get("create_time"), times.user + times.system
            )
        return procs

    def ours(self) -> set[int]:
        """This process and its descendants (the engine's processes among them)."""
        me = psutil.Process()
        try:
            return {me.pid, *(c.pid for c in me.children(recursive=True))}
        except psutil.Error:
            return {me.pid}

    def machine_busy_s(self) -> float | None:
        """CPU seconds the whole machine has been busy (every process, ended ones included,
        and the kernel): /proc/stat's user, nice, system, irq and softirq. None without it."""
        try:
            fields = Path("/proc/stat").read_text(encoding="ascii").split("\n", 1)[0].split()
            user, nice, system, _idle, _iowait, irq, softirq = (int(v) for v in fields[1:8])
        except (OSError, ValueError):
            return None
        return (user + nice + system + irq + softirq) / os.sysconf("SC_CLK_TCK")

    def own_ended_s(self) -> float:
        """CPU seconds of this process's children that ended and were waited for."""
        times = psutil.Process().cpu_times()
        return times.children_user + times.children_system


class SysFs:
    """The kernel's files the check reads, under `root` (a tmp dir in tests)."""

    def __init__(self, root: Path | str = "/") -> None:
        self.root = Path(root)

    def _read(self, relative: str) -> str | None:
        try:
            return (self.root / relative).read_text(encoding="utf-8").strip()
        except (OSError, UnicodeDecodeError):
            return None

    def load_avg(self) -> tuple[float, float, float] | None:
        text = self._read("proc/loadavg")
        if text is not None:
            try:
                one, five, fifteen = (float(v) for v in text.split()[:3])
                return (one, five, fifteen)
            except ValueError:
                return None
        if self.root == Path("/") and hasattr(os, "getloadavg"):  # no /proc: macOS, BSD
            try:
                return os.getloadavg()
            except OSError:
                return None
        return None

    def governor(self) -> str:
        """The scaling governor of every CPU: "performance", or "powersave x2, performance x2"
        when they differ; "unreadable" when no CPU exposes one."""
        cpus = self.root / "sys/devices/system/cpu"
        seen: Counter[str] = Counter()
        for path in sorted(cpus.glob("cpu[0-9]*/cpufreq/scaling_governor")):
            value = self._read(str(path.relative_to(self.root)))
            if value:
                seen[value] += 1
        if not seen:
            return UNREADABLE
        if len(seen) == 1:
            return next(iter(seen))
        return ", ".join(f"{name} x{count}" for name, count in seen.most_common())

    def boost(self) -> str:
        """ "on" or "off" from cpufreq/boost (acpi-cpufreq, amd-pstate) or intel_pstate/no_turbo
        (inverted), else "unreadable"."""
        boost = self._read("sys/devices/system/cpu/cpufreq/boost")
        if boost in ("0", "1"):
            return "on" if boost == "1" else "off"
        no_turbo = self._read("sys/devices/system/cpu/intel_pstate/no_turbo")
        if no_turbo in ("0", "1"):
            return "off" if no_turbo == "1" else "on"
        return UNREADABLE


@dataclass(frozen=True)
class SystemCheckOptions:
    """How long each check watches other processes. 0 samples without waiting (no CPU figure:
    see MIN_WINDOW_S); the recommended windows are in the packaged settings."""

    run_window_s: float = 0.0
    query_window_s: float = 0.0
    warn_cores: float = BUSY_CORES
    speed: bool = False  # time the yardstick before the run (metrics/speed.py, about 0.5 s)

    @classmethod
    def from_settings(cls, settings: Settings) -> SystemCheckOptions:
        """`[system_check] run_window`, `query_window` (durations), `warn_cores` and `speed`
        (true or false)."""
        section = settings.section("system_check")
        windows = {}
        for key in ("run_window", "query_window"):
            if key not in section:
                continue
            name = f"system_check.{key}"
            seconds = parse_seconds(section[key], name)
            if not 0 <= seconds <= MAX_WINDOW_S:
                raise UsageError(f"{name} must be between 0 and 60 s, got {section[key]}")
            windows[f"{key}_s"] = seconds
        warn = section.get("warn_cores")
        if warn is not None:
            try:
                cores = float(warn)
            except ValueError:
                cores = -1.0
            if not cores > 0:
                raise UsageError(f"system_check.warn_cores must be a positive number, got {warn}")
            windows["warn_cores"] = cores
        speed = str(section.get("speed", "false")).strip().lower()
        if speed not in ("true", "false"):
            raise UsageError(f"system_check.speed must be true or false, got {speed}")
        return cls(**windows, speed=speed == "true")


@dataclass
class SystemChecker:
    """Takes the checks; every source of time and of system state can be replaced in tests."""

    options: SystemCheckOptions = field(default_factory=SystemCheckOptions)
    table: ProcessTable = field(default_factory=ProcessTable)
    sysfs: SysFs = field(default_factory=SysFs)
    clock: Callable[[], float] = time.monotonic
    sleep: Callable[[float], None] = time.sleep
    wall: Callable[[], float] = time.time
    measure_speed: Callable[[], MachineSpeed] = yardstick.measure_speed

    def check(self, window_s: float) -> SystemCheck:
        """Load, CPU frequency settings, and other processes' CPU over `window_s` seconds."""
        load = self.sysfs.load_avg()
        result = SystemCheck(
            at=self.wall(),
            load_avg=list(load) if load is not None else None,
            cpus=os.cpu_count(),
            governor=self.sysfs.governor(),
            boost=self.sysfs.boost(),
            warn_cores=self.options.warn_cores,
        )
        self._other_cpu(result, window_s)
        return result

    def before_run(self) -> SystemCheck:
        """The check, and the machine's speed: the run's yardstick (once: about 0.5 s)."""
        result = self.check(self.options.run_window_s)
        if self.options.speed:
            result.speed = self.measure_speed()
        return result

    def before_query(self) -> SystemCheck:
        return self.check(self.options.query_window_s)

    def _other_cpu(self, result: SystemCheck, window_s: float) -> None:
        try:
            start = self.clock()
            before = self.table.snapshot()
            if window_s > 0:
                self.sleep(window_s)
            after = self.table.snapshot()
            elapsed = self.clock() - start
            ours = self.table.ours()
        except (OSError, psutil.Error) as exc:  # no process table to read: say so, go on
            result.note = f"other processes unreadable: {exc}"
            return
        result.window_s = round(elapsed, 3)
        if elapsed < MIN_WINDOW_S:
            result.note = f"window {elapsed:.3f} s: too short for a CPU figure"
            return
        result.other_cores, result.other_processes = others_used(before, after, ours, elapsed)


def used_since(then: ProcCpu | None, now: ProcCpu) -> float:
    """CPU seconds a process used between two looks; all of it when it was not there at the
    first (it started within the window; a reused pid is another process)."""
    same = then is not None and then.created == now.created
    return now.cpu_s - (then.cpu_s if same and then is not None else 0.0)


def others_used(
    before: dict[int, ProcCpu], after: dict[int, ProcCpu], ours: set[int], elapsed: float
) -> tuple[float, list[OtherProcess]]:
    """Other processes' cores between two snapshots `elapsed` seconds apart, and the busiest."""
    used: list[tuple[float, ProcCpu]] = []
    for pid, now in after.items():
        if pid in ours:
            continue
        cpu = used_since(before.get(pid), now)
        if cpu > 0:
            used.append((cpu, now))
    used.sort(key=lambda item: item[0], reverse=True)
    return round(sum(cpu for cpu, _ in used) / elapsed, 3), [
        OtherProcess(p.pid, p.name, round(cpu / elapsed, 3)) for cpu, p in used[:TOP_PROCESSES]
    ]


@dataclass(frozen=True)
class OtherLoad:
    """What processes other than the run's used over one phase: a scored phase shares the
    machine when they used more than a quarter of a core (`BUSY_CORES`)."""

    window_s: float
    cores: float
    busiest: list[OtherProcess]

    @property
    def shared(self) -> bool:
        return self.cores > BUSY_CORES

    def busiest_line(self) -> str:
        """ "java (pid 12) 0.91, python3 (pid 40) 0.20" """
        return ", ".join(f"{p.name or '?'} (pid {p.pid}) {p.cores:.2f}" for p in self.busiest)


class OthersWatch:
    """Other processes' CPU from now on, read at `stop()`: a phase's neighbours. Two snapshots
    of the process table (a few ms each, outside the engine), no thread; what cannot be read
    gives None, never an error.

    An engine whose processes are not this run's descendants (a cluster on this machine that
    the run did not start) would count as another process: the engine's CPU that this run's
    own processes do not account for (`engine_cpu`, read at both ends) is taken back out."""

    def __init__(
        self,
        engine_cpu: Callable[[], float] | None = None,
        table: ProcessTable | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.table = table or ProcessTable()
        self.clock = clock
        self.engine_cpu = engine_cpu
        self._start = clock()
        try:
            self._before: dict[int, ProcCpu] | None = self.table.snapshot()
            self._engine_before = engine_cpu() if engine_cpu else None
            self._machine_before = self._machine()
        except (OSError, psutil.Error):
            self._before = None

    def _machine(self) -> tuple[float, float] | None:
        """(the machine's busy CPU seconds, this run's ended children's), where readable."""
        machine_s = self.table.machine_busy_s()
        return None if machine_s is None else (machine_s, self.table.own_ended_s())

    def stop(self) -> OtherLoad | None:
        if self._before is None:
            return None
        try:
            engine_after = self.engine_cpu() if self.engine_cpu else None
            after = self.table.snapshot()
            ours = self.table.ours()
        except (OSError, psutil.Error):
            return None
        elapsed = self.clock() - self._start
        if elapsed < MIN_WINDOW_S:
            return None
        cores, top = others_used(self._before, after, ours, elapsed)
        outside = 0.0  # the engine's CPU outside this run's processes (a cluster it did not start)
        if engine_after is not None and self._engine_before is not None:
            me = os.getpid()  # the runner itself is not the engine
            own = sum(
                now.cpu_s - then.cpu_s
                for pid, now in after.items()
                if pid in ours
                and pid != me
                and (then := self._before.get(pid))
                and then.created == now.created
            )
            outside = max(0.0, (engine_after - self._engine_before) - own) / elapsed
            cores = round(max(0.0, cores - outside), 3)
        # A process that started and ended within the phase (a test run, a build) is in no
        # snapshot: the machine's own count holds its CPU. What it shows beyond this run's
        # processes and the ones seen is named as such.
        machine = self._machine_others(after, ours, elapsed, outside)
        if machine is not None and machine > cores + ENDED_MARGIN_CORES:
            top = [
                *top,
                OtherProcess(0, "ended processes and the kernel", round(machine - cores, 3)),
            ]
            cores = round(machine, 3)
        return OtherLoad(round(elapsed, 3), cores, top)

    def _machine_others(
        self, after: dict[int, ProcCpu], ours: set[int], elapsed: float, outside: float
    ) -> float | None:
        """Cores the machine was busy with beyond this run's processes: every other process's,
        the ended ones' included (None where the machine's count is not readable)."""
        assert self._before is not None
        now = self._machine()
        if now is None or self._machine_before is None:
            return None
        machine_s = now[0] - self._machine_before[0]
        own = now[1] - self._machine_before[1]  # this run's children that ended meanwhile
        own += sum(used_since(self._before.get(pid), p) for pid, p in after.items() if pid in ours)
        return max(0.0, (machine_s - own) / elapsed - outside)

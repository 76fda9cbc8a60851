"""What a result means and where it ran: the setup (engine configuration, options, versions),
the machine, and the system check (what else the machine was doing), with the lines that show
a check (the run, the table, the report and compare all print them the same way)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

# A cluster's worker: reported by the engine (a lower layer), recorded here in the setup.
from nexmark.engines.capabilities import Worker  # noqa: F401 - re-exported for the schema

UNREADABLE = "unreadable"  # a figure the machine would not tell (a VM without cpufreq)
BUSY_CORES = 0.25  # the bound: another process using more than a quarter of a core


@dataclass
class Machine:
    """The machine a result was measured on.

    Attributes:
        cores: Logical CPUs.
        physical_cores: Physical cores, when known.
        memory_bytes: Total memory, bytes.
        os: Operating system and kernel, e.g. "Linux-6.1.0-x86_64-with-glibc2.36".
        cpu_model: CPU model name.
        python: Python version.
        java: Java runtime version, when the engine runs on one.
    """

    cores: int | None = None
    physical_cores: int | None = None
    memory_bytes: int | None = None
    os: str | None = None
    cpu_model: str | None = None
    python: str | None = None
    java: str | None = None


@dataclass
class MachineSpeed:
    """How fast the machine ran when a run started (nexmark.metrics.speed): a yardstick, so
    that results from two days are compared knowing whether the machine itself changed.

    Attributes:
        core_mb_s: zlib (level 6) on a fixed 1 MiB text-like buffer, one core, MB/s.
        all_cores_mb_s: The same on one thread per CPU at once, summed.
        first_touch_gib_s: Fresh memory written the first time (each page faulted in), GiB/s.
        rewrite_gib_s: The same memory written again, GiB/s.
        seconds: What the measurement took.
    """

    core_mb_s: float | None = None
    all_cores_mb_s: float | None = None
    first_touch_gib_s: float | None = None
    rewrite_gib_s: float | None = None
    seconds: float | None = None


# Fresh memory this much slower than rewritten memory, and under this rate, is a host that
# backs the VM's memory on first touch (bare metal writes fresh pages at several GiB/s).
SLOW_FIRST_TOUCH_GIB_S = 1.0
SLOW_FIRST_TOUCH_RATIO = 4.0
# Every core together below this share of (one core x CPUs): cores that do not add up.
CORES_ADD_UP = 0.75
# Two runs whose single-core speed differs by more than this ran on a different machine.
SPEED_DIFFERS = 0.10


@dataclass
class OtherProcess:
    """A process, not of this run, that used CPU in a system check's window.

    Attributes:
        pid: Its process id.
        name: Its name, as the process table shows it.
        cores: Its CPU seconds in the window / the window.
    """

    pid: int
    name: str | None = None
    cores: float | None = None


@dataclass
class SystemCheck:
    """The state of the machine at one instant (nexmark.metrics.system), before the run or
    before one query: what else the machine was doing.

    Attributes:
        at: When the check ended, unix seconds.
        load_avg: The load average over 1, 5 and 15 minutes (null: unreadable).
        cpus: Logical CPUs.
        governor: The CPU frequency scaling governor(s), or "unreadable".
        boost: "on" or "off" (frequency boost / turbo), or "unreadable".
        window_s: Seconds over which other processes' CPU was measured.
        other_cores: CPU seconds of other processes in the window / the window (processes
            other than this one and its descendants, which include the engine's).
        other_processes: The busiest of them (up to three).
        warn_cores: The bound above which the run warned (a quarter of a core by default).
        note: Why a figure is missing (a window too short, an unreadable process table).
        speed: How fast the machine ran (measured before the run only; null before a query).
    """

    at: float | None = None
    load_avg: list[float] | None = None
    cpus: int | None = None
    governor: str | None = None
    boost: str | None = None
    window_s: float | None = None
    other_cores: float | None = None
    other_processes: list[OtherProcess] = field(default_factory=list)
    warn_cores: float | None = None
    note: str | None = None
    speed: MachineSpeed | None = None


@dataclass
class Setup:
    """What a result means: the effective engine configuration, the run options, the machine.

    Attributes:
        engine_target: Where the engine ran: "embedded", "remote http://host:8081", ...
        engine_config: The engine's full effective configuration (string keys and values).
        options: The run's protocol options (events, warm-up fraction, checkpoint interval, ...).
        versions: Component versions: engine, its client library, nexmark.
        machine: The machine.
        system_check: What else the machine was doing before the run (load, other
            processes' CPU, frequency governor and boost); context, not setup: `compare`
            does not count it as a setup difference.
        workers: On a cluster, every worker the engine listed when the run started (empty:
            the engine runs in one process here, the machine is the setup).
    """

    engine_target: str | None = None
    engine_config: dict[str, str] = field(default_factory=dict)
    options: dict[str, Any] = field(default_factory=dict)
    versions: dict[str, str] = field(default_factory=dict)
    machine: Machine = field(default_factory=Machine)
    system_check: SystemCheck = field(default_factory=SystemCheck)
    workers: list[Worker] = field(default_factory=list)


def workers_line(workers: list[Worker]) -> str:
    """ "2 workers: tm-1 (localhost, 1 slot, 1.0 GiB), tm-2 (...)": who ran a cluster's jobs."""
    described = []
    for w in workers:
        facts = [w.host or "?", f"{w.slots} slot{'s' if w.slots != 1 else ''}"]
        if w.memory_bytes:
            facts.append(f"{w.memory_bytes / (1 << 30):.1f} GiB")
        if w.removed:
            facts.append(f"removed: {w.removed}")
        described.append(f"{w.id} ({', '.join(facts)})")
    plural = "s" if len(workers) != 1 else ""
    return f"{len(workers)} worker{plural}: " + ", ".join(described)


def busy(check: SystemCheck) -> bool:
    """Whether other processes used more than the bound (a quarter of a core) in the window."""
    bound = check.warn_cores if check.warn_cores is not None else BUSY_CORES
    return check.other_cores is not None and check.other_cores > bound


def busiest(check: SystemCheck) -> str:
    """ "java (pid 12) 0.91, python3 (pid 40) 0.20": the busiest other processes."""
    return ", ".join(
        f"{p.name or '?'} (pid {p.pid}) {p.cores:.2f}" for p in check.other_processes if p.cores
    )


def warning_line(check: SystemCheck, before: str) -> str | None:
    """The warning to show when other processes were busy, else None."""
    if not busy(check):
        return None
    who = busiest(check)
    return (
        f"warning: other processes used {check.other_cores:.2f} cores in the "
        f"{check.window_s:.1f} s before {before}" + (f" ({who})" if who else "")
    )


def summary_line(check: SystemCheck) -> str:
    """One line: "load 0.52 0.40 0.31 on 2 CPUs, governor unreadable, boost unreadable, other
    processes 0.03 cores over 2.0 s"."""
    load = " ".join(f"{v:.2f}" for v in check.load_avg) if check.load_avg else UNREADABLE
    if check.other_cores is not None:
        other = f"other processes {check.other_cores:.2f} cores over {check.window_s:.1f} s"
    else:
        other = f"other processes not measured ({check.note or 'no window'})"
    line = (
        f"load {load} on {check.cpus or '?'} CPUs, governor {check.governor or '?'}, "
        f"boost {check.boost or '?'}, {other}"
    )
    return line + (f"; {speed_line(check.speed)}" if check.speed is not None else "")


def _figure(value: float | None, unit: str = "") -> str:
    return "?" if value is None else f"{value:g}{unit}"


def speed_line(speed: MachineSpeed) -> str:
    """ "speed: zlib 61.2 MB/s on a core, 118.4 on all; memory 0.42 GiB/s written fresh, 6.1
    again" (the yardstick: docs/results.md, "System check")."""
    return (
        f"speed: zlib {_figure(speed.core_mb_s, ' MB/s')} on a core, "
        f"{_figure(speed.all_cores_mb_s)} on all; memory {_figure(speed.first_touch_gib_s)} "
        f"GiB/s written fresh, {_figure(speed.rewrite_gib_s)} again"
    )


def speed_warnings(speed: MachineSpeed | None, cpus: int | None) -> list[str]:
    """What in the machine's speed makes its results hard to compare with another day's."""
    if speed is None:
        return []
    lines = []
    first, again = speed.first_touch_gib_s, speed.rewrite_gib_s
    if (
        first
        and again
        and first < SLOW_FIRST_TOUCH_GIB_S
        and again > SLOW_FIRST_TOUCH_RATIO * first
    ):
        lines.append(
            f"warning: fresh memory is slow on this machine ({first:g} GiB/s written the first "
            f"time, {again:g} again): its host backs the memory when a page is first touched, "
            "which every JVM that starts or grows pays for; a result compares with another "
            "day's only at the same figures"
        )
    one, together = speed.core_mb_s, speed.all_cores_mb_s
    if one and together and cpus and cpus > 1 and together < CORES_ADD_UP * one * cpus:
        lines.append(
            f"warning: the {cpus} CPUs together ran {together / one:.2f} times one "
            f"({together:g} against {one:g} MB/s): they are not {cpus} full cores (siblings "
            "of one core, or a CPU quota); the engine's parallelism counts them as full"
        )
    return lines


def speed_difference(base: MachineSpeed | None, new: MachineSpeed | None) -> str | None:
    """How two runs' machines differed in speed, when by more than SPEED_DIFFERS, else None."""
    if base is None or new is None or not base.core_mb_s or not new.core_mb_s:
        return None
    change = new.core_mb_s / base.core_mb_s - 1
    if abs(change) <= SPEED_DIFFERS:
        return None
    return (
        f"the machine ran at another speed: zlib {base.core_mb_s:g} MB/s on a core for base, "
        f"{new.core_mb_s:g} for new ({change:+.0%}); every query's throughput moves with it"
    )

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
    return (
        f"load {load} on {check.cpus or '?'} CPUs, governor {check.governor or '?'}, "
        f"boost {check.boost or '?'}, {other}"
    )

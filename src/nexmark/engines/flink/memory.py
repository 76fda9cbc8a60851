"""The embedded TaskManager's memory, sized as a production TaskManager on this machine would be.

Flink's MiniCluster ignores `taskmanager.memory.process.size` and, unless told otherwise, gives
its TaskManager 128 MB of managed memory (RocksDB's block cache and write buffers, for every
slot together) and 64 MB of network memory, whatever the machine. We therefore do Flink's own
derivation for a standalone TaskManager here (the same options, defaults and order as Flink 2.3's
`TaskExecutorProcessUtils`), pass the resulting absolute sizes to the MiniCluster, and size the
gateway JVM (which hosts the MiniCluster) to match: `-Xmx` = framework heap + task heap,
`-XX:MaxDirectMemorySize` = framework off-heap + task off-heap + network + the JobManager's
off-heap. RocksDB allocates the managed memory natively, outside both limits.

The budget, `taskmanager.memory.process.size`, may be the placeholder `machine`:
min(2/3 of this machine's memory, 8 GiB per slot). 8 GiB per one-slot TaskManager is what the
reference Nexmark runner gives; 2/3 leaves the rest of the machine to the OS, the page cache of
the dataset files, the Python harness and the JVM's own overheads beyond Flink's estimate.
Every option the user sets explicitly wins over what is derived.
"""

from __future__ import annotations

from dataclasses import dataclass

from nexmark.engines.flink.rest import FlinkRest
from nexmark.errors import UsageError

MIB = 1 << 20
GIB = 1 << 30
MACHINE = "machine"  # the placeholder: sized from this machine's memory and the slots
MACHINE_SHARE = 2 / 3
PER_SLOT = 8 * GIB

TM = "taskmanager.memory."
PROCESS = TM + "process.size"
FLINK_SIZE = TM + "flink.size"
FRAMEWORK_HEAP = TM + "framework.heap.size"
FRAMEWORK_OFF_HEAP = TM + "framework.off-heap.size"
TASK_HEAP = TM + "task.heap.size"
TASK_OFF_HEAP = TM + "task.off-heap.size"
MANAGED = TM + "managed.size"
MANAGED_FRACTION = TM + "managed.fraction"
NETWORK_MIN = TM + "network.min"
NETWORK_MAX = TM + "network.max"
NETWORK_FRACTION = TM + "network.fraction"
METASPACE = TM + "jvm-metaspace.size"
OVERHEAD_MIN = TM + "jvm-overhead.min"
OVERHEAD_MAX = TM + "jvm-overhead.max"
OVERHEAD_FRACTION = TM + "jvm-overhead.fraction"
JM_OFF_HEAP = "jobmanager.memory.off-heap.size"

# Flink 2.3's defaults of the options above (TaskManagerOptions, JobManagerOptions).
FLINK_DEFAULTS = {
    FRAMEWORK_HEAP: "128m",
    FRAMEWORK_OFF_HEAP: "128m",
    TASK_OFF_HEAP: "0",
    MANAGED_FRACTION: "0.4",
    NETWORK_MIN: "64m",
    NETWORK_MAX: str((1 << 63) - 1),
    NETWORK_FRACTION: "0.1",
    METASPACE: "256m",
    OVERHEAD_MIN: "192m",
    OVERHEAD_MAX: "1g",
    OVERHEAD_FRACTION: "0.1",
    JM_OFF_HEAP: "128m",
}

# The cluster's memory options: given to the embedded cluster at its start, never to a job
# (nor to a remote cluster, which keeps its own sizing).
SIZING_KEYS = frozenset({PROCESS, FLINK_SIZE, TASK_HEAP, MANAGED, *FLINK_DEFAULTS})

_UNITS = {
    "": 1,
    "b": 1,
    "bytes": 1,
    "k": 1 << 10,
    "kb": 1 << 10,
    "kibibytes": 1 << 10,
    "m": MIB,
    "mb": MIB,
    "mebibytes": MIB,
    "g": GIB,
    "gb": GIB,
    "gibibytes": GIB,
    "t": 1 << 40,
    "tb": 1 << 40,
    "tebibytes": 1 << 40,
}


def parse_size(text: str, key: str = "memory size") -> int:
    """Bytes of a Flink memory size ("4g", "128 mb", "6335076856b", "1024"); units are binary."""
    value = str(text).strip().lower()
    digits = len(value) - len(value.lstrip("0123456789"))
    number, unit = value[:digits], value[digits:].strip()
    if not number or unit not in _UNITS:
        raise UsageError(f"{key}: not a memory size: {text!r} (e.g. 4g, 512m)")
    return int(number) * _UNITS[unit]


def format_size(size: int) -> str:
    """A Flink memory size: whole mebibytes as "Nm", anything else in bytes."""
    return f"{size // MIB}m" if size % MIB == 0 else f"{size}b"


def _fraction(text: str, key: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise UsageError(f"{key}: not a fraction: {text!r}") from None
    if not 0.0 <= value < 1.0:
        raise UsageError(f"{key}: a fraction in [0, 1) is needed, got {text!r}")
    return value


def _mib_floor(size: float) -> int:
    return int(size) // MIB * MIB


def _clamp(value: int, low: int, high: int) -> int:
    return max(low, min(high, value))


def machine_budget(machine_memory: int, slots: int) -> int:
    """The process size `machine` stands for: min(2/3 of the memory, 8 GiB per slot), in MiB."""
    return _mib_floor(min(machine_memory * MACHINE_SHARE, PER_SLOT * max(1, slots)))


@dataclass(frozen=True)
class TaskManagerMemory:
    """One TaskManager's memory, in bytes (Flink's memory model)."""

    process: int
    metaspace: int
    overhead: int
    framework_heap: int
    framework_off_heap: int
    task_heap: int
    task_off_heap: int
    managed: int
    network: int
    jobmanager_off_heap: int

    @property
    def flink(self) -> int:
        """Total Flink memory: everything but metaspace and overhead."""
        return self.process - self.metaspace - self.overhead

    @property
    def heap(self) -> int:
        return self.framework_heap + self.task_heap

    @property
    def direct(self) -> int:
        off_heap = self.framework_off_heap + self.task_off_heap + self.jobmanager_off_heap
        return off_heap + self.network

    def cluster_options(self) -> dict[str, str]:
        """What the MiniCluster is given: the absolute sizes (it ignores the process size)."""
        return {
            FRAMEWORK_HEAP: format_size(self.framework_heap),
            FRAMEWORK_OFF_HEAP: format_size(self.framework_off_heap),
            TASK_HEAP: format_size(self.task_heap),
            TASK_OFF_HEAP: format_size(self.task_off_heap),
            MANAGED: format_size(self.managed),
            NETWORK_MIN: format_size(self.network),
            NETWORK_MAX: format_size(self.network),
        }

    def jvm_args(self) -> list[str]:
        """Heap and direct-memory limits of the JVM that hosts the MiniCluster."""
        return [f"-Xmx{self.heap // MIB}m", f"-XX:MaxDirectMemorySize={self.direct // MIB}m"]

    def recorded(self) -> dict[str, str]:
        """The sizing as recorded with a result: every size and the budget they come from."""
        return {
            **self.cluster_options(),
            PROCESS: format_size(self.process),
            METASPACE: format_size(self.metaspace),
            OVERHEAD_MIN: format_size(self.overhead),
            OVERHEAD_MAX: format_size(self.overhead),
            JM_OFF_HEAP: format_size(self.jobmanager_off_heap),
        }


def size_taskmanager(flink: dict[str, str], slots: int, machine_memory: int) -> TaskManagerMemory:
    """The embedded TaskManager's memory from the Flink options, as Flink derives a real one's.

    Args:
        flink: The Flink options (explicit sizes win over everything derived).
        slots: Its task slots (the `machine` budget is at most 8 GiB per slot).
        machine_memory: This machine's memory in bytes.

    Order (Flink's): process size -> metaspace and overhead (a fraction of the process size,
    clamped) -> total Flink memory -> managed (a fraction of it) and network (a fraction,
    clamped) -> task heap = what is left after the framework's and the task's off-heap.
    Fraction-derived sizes are rounded down to whole MiB.
    """
    conf = {**FLINK_DEFAULTS, **flink}

    def size(key: str) -> int:
        return parse_size(conf[key], key)

    metaspace = size(METASPACE)
    process, overhead, total = _process_overhead_total(
        flink, conf, metaspace, slots, machine_memory
    )
    if MANAGED in flink:
        managed = size(MANAGED)
    else:
        managed = _mib_floor(total * _fraction(conf[MANAGED_FRACTION], MANAGED_FRACTION))
    network_share = _mib_floor(total * _fraction(conf[NETWORK_FRACTION], NETWORK_FRACTION))
    network = _clamp(network_share, size(NETWORK_MIN), size(NETWORK_MAX))
    framework_heap, framework_off_heap = size(FRAMEWORK_HEAP), size(FRAMEWORK_OFF_HEAP)
    task_off_heap = size(TASK_OFF_HEAP)
    rest = framework_heap + framework_off_heap + task_off_heap + managed + network
    task_heap = size(TASK_HEAP) if TASK_HEAP in flink else total - rest
    if task_heap <= 0 or rest + task_heap > total:
        raise UsageError(
            f"the TaskManager's memory does not fit its {format_size(total)} of Flink memory "
            f"(process {format_size(process)}): managed {format_size(managed)}, network "
            f"{format_size(network)}, framework and task off-heap, framework heap "
            f"{format_size(framework_off_heap + task_off_heap + framework_heap)}, task heap "
            f"{format_size(task_heap)}; set a larger {PROCESS} or smaller parts"
        )
    return TaskManagerMemory(
        process=process,
        metaspace=metaspace,
        overhead=overhead,
        framework_heap=framework_heap,
        framework_off_heap=framework_off_heap,
        task_heap=task_heap,
        task_off_heap=task_off_heap,
        managed=managed,
        network=network,
        jobmanager_off_heap=size(JM_OFF_HEAP),
    )


def _process_overhead_total(
    flink: dict[str, str], conf: dict[str, str], metaspace: int, slots: int, machine_memory: int
) -> tuple[int, int, int]:
    """The process size, its JVM overhead and the total Flink memory left inside it: from an
    explicit total Flink memory (the process is then derived) or from the process size."""

    def size(key: str) -> int:
        return parse_size(conf[key], key)

    low, high = size(OVERHEAD_MIN), size(OVERHEAD_MAX)
    overhead_fraction = _fraction(conf[OVERHEAD_FRACTION], OVERHEAD_FRACTION)
    if FLINK_SIZE in flink:
        total = size(FLINK_SIZE)  # Flink's own rule: the overhead is a fraction of the process
        share = (total + metaspace) * overhead_fraction / (1 - overhead_fraction)
        overhead = _clamp(_mib_floor(share), low, high)
        return total + metaspace + overhead, overhead, total
    value = conf.get(PROCESS, MACHINE)
    process = (
        machine_budget(machine_memory, slots)
        if value.strip() == MACHINE
        else parse_size(value, PROCESS)
    )
    overhead = _clamp(_mib_floor(process * overhead_fraction), low, high)
    total = process - metaspace - overhead
    if total <= 0:
        raise UsageError(
            f"{PROCESS} = {value} leaves no Flink memory after "
            f"{format_size(metaspace)} metaspace and {format_size(overhead)} overhead"
        )
    return process, overhead, total


def taskmanager_facts(rest: FlinkRest) -> dict[str, str]:
    """What each TaskManager of a running cluster really has, from its REST API.

    Keys `taskmanager.N:FIELD` (N in the order of the TaskManagers' ids), FIELD from
    `/taskmanagers/<id>`: `slotsNumber`, `memoryConfiguration.*` (bytes), `totalResource.*`
    (the slots' resources together; memory in MiB) and `hardware.*` (bytes; `freeMemory` is the
    JVM's maximum heap). `freeResource` is left out: it changes as jobs take slots.
    """
    managers = sorted(rest.get("/taskmanagers").get("taskmanagers", ()), key=lambda t: t["id"])
    facts = {"taskmanagers": str(len(managers))}
    for index, manager in enumerate(managers):
        detail = rest.get(f"/taskmanagers/{manager['id']}")
        prefix = f"taskmanager.{index}:"
        facts[prefix + "slotsNumber"] = str(detail.get("slotsNumber"))
        for group in ("memoryConfiguration", "totalResource", "hardware"):
            for name, value in (detail.get(group) or {}).items():
                if not isinstance(value, dict):  # extendedResources
                    facts[f"{prefix}{group}.{name}"] = str(value)
    return facts

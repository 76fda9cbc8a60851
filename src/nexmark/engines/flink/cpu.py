"""CPU seconds used by a remote Flink cluster, from its own metrics (the local JVMs' process
trees: `engines.support`); and the workers a cluster lists (the result's setup names each one)."""

from __future__ import annotations

import contextlib
import re

from nexmark.engines.capabilities import Worker
from nexmark.engines.flink.rest import FlinkRest
from nexmark.errors import EngineError

CPU_METRIC = "Status.JVM.CPU.Time"  # nanoseconds of CPU time of one JVM
JOBMANAGER = "jobmanager"


def _metric(entries: object) -> float | None:
    for entry in entries or ():
        if entry.get("id") == CPU_METRIC:
            with contextlib.suppress(TypeError, ValueError):
                return float(entry["value"])
    return None


def remote_cpu_seconds(rest: FlinkRest) -> float:
    """Summed JVM CPU time of every TaskManager and the JobManager, from the REST metrics."""
    total_ns = rest.metric_sum("/taskmanagers/metrics", CPU_METRIC) or 0.0
    total_ns += _metric(rest.get("/jobmanager/metrics", get=CPU_METRIC)) or 0.0
    return total_ns / 1e9


class RemoteCpu:
    """Running total of a cluster's JVM CPU: the JobManager and each TaskManager, read one by
    one from the REST metrics and remembered, so a TaskManager that dies (killed in a
    failover, lost with its host) keeps what it had used up to its last reading: the sum over
    the live ones alone would go back."""

    def __init__(self, rest: FlinkRest) -> None:
        self.rest = rest
        self.last_ns: dict[str, float] = {}  # process id -> its last CPU time read

    def seconds(self) -> float:
        ids = [t["id"] for t in self.rest.get("/taskmanagers").get("taskmanagers", ())]
        paths = {JOBMANAGER: "/jobmanager/metrics"}
        paths.update({tm: f"/taskmanagers/{tm}/metrics" for tm in ids})
        for process, path in paths.items():
            try:
                value = _metric(self.rest.get(path, get=CPU_METRIC))
            except EngineError:  # gone between the listing and the read: its last value stays
                continue
            if value is not None:
                self.last_ns[process] = max(value, self.last_ns.get(process, 0.0))
        return sum(self.last_ns.values()) / 1e9


_HOST = re.compile(r"@([^:/]+)[:/]")  # pekko.tcp://flink@host:port/user/rpc/taskmanager_0


def workers(rest: FlinkRest) -> list[Worker]:
    """Every TaskManager the cluster lists: id, host, slots, CPUs, process memory."""
    found = []
    for tm in sorted(rest.get("/taskmanagers").get("taskmanagers", ()), key=lambda t: t["id"]):
        host = _HOST.search(tm.get("path") or "")
        hardware = tm.get("hardware") or {}
        memory = (tm.get("memoryConfiguration") or {}).get("totalProcessMemory")
        found.append(
            Worker(
                id=str(tm["id"]),
                kind="taskmanager",
                host=host.group(1) if host else None,
                slots=tm.get("slotsNumber"),
                cpus=hardware.get("cpuCores"),
                memory_bytes=int(memory) if memory else None,
            )
        )
    return found

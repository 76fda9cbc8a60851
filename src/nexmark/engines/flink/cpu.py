"""CPU seconds used by Flink: local JVM process trees, or a remote cluster's own metrics."""

from __future__ import annotations

import psutil

from nexmark.engines.flink.rest import FlinkRest

CPU_METRIC = "Status.JVM.CPU.Time"  # nanoseconds of CPU time of one JVM


def process_tree_cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of process `pid` and all of its live descendants."""
    try:
        root = psutil.Process(pid)
        processes = [root, *root.children(recursive=True)]
    except psutil.NoSuchProcess:
        return 0.0
    total = 0.0
    for process in processes:
        try:
            times = process.cpu_times()
        except psutil.NoSuchProcess:
            continue
        total += times.user + times.system
    return total


def remote_cpu_seconds(rest: FlinkRest) -> float:
    """Summed JVM CPU time of every TaskManager and the JobManager, from the REST metrics."""
    total_ns = rest.metric_sum("/taskmanagers/metrics", CPU_METRIC) or 0.0
    for entry in rest.get("/jobmanager/metrics", get=CPU_METRIC) or ():
        if entry.get("id") == CPU_METRIC:
            total_ns += float(entry["value"])
    return total_ns / 1e9

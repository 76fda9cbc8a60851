"""Shared by the Kafka tests: the tiny load's size, and finding a broker's JVMs."""

from __future__ import annotations

from pathlib import Path

import psutil

EVENTS = 20_000
PARTITIONS = 2


def kafka_jvms(work_dir: Path) -> list[psutil.Process]:
    """Live JVMs running kafka.Kafka from `work_dir` (ours: the path is the test's own)."""
    found = []
    for proc in psutil.process_iter(["cmdline"]):
        cmd = proc.info["cmdline"] or []
        if "kafka.Kafka" in cmd and any(str(work_dir) in part for part in cmd):
            found.append(proc)
    return found

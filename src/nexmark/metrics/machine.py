"""Describe the machine a result was measured on (pyperf collects the same automatically)."""

from __future__ import annotations

import os
import platform
from pathlib import Path

import psutil

from nexmark.java import java_version
from nexmark.results.setup import Machine


def cpu_model() -> str | None:
    """The CPU's model name, from /proc/cpuinfo on Linux, else what `platform` knows."""
    try:
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8").splitlines():
            key, _, value = line.partition(":")
            if key.strip() in ("model name", "Model", "cpu model") and value.strip():
                return value.strip()
    except OSError:
        pass
    return platform.processor() or None


def collect_machine(java: str | os.PathLike[str] | None = None) -> Machine:
    """Cores, memory, OS, CPU model and Python (and Java, given the engine's executable).

    Args:
        java: The engine's `java` executable; None leaves `java` unset (no JVM involved).
    """
    return Machine(
        cores=os.cpu_count(),
        physical_cores=psutil.cpu_count(logical=False),
        memory_bytes=psutil.virtual_memory().total,
        os=platform.platform(),
        cpu_model=cpu_model(),
        python=platform.python_version(),
        java=java_version(java) if java is not None else None,
    )

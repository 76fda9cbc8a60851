"""How fast `nexmark generate` writes a dataset: events/s in total and per core, and MB/s.

First formats 10M events (by default) in memory only, then generates them into a temporary
directory for each worker count, removed afterwards (each `--repeat` times; the run with
the least CPU time is shown, with the spread). CPU seconds (this process and its
workers) are reported next to wall time, with the load average, because on a shared machine
wall time alone says little. With N workers, this process writes files too and N - 1
are spawned; each spawned one spends about a second starting (imports, per-seed tables,
loading the compiled loops), which is counted.

    .venv/bin/python benchmarks/bench_generator.py [--events 10M] [--workers 1,2] [--files 2]
        [--repeat 3] [--formats parquet,csv]
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import tempfile
import time
from pathlib import Path

from nexmark.workload.csvtext import CsvFormatter
from nexmark.workload.dataset import DatasetParams
from nexmark.workload.sizes import parse_count
from nexmark.workload.writer import CHUNK_EVENTS, ensure_dataset


def cpu_seconds() -> float:
    """User + system CPU time of this process and of its finished children (the workers)."""
    total = 0.0
    for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN):
        usage = resource.getrusage(who)
        total += usage.ru_utime + usage.ru_stime
    return total


def run_once(events: int, workers: int, files: int, root: Path, file_format: str) -> dict:
    params = DatasetParams(events=events, files=files, format=file_format)
    out = Path(tempfile.mkdtemp(prefix="bench-", dir=root)) / "ds"
    load_before = os.getloadavg()[0]
    cpu0, t0 = cpu_seconds(), time.perf_counter()
    try:
        ds = ensure_dataset(params, out, workers=workers, show_progress=False)
        wall, cpu = time.perf_counter() - t0, cpu_seconds() - cpu0
        size = ds.bytes
    finally:
        shutil.rmtree(out.parent, ignore_errors=True)
    return {
        "workers": workers,
        "wall": wall,
        "cpu": cpu,
        "events_per_s": events / wall,
        "per_core": events / wall / workers,
        "per_cpu_second": events / cpu,
        "mb_per_s": size / wall / 1e6,
        "bytes": size,
        "load": (load_before, os.getloadavg()[0]),
    }


def in_memory(events: int) -> dict:
    """CSV text produced in memory by one process, nothing written: comparable with the
    reference generator's in-memory figure."""
    config = DatasetParams(events=events, files=1).generator_config
    formatter = CsvFormatter(config)
    formatter.format(0, 1000)  # build the per-seed tables and load the compiled loop first
    cpu0, t0, size = cpu_seconds(), time.perf_counter(), 0
    for a in range(0, events, CHUNK_EVENTS):
        size += len(formatter.format(a, min(events, a + CHUNK_EVENTS)))
    wall, cpu = time.perf_counter() - t0, cpu_seconds() - cpu0
    return {"wall": wall, "cpu": cpu, "bytes": size}


def best(runs: list[dict]) -> dict:
    """The run with the least CPU time: on a shared machine the others were slowed down by
    someone else (their spread is printed too)."""
    return min(runs, key=lambda r: r["cpu"])


def spread(runs: list[dict], events: int) -> str:
    rates = sorted(events / r["cpu"] / 1e6 for r in runs)
    return f"per CPU-second over {len(runs)} runs: {rates[0]:.2f}..{rates[-1]:.2f} M"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", default="10M")
    parser.add_argument("--workers", default="1,2", help="comma-separated worker counts")
    parser.add_argument("--files", type=int, default=2, help="files per part")
    parser.add_argument("--repeat", type=int, default=3, help="runs of each; the best is shown")
    parser.add_argument("--dir", default=None, help="where to write (default: system temp)")
    parser.add_argument("--formats", default="parquet,csv", help="dataset formats to write")
    args = parser.parse_args()
    events = parse_count(args.events, "--events")
    root = Path(args.dir or tempfile.gettempdir())
    print(
        f"{events:,} events, {args.files} files per part, {os.cpu_count()} cores, in {root}, "
        f"best of {args.repeat}"
    )
    runs = [in_memory(events) for _ in range(args.repeat)]
    m = best(runs)
    print(
        f"in memory, 1 process: {m['wall']:.1f} s wall, {m['cpu']:.1f} s CPU | "
        f"{events / m['wall'] / 1e6:.2f} M events/s, {events / m['cpu'] / 1e6:.2f} M per "
        f"CPU-second | load avg {os.getloadavg()[0]:.1f} | {spread(runs, events)}"
    )
    cases = [(f, int(w)) for f in args.formats.split(",") for w in args.workers.split(",")]
    for file_format, workers in cases:
        runs = [
            run_once(events, workers, args.files, root, file_format) for _ in range(args.repeat)
        ]
        r = best(runs)
        print(
            f"{file_format:>7} workers={r['workers']}: {r['wall']:.1f} s wall, "
            f"{r['cpu']:.1f} s CPU | "
            f"{r['events_per_s'] / 1e6:.2f} M events/s, {r['per_core'] / 1e6:.2f} M/s per core "
            f"(wall), {r['per_cpu_second'] / 1e6:.2f} M per CPU-second | "
            f"{r['mb_per_s']:.0f} MB/s, {r['bytes'] / 1e9:.2f} GB | "
            f"load avg {r['load'][0]:.1f} -> {r['load'][1]:.1f} | {spread(runs, events)}"
        )


if __name__ == "__main__":
    main()

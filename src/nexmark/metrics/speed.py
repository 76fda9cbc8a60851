"""How fast this machine runs today: a fixed piece of work timed before a run.

Two results are comparable only if their machine ran at the same speed, and a VM's does not:
its host shares its cores and may back its memory only when a page is first touched (on the
2-core VM of docs/results/, one day's quick suite ran at 40% of another's on the same code).
The figures are a yardstick recorded with the run, not a score:

- a core's speed: zlib (level 6) compressing a fixed, text-like 1 MiB buffer a few times, in
  MB/s (zlib is C code, the same whichever Python runs it);
- every core at once: the same on one thread per CPU together (zlib releases the GIL), summed;
  below the single core's rate times the CPUs when cores are SMT siblings or capped by a quota;
- memory written the first time (fresh pages, each faulted in) and written again: a host that
  backs a VM's memory lazily makes the first many times slower, which every JVM that starts or
  grows its heap pays.

It takes about a second on a slow 2-core VM (0.8-1.0 s measured there), and never fails a run:
what cannot be measured is None.
"""

from __future__ import annotations

import contextlib
import ctypes
import mmap
import os
import threading
import time
import zlib

from nexmark.results.setup import MachineSpeed

BUFFER_BYTES = 1 << 20
TRIES = 4  # compressions per thread, timed together (about 0.25 s on a slow core)
TOUCH_BYTES = 128 << 20  # fresh memory written: large against caches, short on slow hosts


def _buffer() -> bytes:
    """1 MiB of text-like bytes, the same on every machine: numbers and words, as events are."""
    words = (b"auction", b"bid", b"person", b"seller", b"category", b"price", b"url")
    lines = []
    size, i = 0, 0
    while size < BUFFER_BYTES:
        line = b"%d %s %d\n" % ((i * 2654435761) % 1000003, words[i % len(words)], i % 977)
        lines.append(line)
        size += len(line)
        i += 1
    return b"".join(lines)[:BUFFER_BYTES]


def compress_mb_s(data: bytes, threads: int) -> float:
    """MB compressed per second by `threads` threads compressing `data` TRIES times each, at
    once (after one compression each, unmeasured: the first call's cost is not the core's)."""
    ends = [0.0] * threads
    barrier = threading.Barrier(threads + 1)

    def work(i: int) -> None:
        zlib.compress(data, 6)
        barrier.wait()
        for _ in range(TRIES):
            zlib.compress(data, 6)
        ends[i] = time.perf_counter()

    workers = [threading.Thread(target=work, args=(i,), daemon=True) for i in range(threads)]
    for t in workers:
        t.start()
    barrier.wait()
    start = time.perf_counter()
    for t in workers:
        t.join()
    # The work is fixed, so the slowest thread's end is when all of it was done.
    return round(threads * TRIES * len(data) / (max(ends) - start) / 1e6, 1)


def memory_gib_s(size: int = TOUCH_BYTES) -> tuple[float, float]:
    """(first write, second write) of `size` bytes of fresh anonymous memory, GiB/s."""
    area = mmap.mmap(-1, size)
    view = ctypes.c_char.from_buffer(area)
    try:
        address = ctypes.addressof(view)
        timings = []
        for fill in (1, 2):
            start = time.perf_counter()
            ctypes.memset(address, fill, size)
            timings.append(time.perf_counter() - start)
    finally:
        del view  # the buffer's export must end before the map closes
        area.close()
    first, again = (round(size / (1 << 30) / t, 2) for t in timings)
    return first, again


def measure_speed() -> MachineSpeed:
    start = time.perf_counter()
    speed = MachineSpeed()
    data = _buffer()
    # A figure that cannot be measured (no thread to start, no memory to map) is missing,
    # not a failure.
    with contextlib.suppress(RuntimeError, zlib.error):
        speed.core_mb_s = compress_mb_s(data, 1)
        speed.all_cores_mb_s = compress_mb_s(data, os.cpu_count() or 1)
    with contextlib.suppress(OSError, ValueError, MemoryError):
        speed.first_touch_gib_s, speed.rewrite_gib_s = memory_gib_s()
    speed.seconds = round(time.perf_counter() - start, 2)
    return speed

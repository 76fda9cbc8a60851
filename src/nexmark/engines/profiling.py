"""A CPU profile of the JVM that does a job's work: async-profiler loaded into it, started
before the scored phase's restore and stopped after its end checkpoint (`nexmark run
--profile`), written as an interactive flame graph and summarised as shares of the samples.

The profiler runs inside the JVM (its Java API through the engine's py4j gateway), so nothing
attaches from outside: no `jcmd`, no dynamic agent. An engine that can reach the JVM doing the
work (Flink's embedded cluster, Spark's local driver and executors) puts the pinned jar on that
JVM's class path before it starts; one whose work runs elsewhere (a remote cluster, worker
processes of their own) says why it cannot, and the run records that instead.

The summary answers "where did the cores go" at a glance: each sample's stack is given to the
kind of work of the frame nearest its leaf that names one (the state backend, serialization,
the file reader, ...), and the hottest frames are listed by their own (leaf) samples.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from nexmark.maven import PinnedJars

JARS = PinnedJars(Path(__file__).with_name("profiler.toml"), "the profiler's")
GROUP = "async-profiler"
JAVA_CLASS = "one.profiler.AsyncProfiler"
# 10 ms between samples of a busy thread: about 200 samples per second on 2 busy cores, enough
# for a minute-long phase to show every operator above 1%. What it costs: docs/profiling.md
# (q5 measured 5% slower profiled, at 10 ms and at 20 ms alike, within the runs' own noise).
DEFAULT_INTERVAL_MS = 10
# The CPU clock through perf_events first; where a container forbids them, the interval timer
# (the same samples of running threads, without kernel frames).
EVENTS = ("cpu", "itimer")
TOP_FRAMES = 10

# The kinds of work a stack is given to, by the frame nearest its leaf that matches one. The
# order decides only when one frame matches two.
KINDS: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (kind, re.compile(pattern, re.IGNORECASE))
    for kind, pattern in (
        (
            "garbage collection",
            r"G1|GCTask|ConcurrentGC|ConcurrentMark|GangWorker|WorkerThread::run",
        ),
        ("JIT compilation", r"CompileBroker|C2Compiler|Compiler::|Compile::|CompilerThread"),
        ("state backend", r"rocksdb|forst|HeapKeyedStateBackend|StateTable|state\.v2"),
        ("serialization", r"serializ|kryo|UnsafeRow|BinaryRow|RowData.*Writer"),
        ("file reading", r"parquet|avro|orc\.|CsvReader|FileSource|hadoop/fs|s3a"),
        ("Kafka client", r"org/apache/kafka|org\.apache\.kafka"),
        ("checkpointing", r"checkpoint|snapshot"),
        ("network and exchange", r"netty|RecordWriter|ResultPartition|InputGate|shuffle"),
    )
)
OTHER = "other"


def jars(fetch: bool = True) -> list[Path]:
    """The profiler's jar (fetched from Maven Central when missing and `fetch`)."""
    return JARS.ensure([GROUP], fetch=fetch)


@dataclass
class ProfileSummary:
    """What a profile's samples say: the shares of each kind of work and of the hottest frames
    (their own samples), out of `samples`."""

    samples: int
    kinds: dict[str, float] = field(default_factory=dict)
    top_frames: list[tuple[str, float]] = field(default_factory=list)


def kind_of(stack: list[str]) -> str:
    """The kind of work of the frame nearest the leaf that names one, else `OTHER`."""
    for frame in reversed(stack):
        for kind, pattern in KINDS:
            if pattern.search(frame):
                return kind
    return OTHER


def summarise(collapsed: str | Iterable[str], top: int = TOP_FRAMES) -> ProfileSummary:
    """Summarise async-profiler's collapsed stacks ("root;...;leaf count" per line)."""
    lines = collapsed.splitlines() if isinstance(collapsed, str) else collapsed
    kinds: Counter[str] = Counter()
    leaves: Counter[str] = Counter()
    total = 0
    for line in lines:
        stack_text, _, count_text = line.strip().rpartition(" ")
        if not stack_text or not count_text.isdigit():
            continue  # (a blank or foreign line: not a sample)
        count = int(count_text)
        stack = stack_text.split(";")
        kinds[kind_of(stack)] += count
        leaves[stack[-1]] += count
        total += count
    if total == 0:
        return ProfileSummary(0)
    return ProfileSummary(
        total,
        {k: n / total for k, n in kinds.most_common()},
        [(frame, n / total) for frame, n in leaves.most_common(top)],
    )


class InJvmProfiler:
    """async-profiler inside one JVM, driven through `jvm` (a py4j view of it) whose class
    path holds the pinned jar. Samples gathered over several `resume`/`pause` spans add up
    until `dump`."""

    def __init__(self, jvm, interval_ms: int = DEFAULT_INTERVAL_MS) -> None:
        self._profiler = getattr(jvm, JAVA_CLASS).getInstance()
        self.interval_ms = interval_ms
        self.event: str | None = None  # the event sampling worked with, once started
        self._started = False

    def resume(self) -> str:
        """Start (the first time) or go on sampling; return the event used."""
        action = "resume" if self._started else "start"
        errors = []
        for event in (self.event,) if self.event else EVENTS:
            try:
                self._profiler.execute(f"{action},event={event},interval={self.interval_ms}ms")
            except Exception as exc:  # noqa: BLE001 - py4j carries the JVM's refusal
                errors.append(f"{event}: {str(exc).splitlines()[0]}")
                continue
            self.event, self._started = event, True
            return event
        raise RuntimeError("async-profiler would not start: " + "; ".join(errors))

    def pause(self) -> None:
        self._profiler.execute("stop")

    def dump(self, flame_graph: Path) -> ProfileSummary:
        """Write the samples so far as an interactive flame graph (HTML) and summarise them."""
        flame_graph.parent.mkdir(parents=True, exist_ok=True)
        self._profiler.execute(f"flamegraph,file={flame_graph.resolve()}")
        return summarise(self._profiler.execute("collapsed"))

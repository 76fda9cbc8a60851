"""Shared pieces of the Flink engine tests: waiting, the two-phase cycle, changelogs, and
running a scenario of flink_isolated.py in a child process."""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path

from nexmark.engines.checkpoints import CheckpointInfo, Snapshot
from nexmark.engines.flink import FlinkEngine
from nexmark.engines.flink.job import FlinkJob
from nexmark.engines.spec import JobSpec, SinkKind, StateTtl
from nexmark.engines.status import JobState
from nexmark.workload.feed import PartFeed
from nexmark.workload.schema import COLUMN_NAMES, COLUMNS, is_time

PARALLELISM = 2
HERE = Path(__file__).parent


def isolated_env(**extra: str) -> dict:
    """The environment of a child test process: this directory and the caller's PYTHONPATH."""
    paths = [str(HERE), os.environ.get("PYTHONPATH", "")]
    return dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in paths if p), **extra)


def run_isolated(scenario: str, dataset: Path, work: Path, env: dict | None = None) -> dict:
    """Run a scenario of flink_isolated.py in a child process; return its facts."""
    done = subprocess.run(
        [sys.executable, str(HERE / "flink_isolated.py"), scenario, str(dataset), str(work)],
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
        cwd=HERE,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def count_events(part_dir: Path) -> int:
    """Events of a part's files, whatever their format."""
    return PartFeed.of(part_dir).events


def wait_for(what: str, done: Callable[[], bool], job: FlinkJob, timeout_s: float = 120) -> None:
    """Poll `done` about every 0.3 s; fail early with the job's root cause if it ends."""
    deadline = time.monotonic() + timeout_s
    while not done():
        status = job.status()
        if status.state.terminal:
            raise AssertionError(
                f"job {status.state.value} while waiting for {what}: {status.failure}"
            )
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.3)


@dataclass
class Cycle:
    warmup: FlinkJob
    phase_checkpoint: CheckpointInfo
    benchmark: FlinkJob
    restored: Snapshot | None
    final_checkpoint: CheckpointInfo
    warmup_events: int
    benchmark_events: int


def two_phase(
    engine: FlinkEngine,
    query: str,
    dataset: Path,
    work_dir: Path,
    sink: SinkKind = SinkKind.DISCARD,
    state_ttl: StateTtl | None = None,
) -> Cycle:
    """Warm-up (source kept open), checkpoint, cancel, restore on the benchmark part, run it
    until the source emitted every event, checkpoint again, cancel: the runner's protocol."""

    def spec(part: str, **kw) -> JobSpec:
        return JobSpec(
            query,
            dataset / part,
            work_dir,
            sink=sink,
            state_ttl=state_ttl,
            collect_dir=work_dir / "collect",
            **kw,
        )

    warm_total = count_events(dataset / "warmup")
    warmup = engine.submit(spec("warmup", keep_source_open=True))
    wait_for("warm-up events", lambda: warmup.events_emitted() >= warm_total, warmup)
    wait_for("warm-up running", lambda: warmup.status().state == JobState.READY, warmup)
    phase = warmup.trigger_checkpoint(60)
    warmup.cancel()
    bench_total = count_events(dataset / "benchmark")
    bench = engine.submit(spec("benchmark", restore=phase.snapshot))
    wait_for("benchmark events", lambda: bench.events_emitted() >= bench_total, bench)
    final = bench.trigger_checkpoint(60)
    restored = bench.restored_from()
    bench.cancel()
    return Cycle(
        warmup, phase, bench, restored, final, warmup.events_emitted(), bench.events_emitted()
    )


def _time_text(ms: str) -> str:
    """An epoch-millisecond field as ISO text (how these tests compare times)."""
    return "" if not ms else str(datetime(1970, 1, 1) + timedelta(milliseconds=int(ms)))


def bids(dataset: Path) -> list[dict[str, str]]:
    """Every bid of both parts, in event order, as CSV text by column name (times as
    `YYYY-MM-DD HH:MM:SS[.ffffff]`, the files' epoch milliseconds converted)."""
    rows = []
    for part in ("warmup", "benchmark"):
        for f in PartFeed.of(dataset / part).files:
            rows += _text_rows(f.path)
    for r in rows:
        for c in COLUMNS:
            if is_time(c):
                r[c.name] = _time_text(r[c.name])
    return [r for r in rows if r["event_type"] == "2"]


def bids_in(part_dir: Path) -> int:
    """How many bids one part's files hold."""
    return sum(
        r["event_type"] == "2" for f in PartFeed.of(part_dir).files for r in _text_rows(f.path)
    )


def _text_rows(path: Path) -> list[dict[str, str]]:
    """A data file's rows as CSV text by column name (a Parquet file's values as CSV has them:
    integers in decimal, null as the empty string)."""
    if path.suffix == ".csv":
        with path.open() as fh:
            return [dict(zip(COLUMN_NAMES, r, strict=True)) for r in csv.reader(fh)]
    import pyarrow.parquet as pq

    table = pq.read_table(path)
    columns = [["" if v is None else str(v) for v in table.column(i).to_pylist()]
               for i in range(table.num_columns)]  # fmt: skip
    return [dict(zip(COLUMN_NAMES, values, strict=True)) for values in zip(*columns, strict=True)]


def q2_expected(dataset: Path) -> Counter:
    """q2's exact result: (auction, price) of bids on auctions divisible by 123."""
    return Counter(
        (int(b["b_auction"]), int(b["b_price"]))
        for b in bids(dataset)
        if int(b["b_auction"]) % 123 == 0
    )

"""Fixed cost of the protocol per query on the embedded engine, and the quick suite's wall time.

The fixed cost is everything a query run spends beyond processing events: submitting two jobs,
the phase checkpoint, cancel, restore, the end checkpoint, cleanup. It is measured as the wall
time of a query run minus the time its two jobs spent reading events (from the first event read
to the last, per phase). Target: under 20 s per query.

    .venv/bin/python benchmarks/bench_fixed_cost.py [--events 200K] [--queries q0,q5] [--repeat 2]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from nexmark.engines.flink import FlinkEngine
from nexmark.protocol.preparation.options import ProtocolOptions
from nexmark.protocol.preparation.parts import PhaseParts
from nexmark.protocol.progress.display import RunDisplay
from nexmark.protocol.query.query_run import QueryRun
from nexmark.settings import Settings
from nexmark.workload.dataset import DatasetParams
from nexmark.workload.sizes import parse_count
from nexmark.workload.writer import ensure_dataset


def reading_time(samples, phase: str) -> float:
    """Seconds between the first sample with an event read and the phase's last sample."""
    own = [s for s in samples if s.phase == phase]
    moving = [s for s in own if s.events > 0]
    return moving[-1].wall - moving[0].wall if moving else 0.0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--events", default="200K")
    ap.add_argument("--queries", default="q0,q5")
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--parallelism", type=int, default=2)
    args = ap.parse_args()

    with tempfile.TemporaryDirectory(prefix="nexmark-bench-") as tmp:
        params = DatasetParams(events=parse_count(args.events), files=args.parallelism)
        ds = ensure_dataset(params, out=Path(tmp) / "data", show_progress=False)
        parts = PhaseParts.of(ds)
        settings = Settings.load(overrides=[f"flink.parallelism.default={args.parallelism}"])
        started = time.perf_counter()
        with FlinkEngine(settings) as engine:
            print(f"engine start: {time.perf_counter() - started:.1f} s")
            print(f"{'query':6} {'wall s':>8} {'reading s':>10} {'fixed s':>8}")
            fixed_all = []
            for query in args.queries.split(","):
                for _ in range(args.repeat):
                    t0 = time.perf_counter()
                    opts = ProtocolOptions(checkpoint_interval_s=30.0, timeout_s=600)
                    run = QueryRun(
                        engine, query, parts, Path(tmp) / "work", opts, RunDisplay(1, enabled=False)
                    )
                    run.execute()
                    wall = time.perf_counter() - t0
                    reading = sum(
                        reading_time(run.sampler.samples, p) for p in ("warmup", "benchmark")
                    )
                    fixed_all.append(wall - reading)
                    print(f"{query:6} {wall:8.2f} {reading:10.2f} {wall - reading:8.2f}")
            print(
                f"fixed cost per query: median {statistics.median(fixed_all):.2f} s, "
                f"max {max(fixed_all):.2f} s (target < 20 s)"
            )


if __name__ == "__main__":
    main()

"""What the latency stamps cost Flink, and a query's latency at a share of its full speed.

1. Cost: bounded jobs of q0 over the benchmark part at full speed, alternately without and
   with latency stamps (`JobSpec.latency`: the sampled second sink of engines/flink/ddl.py),
   `--pairs` times after `--jit-jobs` unscored jobs (the JIT warms over several: an engine's
   first jobs run up to 1.5x slower, which an order effect turns into a false cost); prints
   each job's throughput (over Flink's own task span) and JVM CPU per million events, and
   the medians' ratios (target: stamps cost under 5%). The spread of each side is the noise.
2. Latency: a two-phase run at full speed without stamps, then the query rate-fed at `--share`
   of that throughput, on a dataset sliced for that rate; prints the rate delivered and the
   latency percentiles.

    .venv/bin/python benchmarks/bench_latency.py [--events 4M] [--query q0] [--pairs 5]
        [--share 0.5] [--data-dir DIR] [--set flink.KEY=VALUE] [--no-fed] [--part warmup]
        [--sample 0.001]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from nexmark.engines.base import JobSpec, JobState, LatencyStamps
from nexmark.engines.flink import FlinkEngine
from nexmark.metrics import latency as lat
from nexmark.metrics.machine import collect_machine
from nexmark.protocol.preparation.options import ProtocolOptions
from nexmark.protocol.preparation.parts import PhaseParts
from nexmark.protocol.progress.display import RunDisplay
from nexmark.protocol.query.query_run import QueryRun
from nexmark.protocol.scoring.record import RunContext, build_result
from nexmark.settings import Settings
from nexmark.workload.dataset import DatasetParams
from nexmark.workload.feed import PartFeed, rate_slices
from nexmark.workload.sizes import parse_count
from nexmark.workload.writer import ensure_dataset


def one_run(engine, dataset, query, work: Path, **options):
    parts = PhaseParts.of(dataset)
    opts = ProtocolOptions(timeout_s=900, **options)
    run = QueryRun(engine, query, parts, work, opts, RunDisplay(1, enabled=False))
    measured = run.execute()
    ctx = RunContext("bench", dataset, engine.info(), collect_machine())
    return build_result(ctx, measured, run.sampler, parts)


TERMINAL = tuple(s for s in JobState if s.terminal)


def bounded_job(
    engine, part: Path, query: str, work: Path, stamps: bool, sample: float | None = None
) -> tuple[float, float]:
    """One bounded job over `part` (it finishes by itself): (events/s over Flink's own task
    span, JVM CPU seconds per million events from every task running). No protocol around it:
    no restore, no checkpoints, so fixed costs do not hide a per-row cost in a short phase."""
    rule = lat.rule(query)
    spec = JobSpec(query, part, work)
    if stamps and rule is not None:
        spec.latency = LatencyStamps(rule.column, sample or rule.sample)
    job = engine.submit(spec)
    # CPU from every task running: planning and deploying the extra operators is a fixed cost
    while job.status().state not in (JobState.READY, *TERMINAL):
        time.sleep(0.05)
    cpu0 = engine.cpu_seconds()
    while not job.status().state.terminal:
        time.sleep(0.5)
    cpu = engine.cpu_seconds() - cpu0
    vertices = engine.rest.get(f"/jobs/{job.id}")["vertices"]
    start = min(v["start-time"] for v in vertices if v["start-time"] > 0)
    span = (max(v["end-time"] for v in vertices) - start) / 1000.0
    events = PartFeed.of(part).events
    return events / span, cpu / events * 1e6


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--events", default="4M")
    ap.add_argument("--query", default="q0")
    ap.add_argument("--pairs", type=int, default=5)
    ap.add_argument("--jit-jobs", type=int, default=3, help="unscored jobs first (JIT)")
    ap.add_argument("--share", type=float, default=0.5)
    ap.add_argument("--sample", type=float, default=None, help="share of rows stamped")
    ap.add_argument("--data-dir", type=Path, default=None)
    ap.add_argument("--set", action="append", default=[], help="a setting, e.g. flink.x=y")
    ap.add_argument("--no-fed", action="store_true", help="only the cost, no rate-fed run")
    ap.add_argument("--part", default="benchmark", help="the part the cost's jobs read")
    args = ap.parse_args()
    events = parse_count(args.events)
    root = args.data_dir or Path(tempfile.mkdtemp(prefix="nexmark-bench-latency-"))
    plain = DatasetParams(events=events, files=2)
    dataset = ensure_dataset(plain, out=root / plain.dataset_id, show_progress=False)
    engine = FlinkEngine(Settings.load(overrides=["flink.parallelism.default=2", *args.set]))
    engine.start()
    try:
        with tempfile.TemporaryDirectory(prefix="nexmark-bench-work-") as tmp:
            part = dataset.part_dir(args.part)
            for i in range(args.jit_jobs):  # JIT warm-up, both plans
                bounded_job(engine, part, args.query, Path(tmp) / f"jit{i}", i % 2 == 0)
            runs: dict[bool, list[tuple[float, float]]] = {False: [], True: []}
            for i in range(args.pairs):
                for stamps in (False, True) if i % 2 == 0 else (True, False):
                    eps, cpu = bounded_job(engine, part, args.query, Path(tmp) / f"w{i}{stamps}",
                                           stamps, args.sample)  # fmt: skip
                    runs[stamps].append((eps, cpu))
                    label = "stamps" if stamps else "plain "
                    print(f"{label} {eps:>12,.0f} events/s  {cpu:6.3f} JVM core-s/M", flush=True)
            med = {k: statistics.median(t for t, _ in v) for k, v in runs.items()}
            cpu_med = {k: statistics.median(c for _, c in v) for k, v in runs.items()}
            for k, name in ((False, "plain"), (True, "stamps")):
                values = [t for t, _ in runs[k]]
                cpus = [c for _, c in runs[k]]
                print(f"{name}: median {med[k]:,.0f} events/s (min {min(values):,.0f}, max "
                      f"{max(values):,.0f}); JVM CPU median {cpu_med[k]:.3f} core-s/M (min "
                      f"{min(cpus):.3f}, max {max(cpus):.3f})")  # fmt: skip
            print(
                f"throughput with stamps / without: {med[True] / med[False]:.3f}; "
                f"CPU per event: {cpu_med[True] / cpu_med[False]:.3f}",
                flush=True,
            )
            full = one_run(engine, dataset, args.query, Path(tmp) / "full", latency=False)
            print(f"two-phase full speed: {full.throughput_eps:,.0f} events/s", flush=True)
            med[False] = full.throughput_eps or med[False]
            if args.no_fed:
                return
            rate = round(args.share * med[False], -3)
            bench_events = dataset.part_range("benchmark")[1] - dataset.part_range("benchmark")[0]
            sliced = DatasetParams(events=events, files=2,
                                   benchmark_slices=rate_slices(bench_events, rate))  # fmt: skip
            fed = ensure_dataset(sliced, out=root / sliced.dataset_id, show_progress=False)
            r = one_run(engine, fed, args.query, Path(tmp) / "fed", rate=rate)
            lat = r.latency
            print(f"rate-fed at {rate:,.0f} events/s ({args.share:.0%} of full speed): "
                  f"delivered {r.rate.delivered_eps:,.0f}, lag trend {r.rate.lag_trend_eps:,.0f}"
                  f" events/s; latency p50 {lat.p50_s:.3f} s, p95 {lat.p95_s:.3f} s, "
                  f"p99 {lat.p99_s:.3f} s, max {lat.max_s:.3f} s over {lat.rows} rows "
                  f"({lat.depends}, sample {lat.sample:.0%})")  # fmt: skip
    finally:
        engine.close()


if __name__ == "__main__":
    main()

"""What the runner's polling costs Flink: throughput with and without 1 s polling, harness CPU.

Each run is one bounded job over the warm-up part of a dataset (the job finishes by itself),
timed by Flink's own task start and end times, so the measurement does not depend on how often
the harness looks. "plain" asks only for the job status every 5 s (to notice the end); "polled"
does what the runner does every second: status, events emitted, checkpoint history, engine CPU.
Also reported: the JVM's CPU seconds per run. On a machine shared with other work the wall
time is noisy; CPU seconds per event are much less so and show the polling's cost in the JVM.
Last, the JVM CPU one poll cycle costs, measured on an idle job (robust to other load).
Targets: throughput ratio polled/plain >= 0.98; harness CPU under 2% of a core.

    .venv/bin/python benchmarks/bench_flink_harness.py [--events 10M] [--queries q0,q17]
        [--repeat 2] [--parallelism 2] [--data-dir DIR]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import tempfile
import time
from pathlib import Path

import psutil

from nexmark.engines.base import JobSpec
from nexmark.engines.flink import FlinkEngine
from nexmark.engines.flink.job import FlinkJob
from nexmark.settings import Settings
from nexmark.workload.dataset import DatasetParams
from nexmark.workload.sizes import parse_count
from nexmark.workload.writer import ensure_dataset


def task_span_s(engine: FlinkEngine, job: FlinkJob) -> float:
    """Seconds from the first task start to the last task end, as Flink recorded them."""
    vertices = engine.rest.get(f"/jobs/{job.id}")["vertices"]
    start = min(v["start-time"] for v in vertices if v["start-time"] > 0)
    end = max(v["end-time"] for v in vertices)
    return (end - start) / 1000.0


def run_once(engine: FlinkEngine, query: str, part: Path, work: Path, polled: bool) -> dict:
    """One bounded job; returns its task span and the harness's own CPU while it ran."""
    me = psutil.Process()
    jvm0 = engine.cpu_seconds()
    job = engine.submit(JobSpec(query, part, work))
    cpu0, wall0 = sum(me.cpu_times()[:2]), time.perf_counter()
    while not job.status().state.terminal:
        if polled:
            poll_cycle(engine, job)
            time.sleep(1.0)
        else:
            time.sleep(5.0)
    wall = time.perf_counter() - wall0
    harness = (sum(me.cpu_times()[:2]) - cpu0) / wall
    jvm = engine.cpu_seconds() - jvm0  # includes planning and deploying the job
    state = job.status()
    if state.state.value != "finished":
        raise SystemExit(f"{query} {state.state.value}: {state.failure}")
    return {"span": task_span_s(engine, job), "harness": harness, "jvm": jvm}


def poll_cycle(engine: FlinkEngine, job: FlinkJob) -> None:
    """What the runner asks about once a second."""
    job.status()
    job.events_emitted()
    job.checkpoints()
    engine.cpu_seconds()


def poll_cost(engine: FlinkEngine, part: Path, tmp: Path, seconds: float = 20.0) -> float:
    """JVM CPU seconds one poll cycle costs, measured on an idle job (open source, no events).

    Wall-time ratios are noisy on a shared machine; this isolates the polling's own cost.
    """
    tiny = tmp / "tiny-part"
    tiny.mkdir()
    first = sorted(part.glob("*.csv"))[0]
    with first.open() as src:
        (tiny / first.name).write_text("".join(next(src) for _ in range(1000)))
    job = engine.submit(JobSpec("q0", tiny, tmp / "work-idle", keep_source_open=True))
    while job.events_emitted() < 1000:
        time.sleep(0.5)
    time.sleep(3.0)
    idle0 = engine.cpu_seconds()
    time.sleep(seconds)
    idle = engine.cpu_seconds() - idle0
    cycles, busy0, t0 = 0, engine.cpu_seconds(), time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        poll_cycle(engine, job)
        cycles += 1
        time.sleep(0.05)
    busy = engine.cpu_seconds() - busy0
    job.cancel()
    return max(0.0, busy - idle) / cycles


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--events", default="10M", help="dataset size (the warm-up part is run)")
    ap.add_argument("--queries", default="q0,q17", help="a stateless and a stateful query")
    ap.add_argument("--repeat", type=int, default=2, help="runs per query and mode")
    ap.add_argument("--parallelism", type=int, default=2)
    ap.add_argument("--data-dir", type=Path, help="keep/reuse the dataset here")
    ap.add_argument("--poll-cost-only", action="store_true", help="skip the throughput runs")
    args = ap.parse_args()

    tmp = Path(tempfile.mkdtemp(prefix="nexmark-bench-harness-"))
    try:
        params = DatasetParams(events=parse_count(args.events), files=args.parallelism)
        data_dir = (args.data_dir or tmp) / params.dataset_id
        ds = ensure_dataset(params, out=data_dir, show_progress=False)
        start, stop = ds.part_range("warmup")
        events = stop - start
        settings = Settings.load(overrides=[f"flink.parallelism.default={args.parallelism}"])
        with FlinkEngine(settings) as engine:
            print(
                f"{events:,} events per run, parallelism {args.parallelism}, "
                f"{args.repeat} run(s) per mode"
            )
            print(
                f"{'query':6} {'mode':7} {'span s':>8} {'events/s':>12} {'JVM CPU s':>10} "
                f"{'harness CPU':>12}"
            )
            for query in [] if args.poll_cost_only else args.queries.split(","):
                _bench_query(engine, query, ds.part_dir("warmup"), tmp, events, args.repeat)
            cost = poll_cost(engine, ds.part_dir("warmup"), tmp)
            print(
                f"one poll cycle costs the JVM {1000 * cost:.2f} ms of CPU: at 1 poll/s, "
                f"{100 * cost / args.parallelism:.3f}% of the {args.parallelism} cores a job "
                f"uses at full speed (throughput ratio >= {1 - cost / args.parallelism:.4f})"
            )
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _bench_query(engine, query: str, part: Path, tmp: Path, events: int, repeat: int) -> None:
    results: dict[str, list[dict]] = {"plain": [], "polled": []}
    for i in range(repeat):
        # Alternate the order so that drift on a shared machine hits both modes alike.
        modes = ("plain", "polled") if i % 2 == 0 else ("polled", "plain")
        for mode in modes:
            work = tmp / f"work-{query}-{mode}-{i}"
            r = run_once(engine, query, part, work, mode == "polled")
            shutil.rmtree(work, ignore_errors=True)
            results[mode].append(r)
            print(
                f"{query:6} {mode:7} {r['span']:8.1f} {events / r['span']:12,.0f} "
                f"{r['jvm']:10.1f} {100 * r['harness']:11.2f}%"
            )
    plain = statistics.median(events / r["span"] for r in results["plain"])
    polled = statistics.median(events / r["span"] for r in results["polled"])
    harness = statistics.median(r["harness"] for r in results["polled"])
    cpu_plain = statistics.median(r["jvm"] for r in results["plain"])
    cpu_polled = statistics.median(r["jvm"] for r in results["polled"])
    print(
        f"{query:6} throughput ratio polled/plain = {polled / plain:.3f}; "
        f"JVM CPU ratio polled/plain = {cpu_polled / cpu_plain:.3f}; "
        f"harness CPU while polling = {100 * harness:.2f}% of a core"
    )


if __name__ == "__main__":
    main()

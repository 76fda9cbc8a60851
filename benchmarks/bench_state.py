"""State on Flink, side by side: what reading the live state costs, and RocksDB against ForSt.

`--compare metrics`: the runner turns on four RocksDB native metrics for every job and reads
them about once a second over REST (docs/protocol.md, "Live state"). The same queries run on
the same dataset with the metrics on (the default) and off (`...metrics.<property>=false`, so
the sampler finds no gauge to read). Target: a cost under 2% on q5 and q20.

`--compare backends`: the same with `state.backend.type` rocksdb and forst (add
`--set flink.taskmanager.memory.managed.size=128m` to make the state spill out of memory).

The two modes alternate in rounds on fresh embedded engines, each warm-up followed by
`--repeat` restored benchmark phases (`--warm-round`: one unscored engine first); it prints
every phase's throughput, then per query and mode the median throughput, phase checkpoint
duration, recovery time, live state and checkpoint size.

    .venv/bin/python benchmarks/bench_state.py [--compare metrics|backends] [--events 6M]
        [--queries q5,q20] [--rounds 2] [--repeat 3] [--set SECTION.KEY=VALUE ...]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
from pathlib import Path

from nexmark.console import human_bytes
from nexmark.engines.flink import FlinkEngine
from nexmark.engines.flink.state_metrics import PROPERTIES
from nexmark.metrics.machine import collect_machine
from nexmark.protocol.preparation.options import ProtocolOptions
from nexmark.protocol.preparation.parts import PhaseParts
from nexmark.protocol.progress.display import RunDisplay
from nexmark.protocol.query.query_run import QueryRun
from nexmark.protocol.scoring.record import RunContext, build_result
from nexmark.settings import Settings
from nexmark.workload.dataset import DatasetParams
from nexmark.workload.sizes import parse_count
from nexmark.workload.writer import ensure_dataset

METRICS_OFF = [f"flink.state.backend.rocksdb.metrics.{p}=false" for p in PROPERTIES]
MODES = {
    "metrics": {"on": [], "off": METRICS_OFF},
    "backends": {
        "rocksdb": ["flink.state.backend.type=rocksdb"],
        "forst": ["flink.state.backend.type=forst"],
    },
}


def run_mode(mode: str, overrides: list[str], args, ds, work: Path, rows: dict) -> None:
    base = [f"flink.parallelism.default={args.parallelism}", *args.set]
    parts = PhaseParts.of(ds)
    with FlinkEngine(Settings.load(overrides=base + overrides)) as engine:
        for query in args.queries.split(","):
            opts = ProtocolOptions(timeout_s=3600, repeat=args.repeat)
            run = QueryRun(engine, query, parts, work / mode / query, opts, RunDisplay(1, False))
            measured = run.execute()
            ctx = RunContext("bench", ds, engine.info(), collect_machine())
            r = build_result(ctx, measured, run.sampler, parts)
            values = [x.throughput_eps for x in r.repeats if x.throughput_eps] or [r.throughput_eps]
            row = rows.setdefault((query, mode), {"eps": [], "ckpt": [], "recovery": []})
            row["eps"] += values
            row["ckpt"].append(r.phase_checkpoint.duration_s)
            row["recovery"] += [x.recovery_time_s for x in r.repeats if x.recovery_time_s] or [
                r.recovery_time_s
            ]
            row["live"], row["size"] = r.state_live_bytes_end, r.state_bytes_end
            row["growth"] = (r.state_growth, r.state_measure)
            print(f"  {mode:7} {query:4} {' '.join(f'{v:,.0f}' for v in values)} ev/s, "
                  f"phase checkpoint {r.phase_checkpoint.duration_s:.2f} s, "
                  f"live reads in the benchmark phase "
                  f"{sum(1 for p in r.live_state if p.phase == 'benchmark')}")  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--compare", choices=sorted(MODES), default="metrics")
    ap.add_argument("--events", default="6M")
    ap.add_argument("--queries", default="q5,q20")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--parallelism", type=int, default=2)
    ap.add_argument("--set", action="append", default=[], help="a settings override")
    ap.add_argument(
        "--warm-round",
        action="store_true",
        help="run the first mode once, unscored, before the rounds (the first engine of a "
        "run was seen slower, whatever it measured)",
    )
    args = ap.parse_args()

    modes = MODES[args.compare]
    rows: dict[tuple[str, str], dict] = {}
    with tempfile.TemporaryDirectory(prefix="nexmark-bench-") as tmp:
        params = DatasetParams(events=parse_count(args.events), files=args.parallelism)
        ds = ensure_dataset(params, out=Path(tmp) / "data", show_progress=False)
        if args.warm_round:
            first = next(iter(modes))
            print(f"warm round (unscored): {first}")
            run_mode(first, modes[first], args, ds, Path(tmp) / "work-warm", {})
        for i in range(args.rounds):
            order = list(modes) if i % 2 == 0 else list(reversed(modes))  # neither always first
            print(f"round {i + 1}: {' then '.join(order)}")
            for mode in order:
                run_mode(mode, modes[mode], args, ds, Path(tmp) / f"work-{i}", rows)
    first = next(iter(modes))
    print(f"\n{'query':5} {'mode':8} {'throughput':>11} {'vs ' + first:>8} {'phase ckpt':>10} "
          f"{'recovery':>9} {'live state':>11} {'ckpt size':>10}  growth")  # fmt: skip
    for query in args.queries.split(","):
        ref = statistics.median(rows[(query, first)]["eps"])
        for mode in modes:
            row = rows[(query, mode)]
            eps = statistics.median(row["eps"])
            growth, measure = row["growth"]
            ckpt, recovery = statistics.median(row["ckpt"]), statistics.median(row["recovery"])
            print(f"{query:5} {mode:8} {eps:11,.0f} {(eps - ref) / ref:8.1%} "
                  f"{ckpt:9.2f}s {recovery:8.2f}s "
                  f"{human_bytes(row['live'] or 0):>11} {human_bytes(row['size'] or 0):>10}  "
                  f"{growth or 0:.2f} ({measure})")  # fmt: skip


if __name__ == "__main__":
    main()

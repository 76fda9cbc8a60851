"""Files against Kafka on the same events (issue 31's bench): per query, throughput and per core
from each source, the embedded broker's cores beside the engine's, and the ratio.

Runs `nexmark run` twice on one dataset (`--data`, so both read the same events): once from its
Parquet files, once from its Kafka load (`--source kafka`: the embedded broker, the load made
on the first run and kept in `--kafka-dir` for the next). Each run is a real CLI run with its
own results directory under --out; the table is read back from them.

    .venv/bin/python benchmarks/bench_sources.py [--events 1M] [--queries q0,q5] [--engine flink]
        [--repeat 3] [--out DIR]

The broker runs on the same 2 cores as the engine: its cores are recorded apart
(`source_cores`, never in Cores), but it competes for the CPU, so the per-core figure from
Kafka is the engine's per core with a broker beside it, not a free-standing one.
"""

from __future__ import annotations

import argparse
import os
import tempfile
from pathlib import Path

from nexmark_cli import nexmark_run

from nexmark.results.store import load_results
from nexmark.results.table import fmt_rate

SOURCES = ("files", "kafka")


def run_source(source: str, args: argparse.Namespace, data: Path, kafka_dir: Path) -> Path:
    run_args = ["--engine", args.engine, "-q", args.queries, "-n", args.events]
    run_args += ["--repeat", str(args.repeat), "--data", str(data), "--timeout", args.timeout]
    run_args += ["--parallelism", str(args.parallelism)]
    if source == "kafka":
        run_args += ["--source", "kafka", "--kafka-dir", str(kafka_dir)]
    print(f"$ nexmark run {' '.join(run_args)}", flush=True)
    return nexmark_run(args.out / source, run_args, dict(os.environ))


def _cell(value: float | None, fmt: str = "{:.2f}") -> str:
    return "-" if value is None else fmt.format(value)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--events", default="1M")
    ap.add_argument("--queries", default="q0,q5")
    ap.add_argument("--engine", default="flink")
    ap.add_argument("--parallelism", type=int, default=2)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--timeout", default="20m")
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-sources-") as tmp:
        args.out = args.out or Path(tmp) / "results"
        data, kafka_dir = Path(tmp) / "data", Path(tmp) / "kafka"
        results = {s: {r.query: r for r in load_results(run_source(s, args, data, kafka_dir))}
                   for s in SOURCES}  # fmt: skip
    print(f"\n{args.engine}, {args.events} events, parallelism {args.parallelism}, "
          f"median of {args.repeat} restored benchmark phases\n")  # fmt: skip
    print("| query | source | events/s | engine cores | per core | broker cores | Kafka / files |")
    print("|---|---|---|---|---|---|---|")
    for query in args.queries.split(","):
        files, kafka = (results[s].get(query) for s in SOURCES)
        for source, r in zip(SOURCES, (files, kafka), strict=True):
            if r is None or not r.throughput_eps:
                reason = "missing" if r is None else (r.reason or r.status.value)
                print(f"| {query} | {source} | - | - | - | - | {reason} |")
                continue
            ratio = "1"
            if source == "kafka" and files is not None and files.throughput_eps:
                ratio = f"{r.throughput_eps / files.throughput_eps:.2f}"
            print(f"| {query} | {source} | {fmt_rate(r.throughput_eps)} | {_cell(r.cores)} | "
                  f"{_cell(r.throughput_per_core, '{:,.0f}')} | {_cell(r.source_cores)} | "
                  f"{ratio} |")  # fmt: skip


if __name__ == "__main__":
    main()

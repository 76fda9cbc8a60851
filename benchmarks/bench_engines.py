"""Flink and Spark on the same events, per query side by side (issue 12's figures).

Runs `nexmark run` once per engine (the same events, seed and parallelism; each engine gets the
layout it asks for, so the datasets differ only in their files), then prints the comparison
and a table of the figures that matter per query: throughput, cores, recovery, the phase
checkpoint's duration and size, growth, and why a query did not run.

    .venv/bin/python benchmarks/bench_engines.py [--events 10M] [--queries all] [--out DIR]

Both runs use the quick suite's settings (its 3 s state TTL applies to Flink only: Spark SQL
has none); each writes its own results directory under --out, and one report of both.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

from nexmark.report.compare import compare, comparison_table
from nexmark.results.store import load_results
from nexmark.results.table import fmt_bytes, fmt_rate

ENGINES = ("flink", "spark")


def run_engine(engine: str, args: argparse.Namespace) -> Path:
    results = args.out / engine
    command = [sys.executable, "-m", "nexmark", "run", "--suite", "quick", "--engine", engine,
               "--queries", args.queries, "--events", args.events, "--parallelism",
               str(args.parallelism), "--timeout", args.timeout, "--results", str(results),
               "--no-report"]  # fmt: skip
    if (results / "results.json").exists():
        command.append("--resume")
    print("$", " ".join(command), flush=True)
    subprocess.run(command, check=False)  # a failed query is a result, not the end
    return results


def _fmt(value, fmt=lambda v: f"{v:.2f}") -> str:
    return "-" if value is None else fmt(value)


def side_by_side(runs: dict[str, Path]) -> None:
    by_engine = {e: {r.query: r for r in load_results(p)} for e, p in runs.items()}
    names = sorted({q for rs in by_engine.values() for q in rs}, key=lambda q: int(q[1:]))
    head = ["query", "engine", "throughput", "cores", "recovery s", "phase ckpt s",
            "phase ckpt size", "growth", "state bound / reason"]  # fmt: skip
    print(" | ".join(head))
    for query in names:
        for engine, results in by_engine.items():
            r = results.get(query)
            if r is None:
                continue
            if not r.ok:
                print(f"{query} | {engine} | {r.status.value} | | | | | | {r.reason}")
                continue
            print(" | ".join([
                query, engine, fmt_rate(r.throughput_eps), _fmt(r.cores),
                _fmt(r.recovery_time_s, lambda v: f"{v:.3f}"),
                _fmt(r.phase_checkpoint.duration_s, lambda v: f"{v:.3f}"),
                fmt_bytes(r.phase_checkpoint.checkpointed_bytes), _fmt(r.state_growth),
                r.state_bound or "-",
            ]))  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", default="10M")
    parser.add_argument("--queries", default="all")
    parser.add_argument("--parallelism", type=int, default=2)
    parser.add_argument("--timeout", default="6min", help="per query, both phases")
    parser.add_argument("--out", type=Path, default=Path("runs/engines"))
    args = parser.parse_args()
    runs = {engine: run_engine(engine, args) for engine in ENGINES}
    from rich.console import Console

    Console(width=140).print(comparison_table(compare(*(load_results(p) for p in runs.values()))))
    side_by_side(runs)
    report = args.out / "both.html"
    subprocess.run([sys.executable, "-m", "nexmark", "report", *map(str, runs.values()),
                    "--out", str(report)], check=False, capture_output=True)  # fmt: skip
    print(f"report: {report}")


if __name__ == "__main__":
    main()

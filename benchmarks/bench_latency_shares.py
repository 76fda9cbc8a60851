"""A query's event-time latency at shares of its full speed, on any engine (issue 20's table).

One real `nexmark run` at full speed gives the query's two-phase throughput; then one run
per share, fed at that share of it (`--rate`, which stamps the rows for their latency and
generates the dataset layout the rate needs). Printed per share: the rate asked and
delivered, the lag's trend, and the latency percentiles, as `results.json` records them.

    .venv/bin/python benchmarks/bench_latency_shares.py [--engine flink] [--query q0]
        [--events 8M] [--shares 0.25,0.5,0.9] [--data-dir DIR] [--set KEY=VALUE]
"""

from __future__ import annotations

import argparse
import os
import shutil
import tempfile
from pathlib import Path

from nexmark_cli import nexmark_run

from nexmark.results.store import ResultStore


def run(out: Path, a: argparse.Namespace, env: dict, rate: float | None = None):
    args = ["--engine", a.engine, "-q", a.query, "-n", a.events, "--repeat", "1"]
    args += [x for s in a.set for x in ("--set", s)]
    if rate is not None:
        args += ["--rate", f"{rate:.0f}"]
    (result,) = ResultStore(nexmark_run(out, args, env)).load()
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--engine", default="flink")
    parser.add_argument("--query", default="q0")
    parser.add_argument("--events", default="8M")
    parser.add_argument("--shares", default="0.25,0.5,0.9")
    parser.add_argument("--data-dir", type=Path, default=None)
    parser.add_argument("--set", action="append", default=[], help="an engine option")
    a = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="nexmark-latency-shares-"))
    env = {**os.environ, "NEXMARK_DATA_DIR": str(a.data_dir or work / "data")}
    try:
        full = run(work / "full", a, env).throughput_eps
        print(f"{a.engine} {a.query}: full speed {full:,.0f} events/s (two-phase)", flush=True)
        for share in (float(s) for s in a.shares.split(",")):
            r = run(work / f"share{share}", a, env, rate=round(share * full, -3))
            rate, lat = r.rate, r.latency
            if rate is None or rate.delivered_eps is None:
                print(f"  {share:.0%}: {r.status.value}: {r.reason}", flush=True)
                continue
            trend = "-" if rate.lag_trend_eps is None else f"{rate.lag_trend_eps:,.0f}"
            line = (
                f"  {share:.0%}: asked {rate.asked_eps:,.0f}, delivered {rate.delivered_eps:,.0f}"
                f" events/s, lag trend {trend} events/s"
            )
            if lat is not None and lat.rows:
                line += (
                    f"; latency p50 {lat.p50_s * 1000:,.0f} ms, p95 {lat.p95_s * 1000:,.0f}, "
                    f"p99 {lat.p99_s * 1000:,.0f}, max {lat.max_s * 1000:,.0f} ms "
                    f"({lat.rows:,} rows)"
                )
            else:
                line += "; no latency (the query's rows carry no event time)"
            if rate.releaser_cores is not None:
                line += f"; releaser {rate.releaser_cores:.2%} of a core"
            print(line, flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()

"""What `--profile` costs: the same query with the profiler in the engine's JVM and without.

Real `nexmark run`s (embedded engine, one dataset reused) alternate in rounds, profiled and
not, the order swapped each round so neither always runs first; each run scores `--repeat`
benchmark phases. Printed: every run's per-repeat throughput, then per mode the median, the
profiled median's change against the unprofiled one, and the profiles' samples and event.
Target: a cost under 3% of q5's throughput at the default sampling interval.

    .venv/bin/python benchmarks/bench_profile_cost.py [--queries q5] [--events 10M]
        [--rounds 2] [--repeat 3] [--engine flink]
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
from pathlib import Path

from nexmark_cli import nexmark_run

from nexmark.results.store import ResultStore

MODES = {"plain": [], "profiled": ["--profile"]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--queries", default="q5")
    ap.add_argument("--events", default="10M")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--engine", default="flink")
    args = ap.parse_args()
    base = ["-q", args.queries, "-n", args.events, "--repeat", str(args.repeat)]
    base += ["--engine", args.engine]
    eps: dict[tuple[str, str], list[float]] = {}
    profiles: dict[str, list[str]] = {}
    with tempfile.TemporaryDirectory(prefix="nexmark-bench-profile-") as tmp:
        env = {**os.environ, "NEXMARK_DATA_DIR": str(Path(tmp) / "data")}
        for i in range(args.rounds):
            order = list(MODES) if i % 2 == 0 else list(reversed(MODES))
            for mode in order:
                out = nexmark_run(Path(tmp) / f"{mode}-{i}", [*base, *MODES[mode]], env)
                for r in ResultStore(out).load():
                    values = [x.throughput_eps for x in r.repeats if x.throughput_eps]
                    eps.setdefault((r.query, mode), []).extend(values)
                    shown = " ".join(f"{v:,.0f}" for v in values)
                    print(f"round {i + 1} {mode:8} {r.query}: {shown} ev/s")
                    if r.profile is not None:
                        p = r.profile
                        profiles.setdefault(r.query, []).append(
                            f"{p.samples:,} samples ({p.event}, {p.interval_ms} ms)"
                        )
    for query in args.queries.split(","):
        plain = statistics.median(eps[(query, "plain")])
        profiled = statistics.median(eps[(query, "profiled")])
        change = (profiled - plain) / plain
        seen = "; ".join(profiles.get(query, []))
        print(f"{query}: plain {plain:,.0f} ev/s, profiled {profiled:,.0f} ev/s ({change:+.1%})")
        print(f"  profiles: {seen}")


if __name__ == "__main__":
    main()

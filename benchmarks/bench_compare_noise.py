"""Issue 19's demonstrations: does `nexmark compare` tell noise from a real difference?

1. **Identical runs**: `--tries` pairs of runs of the same queries with the same setup; each
   pair compared. Target: "no significant difference" for every query in at least 4 of 5 tries.
2. **Parallelism 1 against 2**: one run at `--parallelism 2`, one at 1; compared (1 as new).
   Target: both queries "slower", significantly.

Each run is a real `nexmark run` (embedded Flink, the same dataset reused) with `--repeat N`;
the verdicts are read from `nexmark.report.compare`, as `nexmark compare` prints them. Printed:
each comparison's verdict, ratio of medians and its 95% interval per query, and each run's
relative spread (MAD / median) per query.

    .venv/bin/python benchmarks/bench_compare_noise.py [--queries q0,q5] [--events 4M]
        [--repeat 5] [--tries 5] [--skip-parallelism] [--parallelism-events 20M]
        [--data-dir DIR] [--keep]
"""

from __future__ import annotations

import argparse
import os
import shutil
import tempfile
from pathlib import Path

from nexmark_cli import nexmark_run

from nexmark.report.compare import compare
from nexmark.results.store import ResultStore


def run(out: Path, queries: str, events: str, repeat: int, parallelism: int, env: dict) -> Path:
    args = ["-q", queries, "-n", events, "--repeat", str(repeat)]
    return nexmark_run(out, [*args, "--parallelism", str(parallelism)], env)


def spreads(path: Path) -> str:
    """Per query: MAD / median, each repeat's cost as a share of one full cycle, and whether
    every repeat restored the phase checkpoint (by the id the restored job reports).

    Both costs are wall time between submissions, so each holds everything it makes the
    user wait for: a repeat runs from its submission to the next one's (restore, benchmark,
    end checkpoint, stop); a full cycle from the warm-up's submission to the second
    repeat's (warm-up, phase checkpoint, stop, and one repeat), what a fresh run costs."""
    out = []
    for r in ResultStore(path).load():
        st, ts = r.throughput_stats, r.timestamps
        submits = [x.t_submit for x in r.repeats if x.t_submit]
        share = ""
        if len(submits) >= 2 and ts.warmup_start:
            repeat_s = (submits[-1] - submits[0]) / (len(submits) - 1)
            cycle_s = submits[1] - ts.warmup_start
            share = f", a repeat {repeat_s:.1f} s = {repeat_s / cycle_s:.0%} of a cycle"
            share += f" ({cycle_s:.1f} s)"
        proven = all(x.restored_checkpoint_id == r.phase_checkpoint.id for x in r.repeats)
        spread = f"{st.rel_spread:.1%}" if st.rel_spread is not None else "-"
        out.append(f"{r.query} MAD/median {spread}{share}, restores proven: {proven}")
    return "; ".join(out)


def verdicts(base: Path, new: Path) -> list[str]:
    c = compare(ResultStore(base).load(), ResultStore(new).load(), threshold_pct=5.0)
    lines = []
    for q in c.queries:
        sig = q.deltas[0].significance if q.deltas else None
        if sig is None:
            lines.append(f"{q.query}: {q.verdict.value} ({q.note or 'no repeats to test'})")
            continue
        interval = f" [{sig.ci[0]:.2f}, {sig.ci[1]:.2f}]" if sig.ci else ""
        p = f" p={sig.p:.3f}" if sig.p is not None else ""
        lines.append(f"{q.query}: {sig.verdict} x{sig.ratio:.3f}{interval}{p}")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", default="q0,q5")
    parser.add_argument("--events", default="4M")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--tries", type=int, default=5)
    parser.add_argument("--skip-parallelism", action="store_true")
    parser.add_argument(
        "--parallelism-events", default=None, help="events of the p1/p2 runs (default --events)"
    )
    parser.add_argument("--data-dir", type=Path, default=None)
    parser.add_argument("--keep", action="store_true", help="keep the runs' results (printed)")
    a = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="nexmark-noise-"))
    env = {**os.environ, "NEXMARK_DATA_DIR": str(a.data_dir or work / "data")}
    try:
        quiet = 0
        for k in range(a.tries):
            one = run(work / f"a{k}", a.queries, a.events, a.repeat, 2, env)
            two = run(work / f"b{k}", a.queries, a.events, a.repeat, 2, env)
            lines = verdicts(one, two)
            quiet += all("no significant" in line for line in lines)
            print(f"identical try {k + 1}: " + "; ".join(lines))
            print(f"  {spreads(one)} | {spreads(two)}")
        print(f"identical runs: no significant difference for every query in {quiet}/{a.tries}")
        if not a.skip_parallelism:
            events = a.parallelism_events or a.events
            p2 = run(work / "p2", a.queries, events, a.repeat, 2, env)
            p1 = run(work / "p1", a.queries, events, a.repeat, 1, env)
            print("parallelism 1 against 2: " + "; ".join(verdicts(p2, p1)))
            print(f"  p2: {spreads(p2)} | p1: {spreads(p1)}")
    finally:
        if a.keep:
            shutil.rmtree(work / "data", ignore_errors=True)
            print(f"results kept in {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()

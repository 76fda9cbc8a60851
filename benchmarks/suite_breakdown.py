"""Where a suite's wall time went, read back from its results (and the run's log, for what the
results do not hold: the dataset's generation and the source ceiling's reads).

    .venv/bin/python benchmarks/suite_breakdown.py RESULTS_DIR [--log RUN_LOG]

Per query, from the recorded instants: the warm-up (submit to its last event), the cut (the
phase checkpoint, a logical-size savepoint, the cancel: last warm-up event to the first
restore's submission), the restores (submission to every task running, each repeat), the
scored phases (Time, each repeat: the end checkpoints are inside it), and the runner's own
waits (between one repeat's end and the next one's submission: its end checkpoint's savepoint,
the cancel; and from the last repeat's end to the next query's start: cleanup, the engine's
idle check). A query's first instant is its start; the last query's cleanup is not recorded.
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path

from nexmark.results.store import load_results

PARTS = ("warm-up", "cut", "restores", "scored", "between repeats", "after the query")


def query_parts(r, next_start: float | None) -> dict[str, float]:
    """The seconds of each part of one query's run (`PARTS`)."""
    ts, reps = r.timestamps, [x for x in r.repeats if x.t_submit and x.t_end]
    parts = dict.fromkeys(PARTS, 0.0)
    if ts.warmup_start and ts.warmup_end:
        parts["warm-up"] = ts.warmup_end - ts.warmup_start
    if reps and ts.warmup_end:
        parts["cut"] = reps[0].t_submit - ts.warmup_end
    for before, rep in zip([None, *reps], reps, strict=False):
        parts["restores"] += rep.t_running - rep.t_submit
        parts["scored"] += rep.t_end - rep.t_running
        if before is not None:
            parts["between repeats"] += rep.t_submit - before.t_end
    if reps and next_start:
        parts["after the query"] = next_start - reps[-1].t_end
    return parts


def seconds(value: float) -> str:
    return f"{value:,.1f} s"


def log_lines(log: Path) -> list[str]:
    """What the results do not hold, from a run's plain log: the generation, the source
    ceiling's timed read, and the suite's own closing line (one each per sitting)."""
    text = log.read_text(errors="replace")
    gen = [float(s) for s in re.findall(r"generating done: [\d,]+ events in ([\d.]+) s", text)]
    ceiling = [float(s) for s in re.findall(r"source ceiling: .* events in ([\d.]+) s", text)]
    suites = re.findall(r"suite: \d+ of \d+ queries in (.+)", text)
    return [
        f"generation: {seconds(sum(gen))}",
        f"source ceiling (its timed reads): {seconds(sum(ceiling))}",
        *(f"suite line: {line}" for line in suites),
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("results", type=Path)
    parser.add_argument("--log", type=Path)
    args = parser.parse_args()
    results = [r for r in load_results(args.results) if r.timestamps.query_start]
    results.sort(key=lambda r: r.timestamps.query_start)
    starts = [r.timestamps.query_start for r in results[1:]] + [None]
    totals = dict.fromkeys(PARTS, 0.0)
    print(f"{'query':<7}" + "".join(f"{p:>17}" for p in PARTS))
    for r, next_start in zip(results, starts, strict=True):
        parts = query_parts(r, next_start)
        for p in PARTS:
            totals[p] += parts[p]
        print(f"{r.query:<7}" + "".join(f"{seconds(parts[p]):>17}" for p in PARTS))
    print(f"{'total':<7}" + "".join(f"{seconds(totals[p]):>17}" for p in PARTS))
    first, last = (
        results[0].timestamps.query_start,
        max((x.t_end for x in results[-1].repeats if x.t_end), default=None),
    )
    if last:
        print(f"first query's start to the last scored phase's end: {seconds(last - first)}")
    if args.log:
        print("\n".join(log_lines(args.log)))


if __name__ == "__main__":
    main()

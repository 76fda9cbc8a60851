"""The data path, before and after: source-only and q0 throughput on the same events, one run.

The same dataset is read two ways in one sitting, on one embedded Flink:

- "main": the format and the setup of main before issue #11 (generator version 3): times
  written as text (`2024-01-01 00:00:00.000`) and parsed by Flink's CSV format as TIMESTAMP(3)
  columns, the CSV options `csv.null-literal = ''` only, the packaged settings of then
  (`pipeline.object-reuse` off). Its files are the same events as the dataset's, written again
  with the text times (`CsvFormatter(text_times=True)`), in the same layout;
- "new": the dataset as nexmark writes it now (times as epoch milliseconds, the TIMESTAMP(3)
  columns computed in the table declaration) with the packaged settings.

For each, in rounds that alternate the two (the machine's speed drifts):

- **source**: the protocol's source-only calibration job (protocol/calibrate.py), the benchmark
  part read through the queries' source and discarded: its throughput from every task running
  to the job's end, as `nexmark run` records it;
- **q0**: q0 through the whole protocol (warm-up on the warm-up part, phase checkpoint, cancel,
  restore, benchmark phase, end checkpoint): the benchmark phase's throughput, as `nexmark
  run` scores it.

Printed: each run, the best and the median per variant, and the ratios new / main (best,
median, and median events per CPU-second: on a machine shared with other work, where the
engine gets anywhere between a fraction of a core and two, the per-core ratio is the steadier
one). Targets of #11: source >= 2x, q0 >= 1.5x. More variants (each change alone) with
`--variants`: `text-times` (new settings, text times), `no-reuse` (new files, object reuse off).

    .venv/bin/python benchmarks/bench_data_path.py [--events 8M] [--parallelism 2]
        [--repeat 2] [--variants main,new] [--data-dir DIR]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from nexmark.engines.flink import FlinkEngine
from nexmark.protocol.calibrate import calibrate
from nexmark.protocol.display import RunDisplay
from nexmark.protocol.query_run import PhaseParts, ProtocolOptions, QueryRun
from nexmark.settings import Settings
from nexmark.workload.csvtext import CsvFormatter
from nexmark.workload.dataset import Dataset, DatasetParams
from nexmark.workload.sizes import parse_count
from nexmark.workload.writer import ensure_dataset

MAIN_CSV_OPTIONS = {"csv.null-literal": ""}  # the CSV options of main before #11
# Options of the packaged settings that main before #11 did not have (job options only: the
# variants share one cluster).
NEW_OPTIONS = {"pipeline.object-reuse": "true"}


@dataclass
class Variant:
    name: str
    text_times: bool  # read the text-time copy (main's format) instead of the dataset
    csv_options: dict[str, str] | None  # None: the engine's current CSV options
    reset: dict[str, str] = field(default_factory=dict)  # job options set back to main's


VARIANTS = {
    "main": Variant("main", True, MAIN_CSV_OPTIONS, {k: "false" for k in NEW_OPTIONS}),
    "new": Variant("new", False, None),
    "text-times": Variant("text-times", True, None),  # only the epoch-ms change undone
    "no-reuse": Variant("no-reuse", False, None, {"pipeline.object-reuse": "false"}),
}


def text_time_copy(ds: Dataset, root: Path) -> Path:
    """The dataset's events again, same files and layout, with the times written as text
    (reused when `root` already holds a complete one)."""
    out = root / f"{ds.id}-text-times"
    done = out / ".complete"
    if not done.exists():
        shutil.rmtree(out, ignore_errors=True)
        write_text_time_copy(ds, out)
        done.write_text("")
    return out


def write_text_time_copy(ds: Dataset, out: Path) -> None:
    """The dataset's events again, same files and layout, with the times written as text."""
    formatter = CsvFormatter(ds.params.generator_config, text_times=True)
    for f in ds.files():
        path = out / f.part / f.layout.name
        path.parent.mkdir(parents=True, exist_ok=True)
        starts, _ = f.layout.blocks()
        step = 32  # blocks per formatting call (about 32K events at the default rate)
        with open(path, "wb") as fh:
            for first in range(0, len(starts), step):
                fh.write(formatter.format_numbers(f.layout.numbers(first, first + step)))


def parts_of(ds: Dataset, root: Path) -> PhaseParts:
    parts = PhaseParts.of(ds)
    parts.warmup_dir, parts.benchmark_dir = root / "warmup", root / "benchmark"
    return parts


def configure(engine: FlinkEngine, base: list[str], variant: Variant) -> None:
    """Point the engine's next jobs at the variant's source declaration and options."""
    engine.settings = Settings.load(
        overrides=[*base, *(f"flink.{k}={v}" for k, v in variant.reset.items())]
    )
    engine.source_options = {"text_times": variant.text_times}
    if variant.csv_options is not None:
        engine.source_options["csv_options"] = dict(variant.csv_options)


def run_source(engine, parts: PhaseParts, tmp: Path, options: ProtocolOptions) -> dict:
    source = calibrate(engine, parts, tmp / "work-source", options)
    if source.status != "ok":
        raise SystemExit(f"source-only job {source.status}: {source.reason}")
    return {"eps": source.throughput_eps, "cores": source.cores}


def run_query(query: str, engine, parts: PhaseParts, tmp: Path, options: ProtocolOptions) -> dict:
    display = RunDisplay(1, enabled=False)
    run = QueryRun(engine, query, parts, tmp / f"work-{query}", options, display)
    m = run.execute()
    time_s = m.t_end - m.t_running
    cores = (m.cpu_at_end - m.cpu_at_running) / time_s
    return {"eps": parts.benchmark_events / time_s, "cores": cores}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--events", default="8M", help="dataset size (q0 reads all of it)")
    ap.add_argument("--parallelism", type=int, default=2)
    ap.add_argument("--repeat", type=int, default=2, help="rounds (each runs every variant)")
    ap.add_argument("--variants", default="main,new", help=f"of {', '.join(VARIANTS)}")
    ap.add_argument("--queries", default="q0", help="queries run through the protocol")
    ap.add_argument(
        "--data-dir", type=Path, help="keep the dataset and its copy here, and reuse them"
    )
    args = ap.parse_args()
    variants = [VARIANTS[v] for v in args.variants.split(",")]
    queries = args.queries.split(",")

    root = args.data_dir or Path(tempfile.mkdtemp(prefix="nexmark-bench-data-path-"))
    try:
        params = DatasetParams(events=parse_count(args.events), files=args.parallelism)
        ds = ensure_dataset(params, out=root / params.dataset_id, show_progress=False)
        t0 = time.perf_counter()
        copy = text_time_copy(ds, root) if any(v.text_times for v in variants) else None
        print(
            f"{ds.events:,} events ({ds.bytes / 1e9:.2f} GB; text-time copy ready in "
            f"{time.perf_counter() - t0:.1f} s), parallelism {args.parallelism}, "
            f"load average {os.getloadavg()[0]:.2f}"
        )
        base = [f"flink.parallelism.default={args.parallelism}"]
        options = ProtocolOptions(timeout_s=1800)
        runs: dict[tuple[str, str], list[dict]] = {}
        work = Path(tempfile.mkdtemp(prefix="nexmark-bench-data-path-work-"))
        with FlinkEngine(Settings.load(overrides=base)) as engine:
            for round_ in range(args.repeat):
                for v in variants:
                    configure(engine, base, v)
                    parts = parts_of(ds, copy) if v.text_times else PhaseParts.of(ds)
                    for job in ("source", *queries):
                        if job == "source":
                            r = run_source(engine, parts, work, options)
                        else:
                            r = run_query(job, engine, parts, work, options)
                        runs.setdefault((v.name, job), []).append(r)
                        print(
                            f"  round {round_ + 1} {v.name:>10} {job:>6}: {r['eps'] / 1e3:8.1f} "
                            f"K events/s, {r['cores']:.2f} cores, "
                            f"{r['eps'] / r['cores'] / 1e3:7.1f} K/s per core"
                        )
        shutil.rmtree(work, ignore_errors=True)
        report(runs, variants, ["source", *queries])
    finally:
        if args.data_dir is None:
            shutil.rmtree(root, ignore_errors=True)


def report(
    runs: dict[tuple[str, str], list[dict]], variants: list[Variant], jobs: list[str]
) -> None:
    print(f"\n{'variant':>10} {'job':>6} {'best K/s':>9} {'median K/s':>11} {'K/s/core':>9}")
    for v in variants:
        for job in jobs:
            rs = runs[(v.name, job)]
            best = max(r["eps"] for r in rs)
            med = statistics.median(r["eps"] for r in rs)
            per_core = statistics.median(r["eps"] / r["cores"] for r in rs)
            figures = f"{best / 1e3:9.1f} {med / 1e3:11.1f} {per_core / 1e3:9.1f}"
            print(f"{v.name:>10} {job:>6} {figures}")
    base = variants[0].name
    for v in variants[1:]:
        for job in jobs:
            new, old = runs[(v.name, job)], runs[(base, job)]
            ratio_best = max(r["eps"] for r in new) / max(r["eps"] for r in old)
            ratio_med = statistics.median(r["eps"] for r in new) / statistics.median(
                r["eps"] for r in old
            )
            print(
                f"ratio {v.name}/{base} {job:>6}: best {ratio_best:.2f}x, median {ratio_med:.2f}x"
            )


if __name__ == "__main__":
    main()

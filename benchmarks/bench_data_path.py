"""The data path, before and after: source-only, q0 and q5 on the same events, one run.

The same events are read in each variant's files in one sitting, on one embedded Flink:

- "csv": the CSV dataset (`--format csv`: epoch-millisecond times, Flink's `csv` format), the
  default before generator version 5;
- "parquet": the Parquet dataset (the default since version 5: zstd, ~64K-event row groups),
  read by Flink's `parquet` format (its vectorized reader);
- "main-11": the format and the setup of main before issue #11 (generator version 3): times
  written as text and parsed by Flink's CSV format, `pipeline.object-reuse` off (a copy of the
  CSV dataset's files with the text times, in the same layout).

For each, in rounds that alternate the variants (the machine's speed drifts):

- **source**: the protocol's source-only calibration job (protocol/suite/calibrate.py: one unscored
  read, then the timed one), the benchmark part read through the queries' source and
  discarded: its throughput from every task running to the job's end, as `nexmark run`
  records it;
- **q0**, **q5** (`--queries`): through the whole protocol (warm-up on the warm-up part, phase
  checkpoint, cancel, restore, benchmark phase, end checkpoint): the benchmark phase's
  throughput, as `nexmark run` scores it.

Printed: each run, the best and the median per variant, and the ratios to the first variant
(best, median, and median events per CPU-second: on a machine shared with other work, where the
engine gets anywhere between a fraction of a core and two, the per-core ratio is the steadier
one). Targets of #18 (parquet / csv): source >= 3x per CPU-second, q0 >= 2x, q5 >= 1.2x.

    .venv/bin/python benchmarks/bench_data_path.py [--events 8M] [--parallelism 2]
        [--repeat 2] [--variants csv,parquet] [--queries q0,q5] [--data-dir DIR]
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
from nexmark.protocol.preparation.options import ProtocolOptions
from nexmark.protocol.preparation.parts import PhaseParts
from nexmark.protocol.progress.display import RunDisplay
from nexmark.protocol.query.query_run import QueryRun
from nexmark.protocol.suite.calibrate import calibrate
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
    file_format: str  # the dataset's format ("csv" or "parquet")
    text_times: bool  # read the text-time copy (main's format) instead of the dataset
    csv_options: dict[str, str] | None  # None: the engine's current CSV options
    reset: dict[str, str] = field(default_factory=dict)  # job options set back to main's


VARIANTS = {
    "csv": Variant("csv", "csv", False, None),
    "parquet": Variant("parquet", "parquet", False, None),
    "main-11": Variant("main-11", "csv", True, MAIN_CSV_OPTIONS, {k: "false" for k in NEW_OPTIONS}),
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
    ap.add_argument("--variants", default="csv,parquet", help=f"of {', '.join(VARIANTS)}")
    ap.add_argument("--queries", default="q0,q5", help="queries run through the protocol")
    ap.add_argument(
        "--data-dir", type=Path, help="keep the dataset and its copy here, and reuse them"
    )
    args = ap.parse_args()
    variants = [VARIANTS[v] for v in args.variants.split(",")]
    queries = args.queries.split(",")

    root = args.data_dir or Path(tempfile.mkdtemp(prefix="nexmark-bench-data-path-"))
    try:
        datasets = {}
        for file_format in sorted({v.file_format for v in variants}):
            params = DatasetParams(
                events=parse_count(args.events), files=args.parallelism, format=file_format
            )
            t0 = time.perf_counter()
            ds = ensure_dataset(params, out=root / params.dataset_id, show_progress=False)
            datasets[file_format] = ds
            print(
                f"{file_format}: {ds.events:,} events, {ds.bytes / 1e9:.2f} GB, ready in "
                f"{time.perf_counter() - t0:.1f} s"
            )
        copy = None
        if any(v.text_times for v in variants):
            copy = text_time_copy(datasets["csv"], root)
        print(f"parallelism {args.parallelism}, load average {os.getloadavg()[0]:.2f}")
        base = [f"flink.parallelism.default={args.parallelism}"]
        options = ProtocolOptions(timeout_s=1800)
        runs: dict[tuple[str, str], list[dict]] = {}
        work = Path(tempfile.mkdtemp(prefix="nexmark-bench-data-path-work-"))
        with FlinkEngine(Settings.load(overrides=base)) as engine:
            for round_ in range(args.repeat):
                for v in variants:
                    configure(engine, base, v)
                    ds = datasets[v.file_format]
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
    print()
    base = variants[0].name
    for v in variants[1:]:
        for job in jobs:
            new, old = runs[(v.name, job)], runs[(base, job)]
            ratio_best = max(r["eps"] for r in new) / max(r["eps"] for r in old)
            ratio_med = statistics.median(r["eps"] for r in new) / statistics.median(
                r["eps"] for r in old
            )
            ratio_core = statistics.median(r["eps"] / r["cores"] for r in new) / statistics.median(
                r["eps"] / r["cores"] for r in old
            )
            print(
                f"ratio {v.name}/{base} {job:>6}: best {ratio_best:.2f}x, median {ratio_med:.2f}x,"
                f" per CPU-second {ratio_core:.2f}x"
            )


if __name__ == "__main__":
    main()

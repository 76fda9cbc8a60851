"""Flink's source on the same events as CSV, Parquet (none, snappy, zstd) and Avro, one sitting.

One CSV dataset is generated (`--events`, 2 files per part), and its warm-up part (90% of the
events) is written again, file by file, in each other format: the same events in the same files
in the same order. Then, on one embedded Flink (parallelism 2: two source readers, one file
each), in rounds that alternate the formats, two bounded jobs per format into the blackhole sink:

- **source**: `SELECT event_type, date_time FROM events` (the protocol's source-only job);
- **q0**: q0's projection of the bids (`SELECT auction, bidder, price, channel, url, date_time,
  extra FROM bid`).

Time is the source vertex's duration as Flink's REST API reports it (the whole job is one
chained vertex: source, watermark, filter, projection, sink), so the job's submission and
planning are left out; CPU is the gateway JVM's CPU seconds (psutil) over the job, everything
included. Printed: each run, then per format and job the median and best events/s and the median
events per CPU-second, with the load average of the machine.

    .venv/bin/python benchmarks/bench_formats.py [--events 8M] [--repeat 3]
        [--formats csv,parquet-none,parquet-snappy,parquet-zstd,avro] [--data-dir DIR]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import tempfile
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.csv as pacsv

from nexmark.engines.base import SOURCE_ONLY, JobSpec
from nexmark.engines.flink import FlinkEngine, files, jars
from nexmark.settings import Settings
from nexmark.workload import generator as gen
from nexmark.workload.dataset import DatasetParams
from nexmark.workload.schema import COLUMNS
from nexmark.workload.sizes import parse_count
from nexmark.workload.writer import ensure_dataset

FORMATS = ("csv", "parquet-none", "parquet-snappy", "parquet-zstd", "avro")
ROW_GROUP = 1 << 20  # rows per Parquet row group


def read_csv_file(path: Path) -> pa.Table:
    schema = gen.file_arrow_schema()
    table = pacsv.read_csv(
        path,
        read_options=pacsv.ReadOptions(column_names=[c.name for c in COLUMNS]),
        parse_options=pacsv.ParseOptions(quote_char=False),
        convert_options=pacsv.ConvertOptions(
            column_types={f.name: f.type for f in schema}, strings_can_be_null=True
        ),
    )
    schema = gen.file_arrow_schema()
    return table.rename_columns(schema.names).cast(schema)


def write_copies(csv_part: Path, root: Path, formats: list[str]) -> dict[str, Path]:
    """The CSV part's files in every format (one folder each); csv is the part itself."""
    parts = {"csv": csv_part}
    for name in formats:
        if name == "csv":
            continue
        out = root / name
        parts[name] = out
        if out.exists():
            continue
        tmp = root / f".{name}.tmp"
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir(parents=True)
        t0 = time.monotonic()
        for csv_file in sorted(csv_part.glob("*.csv")):
            table = read_csv_file(csv_file)
            if name.startswith("parquet-"):
                codec = name.split("-", 1)[1]
                target = tmp / csv_file.with_suffix(".parquet").name
                files.write_parquet(table, target, codec, ROW_GROUP)
            else:
                files.write_avro(table, tmp / csv_file.with_suffix(".avro").name)
        tmp.rename(out)
        size = sum(f.stat().st_size for f in out.iterdir())
        print(f"wrote {name}: {size / 1e6:,.0f} MB in {time.monotonic() - t0:.0f} s", flush=True)
    return parts


def run(engine: FlinkEngine, query: str, part: Path, work: Path) -> dict:
    spec = (
        JobSpec(SOURCE_ONLY, part, work, source_only=True)
        if query == "source"
        else JobSpec(query, part, work)
    )
    cpu0 = engine.cpu_seconds()
    job = engine.submit(spec)
    while not job.status().state.terminal:
        time.sleep(0.2)
    cpu = engine.cpu_seconds() - cpu0
    status = job.status()
    if status.state.value != "finished":
        raise SystemExit(f"{query} on {part}: {status.state.value}: {status.failure}")
    details = engine.rest.get(f"/jobs/{job.id}")
    source = next(v for v in details["vertices"] if v["name"].startswith("Source: events"))
    return {"seconds": source["duration"] / 1000, "cpu": cpu}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--events", default="8M", help="dataset size; the warm-up part is read")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--formats", default=",".join(FORMATS))
    ap.add_argument("--queries", default="source,q0")
    ap.add_argument("--data-dir", type=Path, default=None, help="keep the data here")
    args = ap.parse_args()
    formats = args.formats.split(",")
    events = parse_count(args.events)
    params = DatasetParams(events=events, files=2, warmup_fraction=0.9)
    root = args.data_dir or Path(tempfile.mkdtemp(prefix="nexmark-bench-formats-"))
    try:
        ds = ensure_dataset(params, out=root / params.dataset_id, show_progress=False)
        part_events = ds.manifest["parts"]["warmup"]["events"]
        parts = write_copies(ds.part_dir("warmup"), root / f"{params.dataset_id}-copies", formats)
        settings = Settings.load(overrides=["flink.parallelism.default=2"])
        engine = FlinkEngine(settings)
        engine.jar_groups = (*jars.DEFAULT_GROUPS, "avro")
        results: dict[tuple[str, str], list[dict]] = {}
        with engine:
            engine.start()
            work = root / "work"
            for round_ in range(args.repeat):
                for name in formats:
                    for query in args.queries.split(","):
                        shutil.rmtree(work, ignore_errors=True)
                        r = run(engine, query, parts[name], work)
                        r["load"] = os.getloadavg()[0]
                        results.setdefault((name, query), []).append(r)
                        print(
                            f"round {round_ + 1} {name:15} {query:6} {r['seconds']:6.2f} s "
                            f"{part_events / r['seconds'] / 1e3:8.0f} K/s  cpu {r['cpu']:6.2f} s "
                            f"{part_events / r['cpu'] / 1e3:6.0f} K/cpu-s  load {r['load']:.1f}",
                            flush=True,
                        )
        print(f"\n{part_events:,} events, 2 files, parallelism 2")
        print(f"{'format':15} {'job':6} {'median K/s':>10} {'best K/s':>9} {'K/cpu-s':>8} load")
        for (name, query), rs in results.items():
            rates = [part_events / r["seconds"] for r in rs]
            per_cpu = statistics.median(part_events / r["cpu"] for r in rs)
            loads = [r["load"] for r in rs]
            print(
                f"{name:15} {query:6} {statistics.median(rates) / 1e3:10.0f} "
                f"{max(rates) / 1e3:9.0f} {per_cpu / 1e3:8.0f} "
                f"{min(loads):.1f}-{max(loads):.1f}"
            )
    finally:
        if args.data_dir is None:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()

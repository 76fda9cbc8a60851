"""`nexmark generate` and `nexmark dataset verify`."""

from __future__ import annotations

import time
from typing import Annotated

import typer

from nexmark import console
from nexmark.cli import options as opt
from nexmark.errors import DatasetError
from nexmark.workload import generator as gen
from nexmark.workload.dataset import (
    DEFAULT_FORMAT,
    Dataset,
    DatasetParams,
    default_files,
    parse_time,
)
from nexmark.workload.writer import ensure_dataset


def _count_of(flag: str, what: str, **typer_args: object) -> object:
    """A whole-number option of the dataset's layout (files, slices, workers)."""
    return opt.option(flag, parse=opt.parse_int, metavar="N", help=what, **typer_args)


# generate's own flags (the shared ones are in cli/options.py).
Files = Annotated[
    int | None,
    _count_of("--files", "Files per time slice, one per source reader (default: number of cores)."),
]
Slices = Annotated[
    int,
    _count_of(
        "--slices", "Time slices per part (1: every file spans the part; more for micro-batches)."
    ),
]
BenchmarkSlices = Annotated[
    int | None,
    _count_of(
        "--benchmark-slices",
        "Time slices of the benchmark part alone (default: --slices): finer steps for a "
        "phase released at a set rate (nexmark run --rate).",
    ),
]
Workers = Annotated[
    int | None,
    _count_of("--workers", "Processes (default: number of cores, at most one per 1M events)."),
]
BaseTime = Annotated[str, typer.Option(metavar="TIME", help="Event time of the first event (UTC).")]


def generate(
    events: opt.Events = "1M",
    out: opt.Data = None,
    seed: opt.Seed = gen.DEFAULT_SEED,
    warmup_fraction: opt.WarmupFraction = 0.75,
    files: Files = None,
    slices: Slices = 1,
    benchmark_slices: BenchmarkSlices = None,
    workers: Workers = None,
    event_rate: opt.EventRate = "100K",
    base_time: BaseTime = "2024-01-01 00:00:00",
    file_format: opt.Format = DEFAULT_FORMAT,
) -> None:
    """Generate a Nexmark dataset (warm-up and benchmark parts), or reuse an identical one."""
    params = DatasetParams(
        events=events,
        seed=seed,
        warmup_fraction=warmup_fraction,
        files=default_files() if files is None else files,
        slices=slices,
        benchmark_slices=benchmark_slices,
        rate=event_rate,
        base_time=parse_time(base_time),
        format=file_format,
    )
    started = time.perf_counter()
    dataset = ensure_dataset(params, out, workers)
    seconds = time.perf_counter() - started
    _summary(dataset, seconds, dataset.reused)


def _summary(dataset: Dataset, seconds: float, reused: bool) -> None:
    human = console.human_count
    counts = ", ".join(f"{human(v)} {k}{'s' * (v != 1)}" for k, v in dataset.counts.items())
    warmup = dataset.part_range("warmup")[1]
    lines = [
        f"dataset   {dataset.path}",
        f"events    {human(dataset.events)} ({counts})",
        f"parts     warmup {human(warmup)}, benchmark {human(dataset.events - warmup)}",
        f"files     {dataset.params.slices} x {dataset.params.files} per part (slices x "
        f"stripes), {_format_words(dataset)}, {console.human_bytes(dataset.bytes)}",
    ]
    if dataset.params.benchmark_slices is not None:
        lines.append(f"          benchmark part: {dataset.params.benchmark_slices} slices")
    if reused:
        lines.append(f"reused    an identical dataset (checked in {seconds:.1f} s)")
    else:
        rate = dataset.events / max(seconds, 1e-9)
        lines.append(f"time      {seconds:.1f} s, {human(rate)} events/s")
    console.out.print("\n".join(lines), highlight=False)


def _format_words(dataset: Dataset) -> str:
    facts = dataset.file_format
    if facts.get("name") == "parquet":
        return f"Parquet ({facts.get('compression')})"
    return str(facts.get("name", dataset.format)).upper()


def dataset_verify(
    directory: str = typer.Argument(..., help="The dataset directory or s3://bucket/prefix."),
) -> None:
    """Recompute checksums and event counts of every file and compare them to the manifest."""
    dataset = Dataset(directory)
    with console.progress() as bar:
        task = bar.add_task(
            "verifying", total=dataset.bytes, unit="bytes", cpu=console.process_tree_cpu
        )
        dataset.verify(lambda k: bar.advance(task, k))
    files = len(dataset.files())
    if files == 0:
        raise DatasetError(f"{directory}: the manifest lists no files")
    console.out.print(
        f"ok        {dataset.path}: {files} files, {console.human_count(dataset.events)} events, "
        f"{console.human_bytes(dataset.bytes)} match the manifest",
        highlight=False,
    )

"""`nexmark generate` and `nexmark dataset verify`."""

from __future__ import annotations

import time

import typer

from nexmark import console
from nexmark.cli.app import app
from nexmark.errors import DatasetError
from nexmark.workload import generator as gen
from nexmark.workload.dataset import (
    DEFAULT_FORMAT,
    Dataset,
    DatasetParams,
    default_files,
    parse_time,
)
from nexmark.workload.sizes import parse_count
from nexmark.workload.writer import ensure_dataset

dataset_app = typer.Typer(help="Inspect and check generated datasets.", no_args_is_help=True)
app.add_typer(dataset_app, name="dataset")


@app.command()
def generate(
    events: str = typer.Option("1M", "--events", "-n", help="Number of events: 200M, 1.5K, 1e6."),
    out: str = typer.Option(  # a str: Path would fold s3://bucket into s3:/bucket
        None,
        "--out",
        "--data",
        "-o",
        help="Dataset directory or s3://bucket/prefix (default: a cache dir keyed by the "
        "parameters).",
    ),
    seed: int = typer.Option(gen.DEFAULT_SEED, help="Seed of every random choice."),
    warmup_fraction: float = typer.Option(0.75, help="Share of events in the warm-up part."),
    files: int = typer.Option(
        None, help="Files per time slice, one per source reader (default: number of cores)."
    ),
    slices: int = typer.Option(
        1, help="Time slices per part (1: every file spans the part; more for micro-batches)."
    ),
    benchmark_slices: int = typer.Option(
        None,
        help="Time slices of the benchmark part alone (default: --slices): finer steps for a "
        "phase released at a set rate (nexmark run --rate).",
    ),
    workers: int = typer.Option(
        None, help="Processes (default: number of cores, at most one per 1M events)."
    ),
    event_rate: str = typer.Option(
        "100K", help="Events per second of event time (the dataset's, not a feeding rate)."
    ),
    base_time: str = typer.Option(
        "2024-01-01 00:00:00", help="Event time of the first event (UTC)."
    ),
    file_format: str = typer.Option(
        DEFAULT_FORMAT, "--format", help="File format: parquet, or csv (the same events)."
    ),
) -> None:
    """Generate a Nexmark dataset (warm-up and benchmark parts), or reuse an identical one."""
    params = DatasetParams(
        events=parse_count(events, "--events"),
        seed=seed,
        warmup_fraction=warmup_fraction,
        files=default_files() if files is None else files,
        slices=slices,
        benchmark_slices=benchmark_slices,
        rate=parse_count(event_rate, "--event-rate"),
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


@dataset_app.command("verify")
def verify(
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

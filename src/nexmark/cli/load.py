"""`nexmark load`: write a dataset's events into Kafka topics once, or check such a load.

A plain function over the library, registered by cli/app.py (`app.command("load")`)."""

from __future__ import annotations

import functools
from pathlib import Path

import typer

from nexmark import console
from nexmark.cli import options as opt
from nexmark.errors import DiskFullError, Interrupted
from nexmark.sources.kafka import load as kload
from nexmark.sources.kafka.broker import (
    EmbeddedBroker,
    KafkaError,
    default_work_dir,
    open_cluster,
)
from nexmark.workload.dataset import Dataset


def load_command(
    directory: Path = typer.Argument(..., help="The dataset directory (nexmark generate)."),
    partitions: int = typer.Option(
        None,
        help="Partitions of each topic, the parallelism the load is for (default: the "
        "dataset's files per part, one per reader).",
    ),
    kafka_bootstrap: opt.KafkaBootstrap = None,  # (shared with run and verify)
    kafka_dir: opt.KafkaDir = None,
    kafka_port: int = typer.Option(
        None, "--kafka-port", help="The embedded broker's port on 127.0.0.1 (default: a free one)."
    ),
    check: bool = typer.Option(
        False, "--check", help="Load nothing: check that a complete load exists and matches."
    ),
    parallelism: int = typer.Option(
        None, help="With --check: the readers the load must serve (default: --partitions)."
    ),
) -> None:
    """Load a dataset into Kafka (warm-up and benchmark topics), verified, reused when present."""
    dataset = Dataset(directory)
    partitions = partitions or dataset.params.files
    cluster = open_cluster(kafka_bootstrap, kafka_dir or default_work_dir(), kafka_port)
    try:
        bootstrap = cluster.start()
        if check:
            found = kload.find_load(bootstrap, dataset, parallelism or partitions)
            _summary(found, bootstrap, None)
        else:
            result = _load(cluster, bootstrap, dataset, partitions)
            _summary(result.manifest, bootstrap, result)
    except KeyboardInterrupt:  # Ctrl-C or SIGTERM (Typer would exit 130 without a word)
        raise Interrupted(
            "interrupted: a load begun stays incomplete (its manifest says loading) and is "
            "done again by the next nexmark load"
        ) from None
    finally:
        cluster.stop()


def _load(cluster, bootstrap: str, dataset: Dataset, partitions: int) -> kload.LoadResult:
    """The load, with progress (events, rate, cores) while it runs."""
    embedded = isinstance(cluster, EmbeddedBroker)
    with console.progress() as bar:
        # The embedded broker is a child of this process: its CPU is counted too.
        task = bar.add_task(
            "loading", total=dataset.events, unit="events", cpu=console.process_tree_cpu
        )
        try:
            return kload.load_dataset(
                bootstrap,
                dataset,
                partitions,
                on_events=lambda n: bar.advance(task, n),
                broker_alive=cluster.alive if embedded else None,
                data_dir_free=(
                    functools.partial(kload.check_free_space, cluster.data_dir)
                    if embedded
                    else None
                ),
            )
        except KafkaError as exc:
            raise _why_broker_stopped(cluster, exc) from None


def _why_broker_stopped(cluster, exc: KafkaError) -> Exception:
    """A broker that died of a full disk: the line names the disk (`disk_full_reason`)."""
    if isinstance(cluster, EmbeddedBroker):
        reason = cluster.disk_full_reason()
        if reason:
            return DiskFullError(f"{reason}; the load stays incomplete")
    return exc


def _summary(manifest: kload.LoadManifest, bootstrap: str, result) -> None:
    human = console.human_count
    lines = [
        f"load      {manifest.load_id} at {bootstrap} ({manifest.state})",
        *(
            f"topic     {topic}: {human(sum(manifest.counts[part]))} events in "
            f"{manifest.partitions} partitions"
            for part, topic in manifest.topics.items()
        ),
        f"records   {manifest.record_format} lines, one event each",
    ]
    if result is None:
        lines.append("checked   every partition's offsets match the load's manifest")
    elif result.reused:
        lines.append(f"reused    a complete load (checked in {result.seconds:.1f} s)")
    else:
        rate = manifest.events / max(result.seconds, 1e-9)
        lines.append(
            f"time      {result.seconds:.1f} s, {human(rate)} events/s, "
            f"{console.human_bytes(result.bytes)} of records"
        )
    console.out.print("\n".join(lines), highlight=False)

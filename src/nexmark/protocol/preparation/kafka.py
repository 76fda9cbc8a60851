"""A run that reads Kafka (`--source kafka`): the cluster it reads, the load of its dataset,
and each part's `KafkaSource` (docs/kafka.md).

`open_kafka` starts the embedded broker (or checks that the user's cluster answers) before the
dataset is generated, so an unreachable `--kafka-bootstrap` fails in one line before any work;
`KafkaParts.load` then finds the dataset's complete load or loads it (with progress, as
`nexmark load` does). The broker is stopped by `KafkaParts.close`, which every command that
prepared a run calls in a `finally` (Ctrl-C and SIGTERM raise KeyboardInterrupt: the same path).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from nexmark import console
from nexmark.engines.source import KafkaSource
from nexmark.errors import DiskFullError
from nexmark.sources.kafka import load as kload
from nexmark.sources.kafka.broker import (
    EmbeddedBroker,
    ExternalCluster,
    KafkaError,
    default_work_dir,
    open_cluster,
)
from nexmark.workload.dataset import Dataset

PARTS = ("warmup", "benchmark")


@dataclass
class KafkaParts:
    """The cluster a run reads and, once loaded, the topic of each dataset part."""

    cluster: EmbeddedBroker | ExternalCluster
    bootstrap: str
    sources: dict[str, KafkaSource] = field(default_factory=dict)

    @property
    def embedded(self) -> bool:
        return isinstance(self.cluster, EmbeddedBroker)

    def source(self, part: str) -> KafkaSource:
        """The topic of `part` ("warmup", "benchmark")."""
        return self.sources[part]

    def load(self, dataset: Dataset, readers: int, show: Callable[[str], None]) -> None:
        """Find the dataset's complete load for `readers` partitions, else load it (one
        partition per reader: each partition read by one reader, so readers advance event time
        together)."""
        try:
            manifest = kload.find_load(self.bootstrap, dataset, readers)
            if manifest.partitions != readers:
                raise KafkaError("a load with more partitions than readers")  # load our own
            how = "found"
        except KafkaError:
            manifest = self._load(dataset, readers)
            how = "loaded"
        self.sources = {
            part: KafkaSource(
                bootstrap=self.bootstrap,
                topic=manifest.topics[part],
                part=part,
                partitions=manifest.partitions,
                counts=tuple(manifest.counts[part]),
                load_id=manifest.load_id,
                format=manifest.record_format,
            )
            for part in PARTS
        }
        where = "embedded broker" if self.embedded else "cluster"
        show(
            f"kafka: {how} load {manifest.load_id} at {self.bootstrap} ({where}), "
            f"{manifest.partitions} partitions per part"
        )

    def _load(self, dataset: Dataset, partitions: int) -> kload.LoadManifest:
        embedded = self.embedded
        with console.progress() as bar:
            task = bar.add_task(
                "loading Kafka", total=dataset.events, unit="events", cpu=console.process_tree_cpu
            )
            try:
                return kload.load_dataset(
                    self.bootstrap,
                    dataset,
                    partitions,
                    on_events=lambda n: bar.advance(task, n),
                    broker_alive=self.cluster.alive if embedded else None,
                    data_dir_free=(
                        functools.partial(kload.check_free_space, self.cluster.data_dir)
                        if embedded
                        else None
                    ),
                ).manifest
            except KafkaError as exc:
                reason = self.cluster.disk_full_reason() if embedded else None
                if reason:
                    raise DiskFullError(f"{reason}; the load stays incomplete") from None
                raise exc from None

    def cpu_seconds(self) -> float | None:
        """The embedded broker's CPU seconds so far; None for a user's cluster (not ours to
        measure, and never 0)."""
        return self.cluster.cpu_seconds() if self.embedded else None

    def close(self) -> None:
        """Stop the embedded broker (its topics stay in its directory); nothing for a user's
        cluster. Safe to call twice."""
        self.cluster.stop()


def open_kafka(bootstrap: str | None, kafka_dir: Path | None) -> KafkaParts:
    """Start the embedded broker, or check that the user's cluster answers (KafkaError: one
    line). The caller closes it."""
    cluster = open_cluster(bootstrap, kafka_dir or default_work_dir())
    try:
        address = cluster.start()
    except BaseException:
        cluster.stop()
        raise
    return KafkaParts(cluster, address)

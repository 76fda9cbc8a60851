"""What a job reads, described engine-neutrally (`JobSpec.source`).

Two kinds: a dataset part's files in one folder (`FileSource`: a local path, or an
object-store prefix such as `s3://bucket/dataset/warmup`, an `S3Url`), and a part loaded into
a Kafka topic by `nexmark load` (`KafkaSource`). The description names a place, not a
mechanism: an engine reads the kinds it supports and refuses the others in one line
(`local_folder`, `kafka_topic`), as it refuses a format it cannot read.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from nexmark.errors import EngineError
from nexmark.storage.files import Location, location
from nexmark.storage.s3 import S3Url


@dataclass(frozen=True)
class FileSource:
    """A dataset part's data files: one folder (a local path, or an object-store prefix).

    Attributes:
        location: The part's folder: a local path (/data/ds-1/warmup) or an S3Url
            (s3://bucket/ds-1/warmup), as the protocol has it; a caller's text is parsed
            once, when the source is made. The part's name is its last segment.
        format: The files' format ("parquet", "csv"); None: the part's own (its dataset's
            manifest, else its files' suffix), as the engine finds it.
    """

    location: Location
    format: str | None = None

    kind: ClassVar[str] = "files"

    def __post_init__(self) -> None:
        object.__setattr__(self, "location", location(self.location))

    @classmethod
    def of(cls, part: Location | str | os.PathLike[str], format: str | None = None) -> FileSource:
        """The source of a part folder given as a path, an S3Url (or a URL string)."""
        return cls(part, format)

    @property
    def is_local(self) -> bool:
        """A folder on this machine (not on an object store)."""
        return isinstance(self.location, Path)

    @property
    def path(self) -> Path:
        """The local folder. Raises EngineError for a prefix on a store: read it with
        `local_folder` to name the engine that cannot."""
        if not isinstance(self.location, Path):
            raise EngineError(f"{self.location} is not a local folder")
        return self.location

    @property
    def part(self) -> str:
        """The part's name: the location's last segment ("warmup", "benchmark")."""
        return self.location.name

    def __str__(self) -> str:
        return str(self.location)


@dataclass(frozen=True)
class KafkaSource:
    """A dataset part loaded into one Kafka topic (`nexmark load`, sources/kafka/).

    Each record's value is the dataset's CSV line; partition p holds blocks p, p + n, ... of
    the part in event order (docs/kafka.md), so every partition spans the part's event time.

    Attributes:
        bootstrap: The brokers' addresses ("127.0.0.1:9092,...").
        topic: The part's topic.
        part: The dataset part it holds ("warmup", "benchmark").
        partitions: The topic's partitions (the load's; readers = partitions at most).
        counts: Records per partition, as the load verified them: the end offsets a reader
            that read the whole part holds (the restore proof compares them).
        load_id: The load's identity (its manifest in the `nexmark-loads` topic).
        format: The record value's format ("csv").
    """

    bootstrap: str
    topic: str
    part: str
    partitions: int
    counts: tuple[int, ...]
    load_id: str
    format: str = "csv"

    kind: ClassVar[str] = "kafka"

    @property
    def events(self) -> int:
        """The part's events: the sum of its partitions' records."""
        return sum(self.counts)

    @property
    def location(self) -> str:
        """Where it is, as a result records it: kafka://<first broker>/<topic>."""
        return f"kafka://{self.bootstrap.split(',')[0]}/{self.topic}"

    def __str__(self) -> str:
        return self.location


# Every kind of source a JobSpec can carry.
Source = FileSource | KafkaSource


def as_source(value: Source | Location | str | os.PathLike[str]) -> Source:
    """`value` as a Source: a Source unchanged, a path or an S3Url (or a URL string) as a
    FileSource. What callers that still hand a part folder's location go through."""
    if isinstance(value, (FileSource, KafkaSource)):
        return value
    if isinstance(value, (str, os.PathLike, S3Url)):
        return FileSource.of(value)
    raise TypeError(f"not a job source: {value!r}")


def local_folder(source: Source | str | os.PathLike[str], engine: str) -> Path:
    """The local folder an engine that reads only local files reads, or one line naming what it
    cannot read (EngineError)."""
    src = as_source(source)
    if src.kind != FileSource.kind or not src.is_local:
        raise EngineError(f"{engine} reads dataset parts from local folders only, not {src}")
    return src.path


def file_part(source: Source | str | os.PathLike[str], engine: str, on_store: bool) -> Path | S3Url:
    """The folder (or object-store prefix) an engine's file source reads: an `s3://` part
    for an engine set up for a store (`use_object_store`), else a local folder; one line
    (EngineError) for what it cannot read."""
    src = as_source(source)
    if isinstance(src, FileSource) and isinstance(src.location, S3Url):
        if not on_store:
            raise EngineError(
                f"{src}: this {engine} engine was not set up for an object store "
                "(nexmark run/verify --data s3://... does it)"
            )
        return src.location
    return local_folder(src, engine)


def kafka_topic(source: Source | str | os.PathLike[str], engine: str) -> KafkaSource:
    """The topic an engine that reads Kafka reads, or one line naming what it was given."""
    src = as_source(source)
    if not isinstance(src, KafkaSource):
        raise EngineError(f"{engine} was given {src} where a Kafka topic was expected")
    return src

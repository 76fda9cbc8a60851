"""What a job reads, described engine-neutrally (`JobSpec.source`).

Today every source is a dataset part's files in a local folder (`FileSource`). The description
names a place, not a mechanism, so that other kinds fit beside it without changing the
interface: an object-store prefix is a `FileSource` whose location is a URL
(`s3://bucket/dataset/warmup`), and a Kafka topic will be a `KafkaSource(bootstrap, topic,
partitions, ...)` of its own `kind`. An engine reads the kinds it supports and refuses the
others in one line (`local_folder`), as it refuses a format it cannot read.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from nexmark.errors import EngineError

# "scheme://" opens a URL location; anything else is a local path.
_URL_MARK = "://"


@dataclass(frozen=True)
class FileSource:
    """A dataset part's data files: one folder (a local path, or later an object-store URL).

    Attributes:
        location: The part's folder: a local path ("/data/ds-1/warmup") or a URL
            ("s3://bucket/ds-1/warmup"); the part's name is its last segment.
        format: The files' format ("parquet", "csv"); None: the part's own (its dataset's
            manifest, else its files' suffix), as the engine finds it.
    """

    location: str
    format: str | None = None

    kind: ClassVar[str] = "files"

    @classmethod
    def of(cls, part: str | os.PathLike[str], format: str | None = None) -> FileSource:
        """The source of a part folder given as a path (or a URL string)."""
        return cls(os.fspath(part), format)

    @property
    def is_local(self) -> bool:
        """A folder on this machine (not a URL)."""
        return _URL_MARK not in self.location

    @property
    def path(self) -> Path:
        """The local folder. Raises EngineError for a URL: read it with `local_folder` to name
        the engine that cannot."""
        if not self.is_local:
            raise EngineError(f"{self.location} is not a local folder")
        return Path(self.location)

    @property
    def part(self) -> str:
        """The part's name: the location's last segment ("warmup", "benchmark")."""
        return self.location.rstrip("/").rsplit("/", 1)[-1]

    def __str__(self) -> str:
        return self.location


# Every kind of source a JobSpec can carry (a union once Kafka topics join).
Source = FileSource


def as_source(value: Source | str | os.PathLike[str]) -> Source:
    """`value` as a Source: a Source unchanged, a path (or a URL string) as a FileSource. What
    callers that still hand a part folder's path go through."""
    if isinstance(value, FileSource):
        return value
    if isinstance(value, (str, os.PathLike)):
        return FileSource.of(value)
    raise TypeError(f"not a job source: {value!r}")


def local_folder(source: Source | str | os.PathLike[str], engine: str) -> Path:
    """The local folder an engine that reads only local files reads, or one line naming what it
    cannot read (EngineError)."""
    src = as_source(source)
    if src.kind != FileSource.kind or not src.is_local:
        raise EngineError(f"{engine} reads dataset parts from local folders only, not {src}")
    return src.path

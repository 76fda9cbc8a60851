"""What a job reads: a dataset part's files and facts (`PartFeed`), and the folder its source
watches, where the files appear only when released (`Feed`).

Engines get a part's facts from `PartFeed` instead of globbing a directory and counting lines:
the same for every engine (from the dataset's manifest, or from the files when a folder is not
a dataset's part, as in tests), whatever the format. A `Feed` hands the files to a job: the
job's source watches `Feed.dir`, empty until `release()` links files in, each appearing whole
and at once, in event order. Each engine's job releases it at its own cue: Flink's status
poll once every task of the job runs (a reader that registered late would otherwise find every
file taken), Spark before its query starts (its micro-batches take whole time slices).
`release(files)` takes any subset, so a feed released on a clock (a set event rate) is the
same object.
"""

from __future__ import annotations

import contextlib
import os
import shutil
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from nexmark.errors import DatasetError, UsageError
from nexmark.workload.dataset import FORMATS, Dataset, part_format


@dataclass(frozen=True)
class FeedFile:
    """One data file of a part, in event order (slice, then stripe)."""

    path: Path  # absolute
    events: int
    first_date_time: str | None = None  # as the manifest writes it; None if unknown or empty
    last_date_time: str | None = None


@dataclass(frozen=True)
class PartFeed:
    """The files of one dataset part, in the order their names sort (slice, then stripe)."""

    dir: Path
    format: str  # "parquet" or "csv"
    files: tuple[FeedFile, ...]

    @classmethod
    def of(cls, part_dir: str | os.PathLike) -> PartFeed:
        """The part at `part_dir`: facts from its dataset's manifest, else from the files."""
        folder = Path(part_dir).resolve()
        file_format = part_format(folder)
        with contextlib.suppress(DatasetError, KeyError, UsageError):
            dataset = Dataset(folder.parent)
            files = tuple(
                FeedFile(f.path, f.events, *_times(dataset, f.part, f.path))
                for f in dataset.files(folder.name)
            )
            return cls(folder, file_format, files)
        paths = sorted(p for p in folder.glob("*") if p.suffix[1:] in FORMATS)
        return cls(folder, file_format, tuple(FeedFile(p, count_events(p)) for p in paths))

    @property
    def events(self) -> int:
        return sum(f.events for f in self.files)

    def events_by_name(self) -> dict[str, int]:
        """File name -> events: what an engine that links the files elsewhere looks up."""
        return {f.path.name: f.events for f in self.files}


def _times(dataset: Dataset, part: str, path: Path) -> tuple[str | None, str | None]:
    for entry in dataset.manifest["parts"][part]["files"]:
        if dataset.path / entry["path"] == path:
            return entry.get("first_date_time"), entry.get("last_date_time")
    return None, None


def count_events(path: Path) -> int:
    """Events in one data file: a Parquet file's row count, a CSV file's lines."""
    path = Path(path)
    if path.suffix == ".parquet":
        import pyarrow as pa
        import pyarrow.parquet as pq

        try:
            return pq.ParquetFile(path).metadata.num_rows
        except (OSError, pa.ArrowException) as exc:
            raise DatasetError(f"{path}: not a readable Parquet file ({exc})") from None
    with path.open("rb") as fh:
        return sum(chunk.count(b"\n") for chunk in iter(lambda: fh.read(1 << 20), b""))


class Feed:
    """The files of `part`, released into the folder `into` under `prefix` + their names.

    Args:
        part: The part's files and facts.
        into: The folder the job's source watches (made if missing).
        prefix: Put before each file's name there (two parts fed into one folder).
        fresh: Empty `into` first (a job's own folder); False keeps what is there (a folder
            that already holds a previous part's released files, or a retried submission's).
    """

    def __init__(self, part: PartFeed, into: Path, prefix: str = "", fresh: bool = True):
        self.part = part
        self.dir = Path(into).resolve()
        if fresh:
            shutil.rmtree(self.dir, ignore_errors=True)
        self.dir.mkdir(parents=True, exist_ok=True)
        self._target = {f.path: self.dir / f"{prefix}{f.path.name}" for f in part.files}
        self._released: set[Path] = {f.path for f in part.files if self._target[f.path].exists()}

    @property
    def paths(self) -> list[Path]:
        """Every file's path as the job sees it, in event order."""
        return [self._target[f.path] for f in self.part.files]

    @property
    def file_events(self) -> dict[Path, int]:
        """Events of each file, by the path the job reads it under."""
        return {self._target[f.path]: f.events for f in self.part.files}

    @property
    def released(self) -> bool:
        """Every file is in the folder."""
        return len(self._released) == len(self.part.files)

    def release(self, files: Iterable[FeedFile] | None = None) -> list[Path]:
        """Link `files` (default: every file not yet released) in, in event order; returns
        the paths that appeared. A link is made under a hidden name, then renamed: a listing
        never sees half a file. Hard links (the dataset is untouched), else symbolic ones."""
        chosen = self.part.files if files is None else tuple(files)
        made = []
        for f in chosen:
            if f.path in self._released:
                continue
            target = self._target[f.path]
            _link_atomically(f.path, target)
            self._released.add(f.path)
            made.append(target)
        return made


def _link_atomically(source: Path, target: Path) -> None:
    hidden = target.with_name(f".{target.name}.tmp")
    hidden.unlink(missing_ok=True)
    try:
        os.link(source, hidden)
    except OSError:
        try:  # another file system, or hard links not allowed there
            hidden.symlink_to(source)
        except OSError as exc:
            raise DatasetError(f"cannot link {source} into {target.parent}: {exc}") from None
    os.replace(hidden, target)

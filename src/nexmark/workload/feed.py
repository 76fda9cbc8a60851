"""What a job reads: a dataset part's files, their format, and each file's events and times.

Engines get a part as a `PartFeed` instead of globbing a directory and counting lines
themselves: the same facts for every engine (from the dataset's manifest, or from the files
when a folder is not a dataset's part, as in tests), whatever the format.
"""

from __future__ import annotations

import contextlib
import os
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

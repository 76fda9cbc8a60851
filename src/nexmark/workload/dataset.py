"""A dataset on disk: parameters, the manifest, and checks against it.

Layout (docs/dataset-format.md)::

    DIR/manifest.json
    DIR/warmup/part-SSSSS-FFF.parquet ...     events [0, W), W = floor(events * warmup_fraction)
    DIR/benchmark/part-SSSSS-FFF.parquet ...  events [W, events)

Files are Parquet by default (columns straight from the generator's arrays, read by every
engine's own columnar reader), or CSV (`format="csv"`): the same events either way.

A part is cut into `slices` contiguous time slices (1 by default; more for engines that read
files in time order in micro-batches), and each slice into `files` stripes, one per source
reader: blocks of BLOCK_MS of event time go to the stripes in turn. So every file of a
slice spans the slice's whole event-time range, in event order, and parallel readers advance
event time together as the partitions of a production stream do (a reader holding only the
earliest events would hold the job's watermark, the minimum over readers, back). Writing
(writer.py) happens in a temporary directory renamed into place at the end, so a directory with
a manifest is complete. A dataset may also live at `s3://bucket/prefix` (`nexmark.storage`):
there the files are written first and the manifest last, so the same holds.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import asdict, dataclass, field
from datetime import datetime, timedelta, timezone
from fractions import Fraction
from pathlib import Path

import numpy as np
import xxhash

from nexmark.errors import DatasetError, UsageError
from nexmark.storage import files as storage
from nexmark.storage.s3 import S3Url, check_store
from nexmark.workload import generator as gen

PARTS = ("warmup", "benchmark")
MANIFEST = "manifest.json"
MANIFEST_VERSION = 2  # 1: first format; 2: file checksums are xxh3_128 (was sha256)
# File checksums, by the manifest key that holds them. They guard against damaged or truncated
# files, not against tampering: xxh3_128 runs at about 10 GB/s where sha256 ran at 1.2 GB/s
# (it took a fifth of the time of generating a dataset). Manifests of version 1 (sha256)
# are still read and verified.
CHECKSUMS = {"xxh3_128": xxhash.xxh3_128, "sha256": hashlib.sha256}
CHECKSUM = "xxh3_128"  # the one written
KIND_NAMES = ("person", "auction", "bid")
TIME_FORMAT = "%Y-%m-%d %H:%M:%S.%f"  # printed with milliseconds, as in the CSV files
# Consecutive events that go to one stripe (file) before the next: 10 ms of event time (1,000
# events at the default rate, a multiple of 50, so every file has the same mix of kinds).
# Readers that read at the same pace stay within (files - 1) blocks of event time of each other.
BLOCK_MS = 10
MIN_BLOCKS = 8  # blocks per file at least, so that small parts still interleave

FORMATS = ("parquet", "csv")
DEFAULT_FORMAT = "parquet"
# Parquet files: compression and row-group size are facts of the format at this generator
# version (recorded in the manifest), chosen by measurement (docs/data-path.md): zstd gives the
# smallest files and was read as fast as any codec. A row group is whole stripe blocks of about
# 64K events: a reader restored inside a row group decodes and skips at most that many.
PARQUET_COMPRESSION = "zstd"
ROW_GROUP_EVENTS = 1 << 16


def check_format(name: str) -> str:
    """`name` if it is a dataset file format; else a UsageError naming the known ones."""
    if name not in FORMATS:
        raise UsageError(f"unknown dataset format {name!r}; expected one of {', '.join(FORMATS)}")
    return name


def default_files() -> int:
    """Files per part by default: the number of cores (Flink's default parallelism)."""
    return os.cpu_count() or 1


def format_time(epoch_ms: int) -> str:
    """'2024-01-01 00:00:00.000' for epoch milliseconds (UTC, no zone, as in the CSV)."""
    t = datetime(1970, 1, 1) + timedelta(milliseconds=int(epoch_ms))
    return t.strftime(TIME_FORMAT)[:-3]


def parse_time(text: str) -> datetime:
    """The inverse of format_time (also accepts ISO forms like '2024-01-01T00:00:00')."""
    try:
        t = datetime.fromisoformat(text.strip())
    except ValueError:
        raise UsageError(f"not a time: {text!r} (expected YYYY-MM-DD HH:MM:SS[.mmm])") from None
    return t.astimezone(timezone.utc).replace(tzinfo=None) if t.tzinfo else t


@dataclass(frozen=True)
class DatasetParams:
    """Everything a dataset's bytes and layout depend on (with the generator version).

    Args:
        events: Number of events, > 0.
        seed: Seed of every random choice.
        warmup_fraction: Share of events in the warm-up part, strictly between 0 and 1.
        files: Files per time slice, one per source reader (stripes of the slice's events),
            default the number of cores.
        slices: Contiguous time slices per part (1: each file spans the whole part).
        benchmark_slices: Time slices of the benchmark part alone (None: `slices`): a finer
            benchmark part for a phase released at a set rate (one slice a step), while the
            warm-up keeps one file per reader.
        rate: Events per second of event time.
        base_time: Event time of event 0 (naive UTC).
        proportions: Person : auction : bid.
        format: The files' format, "parquet" (default) or "csv": the same events either way.
    """

    events: int
    seed: int = gen.DEFAULT_SEED
    warmup_fraction: float = 0.75
    files: int = field(default_factory=default_files)
    slices: int = 1
    rate: int = gen.DEFAULT_RATE
    base_time: datetime = gen.DEFAULT_BASE_TIME
    proportions: tuple[int, int, int] = gen.DEFAULT_PROPORTIONS
    format: str = DEFAULT_FORMAT
    benchmark_slices: int | None = None

    def __post_init__(self) -> None:
        check_format(self.format)
        if isinstance(self.events, bool) or not isinstance(self.events, int) or self.events <= 0:
            raise UsageError(f"events must be a positive whole number, got {self.events!r}")
        if not 0 < self.warmup_fraction < 1:
            raise UsageError(
                f"warmup fraction must be strictly between 0 and 1, got {self.warmup_fraction}"
            )
        if self.files < 1:
            raise UsageError(f"files per slice must be at least 1, got {self.files}")
        if self.slices < 1:
            raise UsageError(f"slices per part must be at least 1, got {self.slices}")
        if self.benchmark_slices is not None and self.benchmark_slices < 1:
            raise UsageError(f"benchmark slices must be at least 1, got {self.benchmark_slices}")
        object.__setattr__(self, "proportions", tuple(self.proportions))
        _ = self.generator_config  # validates seed, rate and proportions
        warmup = self.warmup_events
        if warmup == 0 or warmup == self.events:
            raise UsageError(
                f"{self.events} events with warm-up fraction {self.warmup_fraction} leave a part "
                "empty; use more events"
            )

    @property
    def generator_config(self) -> gen.GeneratorConfig:
        return gen.GeneratorConfig(self.seed, self.rate, self.base_time, self.proportions)

    @property
    def warmup_events(self) -> int:
        """floor(events * warmup_fraction), exact for the fraction's decimal value (0.7 is 7/10)."""
        return int(self.events * Fraction(repr(self.warmup_fraction)))

    def part_range(self, part: str) -> tuple[int, int]:
        """[start, stop) of the event numbers of `part` ("warmup" or "benchmark")."""
        if part not in PARTS:
            raise UsageError(f"unknown part {part!r}; expected one of {', '.join(PARTS)}")
        w = self.warmup_events
        return (0, w) if part == "warmup" else (w, self.events)

    def part_slices(self, part: str) -> int:
        """Time slices of `part`: `benchmark_slices` for the benchmark part when set."""
        if part == "benchmark" and self.benchmark_slices is not None:
            return self.benchmark_slices
        return self.slices

    def slice_ranges(self, part: str) -> list[tuple[int, int]]:
        """Event ranges of the part's slices: slice s of [a, a + m) starts at a + s*m // slices."""
        a, b = self.part_range(part)
        m, k = b - a, self.part_slices(part)
        return [(a + s * m // k, a + (s + 1) * m // k) for s in range(k)]

    def layout(self, part: str) -> list[FileLayout]:
        """Every file of `part`, slice by slice, stripe by stripe (the order of their names)."""
        block = self.block_events(part)
        return [
            FileLayout(part, s, f, a, b, self.files, block, self.format)
            for s, (a, b) in enumerate(self.slice_ranges(part))
            for f in range(self.files)
        ]

    def block_events(self, part: str) -> int:
        """Events per stripe block of `part`: BLOCK_MS of event time, but small enough that
        every file of a slice gets MIN_BLOCKS_PER_FILE blocks (small datasets), at least 1."""
        a, b = self.part_range(part)
        per_slice = (b - a) // self.part_slices(part)
        return max(1, min(self.rate * BLOCK_MS // 1000, per_slice // (self.files * MIN_BLOCKS)))

    def row_group_blocks(self, part: str) -> int:
        """Stripe blocks per Parquet row group of `part` (about ROW_GROUP_EVENTS events)."""
        return max(1, ROW_GROUP_EVENTS // self.block_events(part))

    def to_dict(self) -> dict:
        d = asdict(self)
        if d["benchmark_slices"] is None:  # the same ids as before the field existed
            del d["benchmark_slices"]
        d["base_time"] = format_time(gen._epoch_ms(self.base_time))
        d["proportions"] = list(self.proportions)
        return d

    @classmethod
    def from_dict(cls, d: dict) -> DatasetParams:
        d = dict(d)
        d["base_time"] = parse_time(d["base_time"])
        d["proportions"] = tuple(d["proportions"])
        return cls(**d)

    @property
    def events_id(self) -> str:
        """The events' identity, e<events>-s<seed>-<hash>: the dataset's parameters but its file
        layout (files, slices) and format, which change the files and never an event."""
        d = self.to_dict()
        del d["files"], d["slices"], d["format"]
        d.pop("benchmark_slices", None)
        key = json.dumps({"params": d, "generator_version": gen.GENERATOR_VERSION}, sort_keys=True)
        return f"e{self.events}-s{self.seed}-{hashlib.sha256(key.encode()).hexdigest()[:12]}"

    @property
    def dataset_id(self) -> str:
        """A readable, unique directory name: e<events>-s<seed>-<hash of params and version>."""
        key = json.dumps(
            {"params": self.to_dict(), "generator_version": gen.GENERATOR_VERSION},
            sort_keys=True,
        )
        digest = hashlib.sha256(key.encode()).hexdigest()[:12]
        return f"e{self.events}-s{self.seed}-{digest}"


@dataclass(frozen=True)
class FileLayout:
    """Which events one file holds: stripe `stripe` of slice [slice_start, slice_stop).

    Block j of the slice (`block` events from slice_start + j * block) belongs to stripe
    j mod `stripes`; the file holds its blocks in order.
    """

    part: str
    slice: int
    stripe: int
    slice_start: int
    slice_stop: int
    stripes: int
    block: int  # events per block
    format: str = DEFAULT_FORMAT

    @property
    def name(self) -> str:
        return f"part-{self.slice:05d}-{self.stripe:03d}.{self.format}"

    def block_starts(self) -> np.ndarray:
        """First event number of each of the file's blocks, in order."""
        return np.arange(
            self.slice_start + self.stripe * self.block,
            self.slice_stop,
            self.stripes * self.block,
            dtype=np.int64,
        )

    def blocks(self) -> tuple[np.ndarray, np.ndarray]:
        """(starts, stops) of the file's blocks; the last block of a slice may be short."""
        starts = self.block_starts()
        return starts, np.minimum(starts + self.block, self.slice_stop)

    def numbers(self, first_block: int = 0, stop_block: int | None = None) -> np.ndarray:
        """The event numbers of blocks [first_block, stop_block), in the file's order."""
        starts, stops = self.blocks()
        return block_numbers(starts[first_block:stop_block], stops[first_block:stop_block])

    @property
    def events(self) -> int:
        starts, stops = self.blocks()
        return int((stops - starts).sum())


def block_numbers(starts: np.ndarray, stops: np.ndarray) -> np.ndarray:
    """The event numbers of blocks [starts[i], stops[i]), concatenated."""
    lengths = stops - starts
    if len(lengths) == 0:
        return np.empty(0, dtype=np.int64)
    offsets = np.repeat(starts - np.concatenate(([0], np.cumsum(lengths)[:-1])), lengths)
    return np.arange(int(lengths.sum()), dtype=np.int64) + offsets


def blocks_kind_counts(
    starts: np.ndarray, stops: np.ndarray, config: gen.GeneratorConfig
) -> dict[str, int]:
    """Events of each kind in the blocks [starts[i], stops[i]), by arithmetic on n mod total."""
    total, bounds = config.total, [0]
    for p in config.proportions:
        bounds.append(bounds[-1] + p)

    def below(x: np.ndarray, lo: int, hi: int) -> int:  # n in [0, x) with lo <= n % total < hi
        return int(((x // total) * (hi - lo) + np.clip(x % total - lo, 0, hi - lo)).sum())

    starts, stops = np.asarray(starts, np.int64), np.asarray(stops, np.int64)
    return {
        name: below(stops, lo, hi) - below(starts, lo, hi)
        for name, lo, hi in zip(KIND_NAMES, bounds, bounds[1:], strict=False)
    }


def kind_counts(start: int, stop: int, config: gen.GeneratorConfig) -> dict[str, int]:
    """Events of each kind among start..stop-1, by arithmetic on n mod sum(proportions)."""
    return blocks_kind_counts(np.array([start]), np.array([stop]), config)


def part_format(part_dir: str | os.PathLike, formats: tuple[str, ...] = FORMATS) -> str:
    """The file format of a dataset part directory (or of any folder of data files): the
    manifest's when the folder is a dataset's part, else the files' suffix among `formats` (an
    engine may read more than a dataset is written in; "parquet" when the folder holds none
    yet). Raises DatasetError for a folder that mixes formats (a source reads one)."""
    folder = Path(part_dir)
    manifest = folder.parent / MANIFEST
    if manifest.is_file():
        try:
            return check_format(json.loads(manifest.read_text())["params"]["format"])
        except (OSError, ValueError, KeyError, TypeError, UsageError):
            pass
    suffixes = {p.suffix[1:] for p in folder.glob("*") if p.suffix[1:] in formats}
    if len(suffixes) > 1:
        raise DatasetError(f"{folder} holds files of two formats ({', '.join(sorted(suffixes))})")
    return suffixes.pop() if suffixes else DEFAULT_FORMAT


def default_root() -> Path:
    """Where datasets go without --out: $NEXMARK_DATA_DIR, else ~/.cache/nexmark/datasets."""
    env = os.environ.get("NEXMARK_DATA_DIR")
    return Path(env).expanduser() if env else Path.home() / ".cache" / "nexmark" / "datasets"


@dataclass(frozen=True)
class DataFile:
    """One file of a dataset (Parquet or CSV), as recorded in the manifest."""

    part: str
    path: Path | S3Url  # absolute
    layout: FileLayout  # which events it holds (not one contiguous range: see FileLayout)
    events: int
    counts: dict[str, int]
    bytes: int
    checksum: str  # hex digest
    checksum_algorithm: str  # a key of CHECKSUMS


class Dataset:
    """A complete dataset directory (one with a valid manifest), local or `s3://bucket/prefix`.

    Raises:
        DatasetError: The directory or its manifest is missing or unreadable; for S3, the store
            does not answer, refuses the credentials or has no such bucket (StorageError).
    """

    def __init__(self, path: str | os.PathLike | S3Url) -> None:
        where = storage.location(path)
        if isinstance(where, S3Url):
            check_store(where)  # one line for a store we cannot use, before reading anything
            self.path: Path | S3Url = where
        else:
            self.path = where.resolve()
        self.reused = False  # set by ensure_dataset when it found this dataset complete
        manifest = self.path / MANIFEST
        if not storage.is_file(manifest):
            if isinstance(where, S3Url) and storage.children(where):
                raise DatasetError(
                    f"{self.path} is not a complete dataset: objects but no {MANIFEST} (written "
                    "last: a generation interrupted, or still under way)"
                )
            raise DatasetError(f"{self.path} is not a complete dataset (no {MANIFEST})")
        try:
            self.manifest = json.loads(storage.read_text(manifest))
            self.params = DatasetParams.from_dict(self.manifest["params"])
        except (OSError, ValueError, KeyError, TypeError, UsageError) as exc:
            raise DatasetError(f"{manifest}: unreadable manifest ({exc})") from None
        version = self.manifest.get("generator_version")
        if version != gen.GENERATOR_VERSION:
            raise DatasetError(
                f"{self.path} was written by generator version {version}, this nexmark writes "
                f"and reads version {gen.GENERATOR_VERSION} (another file format or layout): "
                "delete it and generate it again"
            )

    def __repr__(self) -> str:
        return f"Dataset({str(self.path)!r})"

    @property
    def id(self) -> str:
        return self.manifest["dataset_id"]

    @property
    def events(self) -> int:
        return self.params.events

    @property
    def generator_version(self) -> str:
        return self.manifest["generator_version"]

    @property
    def format(self) -> str:
        """The files' format: "parquet" or "csv"."""
        return self.params.format

    @property
    def file_format(self) -> dict:
        """The manifest's facts of the format: name, and for Parquet its compression and
        row-group size per part."""
        return dict(self.manifest.get("file_format", {"name": self.format}))

    @property
    def counts(self) -> dict[str, int]:
        return dict(self.manifest["counts"])

    @property
    def bytes(self) -> int:
        return self.manifest["bytes"]

    @property
    def parts(self) -> tuple[str, ...]:
        """The parts it holds, in order: both, or one (`writer.ensure_dataset(parts=...)`)."""
        return tuple(p for p in PARTS if p in self.manifest["parts"])

    def part_dir(self, part: str) -> Path | S3Url:
        """The directory of one part ("warmup" or "benchmark")."""
        self.params.part_range(part)  # validates the name
        return self.path / part

    def part_range(self, part: str) -> tuple[int, int]:
        return self.params.part_range(part)

    def files(self, part: str | None = None) -> list[DataFile]:
        """The files of one part, or of both (warm-up first), slice by slice, stripe by stripe."""
        parts = self.parts if part is None else (part,)
        return [
            DataFile(
                part=p,
                path=self.path / f["path"],
                layout=layout,
                events=f["events"],
                counts=dict(f["counts"]),
                bytes=f["bytes"],
                checksum=f[algorithm],
                checksum_algorithm=algorithm,
            )
            for p in parts
            for f, layout in zip(
                self.manifest["parts"][p]["files"], self.params.layout(p), strict=True
            )
            for algorithm in [_checksum_key(f)]
        ]

    def verify(self, on_bytes=None) -> None:
        """Re-read every file: size, checksum and the count of lines of each kind.

        Args:
            on_bytes: Called with the number of bytes read after each block (for progress).

        Raises:
            DatasetError: One line naming the first file that does not match the manifest.
        """
        listed = {f.path for f in self.files()}
        for part in self.parts:  # engines read every file of a part directory: no strays
            stray = sorted(p for p in storage.children(self.part_dir(part)) if p not in listed)
            if stray:
                raise DatasetError(f"{stray[0]}: a file the manifest does not list")
        for f in self.files():
            if not storage.is_file(f.path):
                raise DatasetError(f"{f.path}: missing file")
            size = storage.size(f.path)
            if size != f.bytes:
                raise DatasetError(f"{f.path}: {size} bytes, the manifest says {f.bytes}")
            digest = file_digest(f.path, on_bytes, f.checksum_algorithm)
            if digest != f.checksum:
                raise DatasetError(f"{f.path}: checksum differs from the manifest (corrupted)")
            counts = (parquet_counts if self.format == "parquet" else scan_file)(f.path)
            if counts != f.counts:
                raise DatasetError(f"{f.path}: event counts {counts}, the manifest says {f.counts}")


def _checksum_key(file_entry: dict) -> str:
    for algorithm in CHECKSUMS:
        if algorithm in file_entry:
            return algorithm
    raise DatasetError(f"{file_entry.get('path')}: no checksum in the manifest")


def file_digest(
    path: Path | S3Url, on_bytes=None, algorithm: str = CHECKSUM, block: int = 1 << 23
) -> str:
    """The hex digest of a file's bytes."""
    digest = CHECKSUMS[algorithm]()
    with storage.open_input(path) as fh:
        while chunk := fh.read(block):
            digest.update(chunk)
            if on_bytes is not None:
                on_bytes(len(chunk))
    return digest.hexdigest()


def parquet_counts(path: Path | S3Url) -> dict[str, int]:
    """Events of each kind in a Parquet file (its event_type column); DatasetError if the file
    is not readable Parquet (truncated, altered)."""
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    try:
        source, fs = storage.arrow_source(path)
        kinds = pq.read_table(source, columns=["event_type"], filesystem=fs).column("event_type")
    except (OSError, pa.ArrowException) as exc:
        raise DatasetError(f"{path}: not a readable Parquet file ({exc})") from None
    values = pc.value_counts(kinds).to_pylist() if len(kinds) else []
    found = {int(v["values"]): int(v["counts"]) for v in values if v["values"] is not None}
    counts = {name: found.pop(k, 0) for k, name in enumerate(KIND_NAMES)}
    if found or kinds.null_count:
        counts["malformed"] = sum(found.values()) + kinds.null_count
    return counts


def scan_file(path: Path | S3Url, on_bytes=None, block: int = 1 << 23) -> dict[str, int]:
    """The number of lines of each kind in a CSV file (the digit that starts each line)."""
    patterns = [f"\n{k},".encode() for k in range(len(KIND_NAMES))]
    found = [0] * len(KIND_NAMES)
    lines, carry = 0, b"\n"  # a line starts after every newline, and at the start of the file
    with storage.open_input(path) as fh:
        while chunk := fh.read(block):
            lines += chunk.count(b"\n")
            text = carry + chunk
            for k, pattern in enumerate(patterns):
                found[k] += text.count(pattern)
            carry = text[-2:]
            if on_bytes is not None:
                on_bytes(len(chunk))
    counts = dict(zip(KIND_NAMES, found, strict=True))
    if sum(found) != lines:
        counts["malformed"] = lines - sum(found)
    return counts

"""What a job reads: a dataset part's files and facts (`PartFeed`), and the folder its source
watches, where the files appear only when released (`Feed`).

Engines get a part's facts from `PartFeed` instead of globbing a directory and counting lines:
the same for every engine (from the dataset's manifest, or from the files when a folder is not
a dataset's part, as in tests), whatever the format. A `Feed` hands the files to a job: the
job's source watches `Feed.dir`, empty until `release()` links files in, each appearing whole
and at once, in event order. Each engine's job releases it at its own cue: Flink's status
poll once every task of the job runs (a reader that registered late would otherwise find every
file taken), Spark before its query starts (its micro-batches take whole time slices).
`release(files)` takes any subset: a benchmark phase fed at a set rate (`--rate`) is the same
object, released by the protocol's `Releaser` on the wall clock one time slice at a time
instead of at the engine's cue (`JobSpec.rate_fed`).
"""

from __future__ import annotations

import contextlib
import math
import os
import re
import shutil
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from nexmark.errors import DatasetError, UsageError
from nexmark.storage import files as store
from nexmark.storage.s3 import S3Url
from nexmark.workload.dataset import FORMATS, Dataset, part_format


@dataclass(frozen=True)
class FeedFile:
    """One data file of a part, in event order (slice, then stripe)."""

    path: Path | S3Url  # absolute, or an object of a dataset on a store
    events: int
    first_date_time: str | None = None  # as the manifest writes it; None if unknown or empty
    last_date_time: str | None = None


@dataclass(frozen=True)
class PartFeed:
    """The files of one dataset part, in the order their names sort (slice, then stripe)."""

    dir: Path | S3Url
    format: str  # "parquet" or "csv"
    files: tuple[FeedFile, ...]

    @classmethod
    def of(cls, part_dir: str | os.PathLike | S3Url) -> PartFeed:
        """The part at `part_dir`: facts from its dataset's manifest, else from the files (a
        part on a store must be a dataset's: its manifest, checked first, says it is whole)."""
        where = store.location(part_dir)
        if isinstance(where, S3Url):
            dataset = Dataset(where.parent)
            times = _times(dataset, where.name)
            files = tuple(
                FeedFile(f.path, f.events, *times.get(f.path, (None, None)))
                for f in dataset.files(where.name)
            )
            return cls(where, dataset.params.format, files)
        folder = Path(part_dir).resolve()
        file_format = part_format(folder)
        with contextlib.suppress(DatasetError, KeyError, UsageError):
            dataset = Dataset(folder.parent)
            times = _times(dataset, folder.name)
            files = tuple(
                FeedFile(f.path, f.events, *times.get(f.path, (None, None)))
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


def _times(dataset: Dataset, part: str) -> dict[Path | S3Url, tuple[str | None, str | None]]:
    """Each file's first and last date_time as the part's manifest entry writes them."""
    return {
        dataset.path / entry["path"]: (entry.get("first_date_time"), entry.get("last_date_time"))
        for entry in dataset.manifest["parts"][part]["files"]
    }


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
        into: The folder the job's source watches (made if missing); a prefix on the store
            (an S3Url) for a part on the store.
        prefix: Put before each file's name there (two parts fed into one folder).
        fresh: Empty `into` first (a job's own folder); False keeps what is there (a folder
            that already holds a previous part's released files, or a retried submission's).
    """

    def __init__(
        self, part: PartFeed, into: Path | S3Url, prefix: str = "", fresh: bool = True
    ) -> None:
        self.part = part
        self.on_store = isinstance(into, S3Url)
        if self.on_store != isinstance(part.dir, S3Url):
            raise UsageError(f"a part at {part.dir} cannot be fed into {into} (one on a store)")
        if isinstance(into, S3Url):
            self.dir: Path | S3Url = into
            if fresh:
                store.delete_under(into)
            store.make_dir(into)  # (listed by the source before the first release)
            present = {str(o) for o in store.objects(into)}
        else:
            self.dir = Path(into).resolve()
            if fresh:
                shutil.rmtree(self.dir, ignore_errors=True)
            self.dir.mkdir(parents=True, exist_ok=True)
            present = None
        self._target = {f.path: self.dir / f"{prefix}{f.path.name}" for f in part.files}
        self._released = {
            f.path
            for f in part.files
            if (
                self._target[f.path].exists()
                if present is None
                else str(self._target[f.path]) in present
            )
        }
        # Events of the files released so far (one int, read safely from another thread).
        self.released_events = sum(f.events for f in part.files if f.path in self._released)

    @property
    def paths(self) -> list[Path | S3Url]:
        """Every file's path as the job sees it, in event order."""
        return [self._target[f.path] for f in self.part.files]

    @property
    def file_events(self) -> dict[Path | S3Url, int]:
        """Events of each file, by the path the job reads it under."""
        return {self._target[f.path]: f.events for f in self.part.files}

    @property
    def released(self) -> bool:
        """Every file is in the folder."""
        return len(self._released) == len(self.part.files)

    def release(self, files: Iterable[FeedFile] | None = None) -> list[Path | S3Url]:
        """Link `files` (default: every file not yet released) in, in event order; returns
        the paths that appeared. A link is made under a hidden name, then renamed: a listing
        never sees half a file. Hard links (the dataset is untouched), else symbolic ones."""
        chosen = self.part.files if files is None else tuple(files)
        made = []
        for f in chosen:
            if f.path in self._released:
                continue
            target = self._target[f.path]
            if isinstance(target, S3Url):
                store.copy(f.path, target)  # server-side, whole or not at all
            else:
                _link_atomically(f.path, target)
            self._released.add(f.path)
            self.released_events += f.events
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


# -- a feed released at a set rate (docs/protocol.md, "Rate-controlled benchmark phase") -------

# The released rate must stay within RATE_TOLERANCE of the rate asked over any RATE_WINDOW_S:
# the release is a step function, off by at most one step, so no step may hold more than
# RATE_TOLERANCE x RATE_WINDOW_S (100 ms) of events at the rate.
RATE_WINDOW_S = 5.0
RATE_TOLERANCE = 0.02
RATE_STEP_S = RATE_WINDOW_S * RATE_TOLERANCE
# Steps per second the releaser makes at most: each is a link and a rename per file of a time
# slice, ~0.1 ms of CPU per file; 50 steps/s keeps the releaser far under 2% of a core. A rate
# that would need more releases several consecutive time slices per step (each ~20 ms).
MAX_STEPS_PER_S = 50.0

_SLICE = re.compile(r"^(part-\d+)-")


def release_steps(part: PartFeed, rate: float | None = None) -> list[tuple[FeedFile, ...]]:
    """The part's files grouped by time slice (`part-SSSSS-*`), in order: a rate-fed release
    puts a slice's stripes in together, so the source readers read it in step. A file whose
    name has no slice is a step of its own. At a `rate` that would make more than
    MAX_STEPS_PER_S steps, consecutive slices are grouped into one step (as few as needed)."""
    steps: list[tuple[FeedFile, ...]] = []
    last_key = None
    for f in part.files:
        match = _SLICE.match(f.path.name)
        key = match.group(1) if match else f.path.name
        if steps and key == last_key:
            steps[-1] = (*steps[-1], f)
        else:
            steps.append((f,))
        last_key = key
    per_s = len(steps) * rate / part.events if rate and part.events else 0.0
    group = math.ceil(per_s / MAX_STEPS_PER_S)
    if group <= 1:
        return steps
    return [sum(steps[i : i + group], ()) for i in range(0, len(steps), group)]


def rate_slices(part_events: int, rate: float) -> int:
    """Time slices a part of `part_events` needs so that one holds at most RATE_STEP_S of
    events at `rate` (what `nexmark run --rate` generates). Slices differ by one event at most,
    so the largest, not the average, must fit in a step's whole events."""
    per_step = max(1, math.floor(rate * RATE_STEP_S))
    return max(1, math.ceil(part_events / per_step))


def check_rate(rate: float, part: PartFeed | None = None, timeout_s: float | None = None) -> None:
    """A rate the feed can release `part` at, within RATE_TOLERANCE over RATE_WINDOW_S.

    Raises:
        UsageError: one line: a rate not above 0; a step (time slice) of the part holding more
            than RATE_STEP_S at the rate (how to generate a finer layout); a release that would
            outlast the query's timeout.
    """
    if not (isinstance(rate, int | float) and math.isfinite(rate) and rate > 0):
        raise UsageError(f"--rate must be a number of events/s above 0, got {rate}")
    if part is None or not part.files:
        return
    steps = release_steps(part, rate)
    largest = max(sum(f.events for f in step) for step in steps)
    if largest > rate * RATE_STEP_S:
        need = rate_slices(part.events, rate)
        raise UsageError(
            f"--rate {rate:g}: the dataset is too coarse: a time slice of {part.dir.name} holds "
            f"{largest:,} events, {largest / rate * 1000:.0f} ms at that rate (at most "
            f"{RATE_STEP_S * 1000:.0f} ms for {RATE_TOLERANCE:.0%} over {RATE_WINDOW_S:g} s); "
            f"generate it with at least {need} benchmark slices (nexmark generate "
            f"--benchmark-slices {need})"
        )
    check_rate_duration(rate, part.events, timeout_s, part.dir.name)


def check_rate_duration(rate: float, events: int, timeout_s: float | None, part: str) -> None:
    """UsageError when releasing `events` at `rate` would outlast the query's timeout."""
    duration = events / rate
    if timeout_s is not None and duration > timeout_s:
        raise UsageError(
            f"--rate {rate:g}: releasing the {events:,} events of {part} takes "
            f"{duration:.0f} s, above the query's timeout of {timeout_s:g} s"
        )


class Releaser:
    """Releases a `Feed` one step (time slice) at a time on the wall clock at `rate` events/s:
    step k is due `events before it / rate` after `start`. Either on its own thread (`start`)
    or pumped by the caller (`release_due`, `next_due`: with an injected clock, as in tests).

    `log` holds (wall time, events released by then) after each step; `cpu_s` the releaser
    thread's own CPU time once stopped (None when pumped).
    """

    def __init__(self, feed: Feed, rate: float, clock: Callable[[], float] = time.time) -> None:
        check_rate(rate, feed.part)
        self.feed, self.rate, self.clock = feed, float(rate), clock
        self.steps = release_steps(feed.part, rate)
        before, self._offsets = 0, []
        for step in self.steps:
            self._offsets.append(before / self.rate)
            before += sum(f.events for f in step)
        self.t0: float | None = None
        self.log: list[tuple[float, int]] = []
        self.cpu_s: float | None = None
        self._next = 0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self.error: BaseException | None = None

    @property
    def done(self) -> bool:
        return self._next >= len(self.steps)

    @property
    def threaded(self) -> bool:
        """Released from a thread of its own (`start`), not pumped."""
        return self._thread is not None

    def next_due(self) -> float | None:
        """Wall time the next step is due; None once every step is released (or not begun)."""
        if self.t0 is None or self.done:
            return None
        return self.t0 + self._offsets[self._next]

    def begin(self, now: float | None = None) -> None:
        """Set time 0 (the first step is due at once) and release what is due."""
        self.t0 = self.clock() if now is None else now
        self.release_due()

    def release_due(self) -> int:
        """Release every step due by now; returns the steps released."""
        with self._lock:
            released = 0
            while (due := self.next_due()) is not None and self.clock() >= due:
                self.feed.release(self.steps[self._next])
                self._next += 1
                released += 1
                self.log.append((self.clock(), self.feed.released_events))
            return released

    def start(self) -> None:
        """Begin, and release the rest from a thread of its own."""
        self.begin()
        self._thread = threading.Thread(target=self._run, name="nexmark-releaser", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            while not self._stop.is_set():
                self.release_due()
                due = self.next_due()
                if due is None:
                    break
                self._stop.wait(max(0.0, due - self.clock()))
        except BaseException as exc:  # noqa: BLE001 - reported by the caller (`check`)
            self.error = exc
        finally:
            self.cpu_s = time.thread_time()

    def check(self) -> None:
        """Raise what stopped the releaser's thread, if anything did."""
        if self.error is not None:
            raise self.error

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5.0)


ReleaseLog = list[tuple[float, int]]  # (wall time, events released by then), one per step


def released_at(log: ReleaseLog, wall: float) -> int:
    """Events released by `wall`."""
    released = 0
    for t, events in log:
        if t > wall:
            break
        released = events
    return released


def delivered_eps(log: ReleaseLog) -> float | None:
    """Events released before the last step over the time from the first step to the last:
    the rate asked when every step came on time (None with fewer than two steps)."""
    if len(log) < 2 or log[-1][0] <= log[0][0]:
        return None
    return log[-2][1] / (log[-1][0] - log[0][0])


def max_rate_error(log: ReleaseLog, rate: float, window_s: float = RATE_WINDOW_S) -> float | None:
    """The largest relative difference from `rate` of the events released in a `window_s`
    window starting at a step and ending by the last one (None when the release is shorter)."""
    if not log or log[-1][0] - log[0][0] < window_s:
        return None
    worst, before = 0.0, 0
    for t, events in log:
        end = t + window_s
        if end > log[-1][0]:
            break
        inside = released_at(log, end - 1e-9) - before
        worst = max(worst, abs(inside / window_s - rate) / rate)
        before = events
    return worst

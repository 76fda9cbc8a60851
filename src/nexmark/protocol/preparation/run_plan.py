"""The plan a run prints before any work, and the disk it needs, refused in one line if absent.

The plan names the queries (and those a resumed run keeps), the events each query reads, the
dataset's size on disk (its manifest's bytes when it is already there, else the writer's
estimate from samples) and the largest checkpoint earlier results on this machine recorded for
these queries at this size on this engine (results directories beside this run's). The free
disk a run needs is the dataset it must still write plus that checkpoint, per file system.
"""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

from nexmark import diskspace
from nexmark.console import human_bytes
from nexmark.errors import DiskSpaceError, NexmarkError
from nexmark.protocol.preparation.options import RunOptions
from nexmark.storage.files import Location
from nexmark.storage.s3 import S3Url
from nexmark.workload.dataset import MANIFEST, Dataset, DatasetParams, default_root
from nexmark.workload.writer import estimate_bytes

_MOST_DIRS = 500  # results directories read for checkpoint sizes, newest first


@dataclass(frozen=True)
class SeenCheckpoint:
    """The largest checkpoint (full state size) a result recorded, and where."""

    bytes: int
    query: str
    events: int
    where: Path


@dataclass(frozen=True)
class DatasetNeed:
    path: Path | None  # None: on an object store
    bytes: int
    there: bool  # already generated: it needs no more disk


def dataset_need(params: DatasetParams, data: Location | None) -> DatasetNeed:
    """Where the dataset goes and its size: the manifest's, or estimated before generating."""
    if isinstance(data, S3Url):
        return DatasetNeed(None, 0, True)
    out = Path(data).expanduser().resolve() if data else default_root() / params.dataset_id
    if (out / MANIFEST).is_file():
        try:
            return DatasetNeed(out, Dataset(out).bytes, True)
        except NexmarkError:
            pass  # another dataset or a damaged one: the writer says so in its own line
    return DatasetNeed(out, estimate_bytes(params), False)


def largest_checkpoint(
    results_root: Path, engine: str, events: int, queries: tuple[str, ...]
) -> SeenCheckpoint | None:
    """The largest full checkpoint size any results.json under `results_root` (one level
    down) recorded for one of `queries` on `engine` at `events` events; None if none did."""
    files = sorted(
        results_root.glob("*/results.json"), key=lambda p: p.stat().st_mtime, reverse=True
    )
    best: SeenCheckpoint | None = None
    for path in files[:_MOST_DIRS]:
        for record in _records(path):
            if record.get("engine") != engine or record.get("query") not in queries:
                continue
            if record.get("events_total") != events:
                continue
            size = _checkpoint_bytes(record)
            if size and (best is None or size > best.bytes):
                best = SeenCheckpoint(size, record["query"], events, path.parent)
    return best


def _records(path: Path) -> list[dict]:
    """The raw records of a results file (any schema version); [] if unreadable."""
    try:
        records = json.loads(path.read_text(encoding="utf-8")).get("results", [])
    except (OSError, ValueError, AttributeError):
        return []
    return [r for r in records if isinstance(r, dict)] if isinstance(records, list) else []


def _checkpoint_bytes(record: dict) -> int | None:
    def field(obj: object, name: str) -> object:
        return obj.get(name) if isinstance(obj, dict) else None

    sizes = [
        record.get("state_bytes_start"),
        record.get("state_bytes_end"),
        field(record.get("phase_checkpoint"), "state_bytes"),
        field(record.get("checkpoints"), "state_bytes_last"),
    ]
    sizes = [s for s in sizes if isinstance(s, int)]
    return max(sizes) if sizes else None


def plan_lines(
    options: RunOptions,
    engine: str,
    done: set[str],
    need: DatasetNeed,
    seen: SeenCheckpoint | None,
    results_root: Path,
) -> list[str]:
    """The plan, a line per fact (the disk line is `check_disk`'s)."""
    queries = options.queries
    todo = [q for q in queries if q not in done]
    kept = f"; {len(queries) - len(todo)} already done, kept" if len(todo) < len(queries) else ""
    events, warmup = options.events, int(options.events * options.warmup_fraction)
    repeats = f" x {options.repeat} repeats" if options.repeat > 1 else ""
    runs = f", all x {options.runs} runs" if options.runs > 1 else ""
    if need.path is None:
        data = "dataset on the object store"
    elif need.there:
        data = f"dataset {human_bytes(need.bytes)} on disk, already generated ({need.path})"
    else:
        data = f"dataset about {human_bytes(need.bytes)} to generate (estimate) in {need.path}"
    if seen is None:
        ckpt = (
            f"none known (no earlier {engine} result under {results_root} for these queries "
            f"at {events:,} events)"
        )
    else:
        ckpt = f"{human_bytes(seen.bytes)} ({seen.query} at {seen.events:,} events, {seen.where})"
    names = ", ".join(todo) if todo else "none left"
    return [
        f"plan: {len(todo)} of {len(queries)} queries to run on {engine}: {names}{kept}",
        f"plan: {events:,} events per query: {warmup:,} warm-up, then {events - warmup:,} "
        f"scored{repeats}{runs}",
        f"plan: {data}",
        f"plan: largest checkpoint seen so far: {ckpt}",
    ]


def check_disk(
    need: DatasetNeed, seen: SeenCheckpoint | None, work_dir: Path, checkpoints_on_store: bool
) -> list[str]:
    """The free disk the run needs on each file system, a line each; DiskSpaceError (one
    line, before any work) where it is not free."""
    needs: dict[Path, list[tuple[str, int]]] = defaultdict(list)
    probes: dict[Path, Path] = {}
    if need.path is not None and not need.there:
        mount = diskspace.mount_point(need.path)
        needs[mount].append(("the dataset", need.bytes))
        probes[mount] = need.path
    if seen is not None and not checkpoints_on_store:
        mount = diskspace.mount_point(work_dir)
        needs[mount].append(("the largest checkpoint seen so far", seen.bytes))
        probes[mount] = work_dir
    if not needs:
        return ["plan: free disk needed: none known beyond what is there"]
    lines = []
    for mount, items in needs.items():
        total, free = sum(b for _, b in items), diskspace.free_bytes(probes[mount])
        parts = " + ".join(f"{what} {human_bytes(b)}" for what, b in items)
        if total > free:
            raise DiskSpaceError(
                f"not enough free disk for this run on {mount}: it needs {human_bytes(total)} "
                f"({parts}), {human_bytes(free)} free; free some space or put the data "
                "(NEXMARK_DATA_DIR, --data) or the results (--results) elsewhere"
            )
        lines.append(
            f"plan: free disk needed: {human_bytes(total)} on {mount} ({parts}); "
            f"{human_bytes(free)} free"
        )
    return lines

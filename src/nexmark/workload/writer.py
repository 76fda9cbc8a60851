"""Writing a dataset: free-space check, parallel generation, manifest, atomic rename.

Parquet files are written with pyarrow straight from the generator's arrays (no text on the
way), one row group per ~64K events of whole stripe blocks; CSV files through the compiled
formatter.

Files are generated into `.<name>.tmp-<pid>-<random>` next to the target and renamed into place
only once every file and the manifest are written, so an interrupted run never leaves a
directory that looks complete. Each file is written by one process (this one, or one spawned:
`writer_processes`), chunk by chunk; since every event depends only on (seed, n), the bytes are
the same for any number of workers or files.

A dataset at `s3://bucket/prefix` (an object store has no rename) is written the same way into a
local staging folder, file by file: each file, once whole, is uploaded to its final key and
deleted locally (the staging folder holds at most one file per worker). The manifest is
uploaded last, one object (S3 shows an object whole or not at all): a prefix without it is
never taken for a dataset, and a later run overwrites what an interrupted one left.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
import psutil
import pyarrow as pa
import pyarrow.parquet as pq

from nexmark import console, diskspace, interrupts
from nexmark.errors import DatasetError, DiskSpaceError, UsageError
from nexmark.storage import files as storage
from nexmark.storage.s3 import S3Url, check_store
from nexmark.workload import csvtext
from nexmark.workload import generator as gen
from nexmark.workload.dataset import (
    CHECKSUM,
    CHECKSUMS,
    FORMATS,
    MANIFEST,
    MANIFEST_VERSION,
    PARQUET_COMPRESSION,
    PARTS,
    Dataset,
    DatasetParams,
    FileLayout,
    blocks_kind_counts,
    default_root,
    file_digest,
    format_time,
    kind_counts,
)
from nexmark.workload.writer_processes import Workers

# Events per formatting call: the text (~7 MB) mostly stays in cache for the checksum and the
# write, and the formatter reuses its buffer.
CHUNK_EVENTS = 1 << 15
FREE_BYTES_ENV = diskspace.FREE_BYTES_ENV  # test hook: pretend this many bytes are free
RESERVE_BYTES = 64 << 20  # keep this much free beyond the estimate


def default_workers(events: int) -> int:
    """The number of cores, but one per million events at most: starting a worker process
    (imports and the per-seed tables) costs about a second."""
    return max(1, min(os.cpu_count() or 1, events // 1_000_000))


def estimate_bytes(params: DatasetParams, sample: int | None = None) -> int:
    """Expected size on disk, from samples at the start, middle and end (+2%): formatted as
    CSV, or written as Parquet (big enough samples that compression sees whole pools)."""
    config, n = params.generator_config, params.events
    sample = sample or (2000 if params.format == "csv" else 20_000)
    starts = sorted({0, max(0, n // 2 - sample // 2), max(0, n - sample)})
    sampled = [(s, min(n, s + sample)) for s in starts]
    if params.format == "csv":
        size = sum(len(csvtext.format_csv(config, a, b)) for a, b in sampled)
    else:
        size = sum(len(parquet_bytes(config, np.arange(a, b, dtype=np.int64))) for a, b in sampled)
    events = sum(b - a for a, b in sampled)
    return int(n * size / events * 1.02)


def parquet_table(config: gen.GeneratorConfig, numbers: np.ndarray) -> pa.Table:
    """The events `numbers` as the files' columns (`generator.file_arrow_schema()`)."""
    table = gen.to_file_columns(gen.generate_numbers(config, numbers, event_number=False))
    return table.cast(gen.file_arrow_schema())


def parquet_bytes(
    config: gen.GeneratorConfig, numbers: np.ndarray, compression: str = PARQUET_COMPRESSION
) -> bytes:
    """A whole Parquet file of the events `numbers`, in memory (one row group)."""
    sink = pa.BufferOutputStream()
    pq.write_table(parquet_table(config, numbers), sink, compression=compression)
    return sink.getvalue().to_pybytes()


def free_bytes(path: Path) -> int:
    """Free bytes on the file system that will hold `path` (its nearest existing ancestor)."""
    return diskspace.free_bytes(path)


def check_disk_space(params: DatasetParams, out: Path, parts: tuple[str, ...] = PARTS) -> int:
    """The estimated size of `parts`; raises DiskSpaceError if the file system cannot hold it."""
    events = sum(_part_events(params, p) for p in parts)
    need, free = int(estimate_bytes(params) * events / params.events), free_bytes(out.parent)
    if need + RESERVE_BYTES > free:
        raise DiskSpaceError(
            f"not enough disk space for {events:,} events in {out.parent}: need about "
            f"{console.human_bytes(need)} and {console.human_bytes(RESERVE_BYTES)} kept free, "
            f"{console.human_bytes(free)} free"
        )
    return need


def write_file(params: DatasetParams, layout: FileLayout, path: str, report=None) -> dict:
    """Write the events of one file (its blocks, in order) to `path`; its bytes and checksum."""
    if params.format == "parquet":
        return write_parquet(params, layout, path, report)
    return write_csv(params, layout, path, report)


def write_parquet(
    params: DatasetParams,
    layout: FileLayout,
    path: str,
    report=None,
    compression: str = PARQUET_COMPRESSION,
) -> dict:
    """One Parquet file: a row group per `row_group_blocks` stripe blocks, in order."""
    config, schema = params.generator_config, gen.file_arrow_schema()
    blocks = len(layout.block_starts())
    per_group = params.row_group_blocks(layout.part)
    with pq.ParquetWriter(path, schema, compression=compression) as out:
        for first in range(0, blocks, per_group):
            numbers = layout.numbers(first, first + per_group)
            out.write_table(parquet_table(config, numbers), row_group_size=len(numbers))
            if report is not None:
                report(len(numbers))
        if blocks == 0:  # an empty stripe (fewer events than files): a file with no rows
            out.write_table(schema.empty_table())
    return {"bytes": os.path.getsize(path), CHECKSUM: file_digest(Path(path), None, CHECKSUM)}


def write_csv(params: DatasetParams, layout: FileLayout, path: str, report=None) -> dict:
    """One CSV file, chunk by chunk, checksummed as it is written."""
    formatter = csvtext.CsvFormatter(params.generator_config)
    digest, size = CHECKSUMS[CHECKSUM](), 0
    blocks = len(layout.block_starts())
    per_chunk = max(1, CHUNK_EVENTS // layout.block)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        for first in range(0, blocks, per_chunk):
            numbers = layout.numbers(first, first + per_chunk)
            text = formatter.format_numbers(numbers)
            digest.update(text)
            size += len(text)
            _write_all(fd, text)
            if report is not None:
                report(len(numbers))
    finally:
        os.close(fd)
    return {"bytes": size, CHECKSUM: digest.hexdigest()}


def _write_all(fd: int, text: memoryview) -> None:
    """Write all of `text`, resuming after short writes."""
    while text:
        written = os.write(fd, text)
        if written == 0:
            raise OSError(f"no progress writing file descriptor {fd}")
        text = text[written:]


def _jobs(
    params: DatasetParams, tmp: Path, parts: tuple[str, ...] = PARTS, upload: S3Url | None = None
) -> list[tuple[FileLayout, str, S3Url | None]]:
    """(layout, path, upload) of every file of `parts`, larger ones first for better balance;
    `upload` is the object a file goes to once written (None: it stays at `path`)."""
    jobs = [
        (f, str(tmp / f.part / f.name), None if upload is None else upload / f.part / f.name)
        for p in parts
        for f in params.layout(p)
    ]
    return sorted(jobs, key=lambda j: -j[0].events)


def _write_job(params: DatasetParams, job: tuple, report=None) -> dict:
    """Write one job's file; for an object store, upload it and remove the local copy."""
    layout, path, upload = job
    result = write_file(params, layout, path, report)
    if upload is not None:
        storage.upload(Path(path), upload)
        os.remove(path)
    return result


@contextlib.contextmanager
def _progress(
    params: DatasetParams, parts: tuple[str, ...], show_progress: bool
) -> Iterator[Callable[[int], None]]:
    """The generation's progress bar, as the `advance(events)` that every written chunk calls.

    A Ctrl-C (or SIGTERM) raises KeyboardInterrupt wherever the main thread is, and pyarrow's
    `ParquetWriter.write_table` drops it silently (about 1 interrupt in 500, probed), after
    which the generation went on to write every event (seen once in CI). The signal is noted
    too, and the next chunk's report raises it again.
    """
    with interrupts.noted() as interrupted, console.progress(transient=False) as bar:
        total = sum(_part_events(params, p) for p in parts)
        task = bar.add_task(
            "generating", total=total, visible=show_progress, cpu=console.process_tree_cpu
        )

        def advance(events: int) -> None:
            if interrupted():
                raise KeyboardInterrupt
            bar.advance(task, events)

        yield advance


def _generate(
    params: DatasetParams,
    tmp: Path,
    workers: int,
    advance,
    parts: tuple[str, ...] = PARTS,
    upload: S3Url | None = None,
) -> dict:
    """Write every file of `parts` into `tmp` (and on to `upload`, an object-store prefix);
    returns {layout: {"bytes", CHECKSUM}}.

    This process writes files too, beside `workers - 1` spawned ones: it is warm already
    (imports, per-seed tables, compiled loops), while a new process takes about a second to
    start. Files are handed out one at a time, to whichever process is free.
    """
    jobs = _jobs(params, tmp, parts, upload)
    if workers <= 1:
        return {job[0]: _write_job(params, job, advance) for job in jobs}
    with Workers(params, workers - 1, jobs, advance, _write_job) as helpers:
        results = {}
        while (job := helpers.next_job()) is not None:
            results[job[0]] = _write_job(params, job, helpers.advance_and_poll)
        results.update(helpers.wait())
        return results


def build_manifest(
    params: DatasetParams, written: dict, seconds: float, present: tuple[str, ...] = PARTS
) -> dict:
    """The manifest: parameters, counts, event-time range, and per file range, size, checksum
    (of the parts `present`: a dataset of one part lists only it)."""
    config = params.generator_config
    parts = {}
    for part in present:
        files = []
        for f in params.layout(part):
            starts, stops = f.blocks()
            some = len(starts) > 0
            files.append(
                {
                    "path": f"{part}/{f.name}",
                    "slice": f.slice,
                    "stripe": f.stripe,
                    "first_event": int(starts[0]) if some else None,
                    "last_event": int(stops[-1]) - 1 if some else None,
                    "events": f.events,
                    "counts": blocks_kind_counts(starts, stops, config),
                    "first_date_time": _time_of(int(starts[0]), config) if some else None,
                    "last_date_time": _time_of(int(stops[-1]) - 1, config) if some else None,
                    **written[f],
                }
            )
        a, b = params.part_range(part)
        parts[part] = {
            "first_event": a,
            "last_event": b - 1,
            "events": b - a,
            "counts": kind_counts(a, b, config),
            "bytes": sum(f["bytes"] for f in files),
            "files": files,
        }
    return {
        "format": "nexmark-dataset",
        "manifest_version": MANIFEST_VERSION,
        "file_format": file_format(params),
        "generator_version": gen.GENERATOR_VERSION,
        "dataset_id": params.dataset_id,
        "params": params.to_dict(),
        "events": params.events,
        "counts": kind_counts(0, params.events, config),
        "event_time": {"first": _time_of(0, config), "last": _time_of(params.events - 1, config)},
        "layout": {
            "slices": params.slices,
            **({"benchmark_slices": params.benchmark_slices} if params.benchmark_slices else {}),
            "files_per_slice": params.files,
            "block_events": {part: params.block_events(part) for part in PARTS},
            "rule": "block j of a slice (block_events[part] events each) goes to file j mod "
            "files_per_slice; files hold their blocks in event order",
        },
        "bytes": sum(p["bytes"] for p in parts.values()),
        "created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "generation_seconds": round(seconds, 3),
        "parts": parts,
    }


def file_format(params: DatasetParams) -> dict:
    """The manifest's facts of the file format."""
    if params.format == "csv":
        return {"name": "csv"}
    return {
        "name": "parquet",
        "compression": PARQUET_COMPRESSION,
        "row_group_events": {
            part: params.row_group_blocks(part) * params.block_events(part) for part in PARTS
        },
        "writer": f"pyarrow {pa.__version__}",
    }


def _time_of(n: int, config: gen.GeneratorConfig) -> str:
    return format_time(int(gen.event_time_ms(n, config)))


def _same_dataset(existing: Dataset, params: DatasetParams, parts: tuple[str, ...]) -> Dataset:
    """`existing` if it was generated with these parameters, parts and generator, else one line
    (DatasetError): a dataset is reused, never overwritten by another."""
    if (
        existing.params != params
        or existing.generator_version != gen.GENERATOR_VERSION
        or existing.parts != parts
    ):
        raise DatasetError(
            f"{existing.path} holds another dataset ({existing.id}); delete it or choose "
            "another --out"
        )
    return existing


def _reusable(out: Path, params: DatasetParams, parts: tuple[str, ...] = PARTS) -> Dataset | None:
    """The dataset already at `out` if it is complete with the same parameters and parts."""
    if not out.exists():
        return None
    if not out.is_dir():
        raise DatasetError(f"{out} exists and is not a directory")
    if not (out / MANIFEST).exists():
        if any(out.iterdir()):
            raise DatasetError(f"{out} exists and is not a dataset; choose another --out")
        out.rmdir()  # an empty directory: take its place
        return None
    existing = _same_dataset(Dataset(out), params, parts)
    for f in existing.files():
        if not f.path.is_file() or f.path.stat().st_size != f.bytes:
            raise DatasetError(f"{out} is damaged ({f.path.name}); delete it and generate again")
        if existing.format == "parquet" and _parquet_rows(f.path) != f.events:
            raise DatasetError(
                f"{out} is damaged ({f.path.name}: its Parquet footer does not hold its "
                f"{f.events:,} events); delete it and generate again"
            )
    return existing


def _parquet_rows(path: Path) -> int | None:
    """The row count in a Parquet file's footer (a cheap check before reuse), None if the
    footer is unreadable."""
    try:
        return pq.ParquetFile(path).metadata.num_rows
    except (OSError, pa.ArrowException):
        return None


def _remove_stale_temps(out: Path) -> None:
    """Delete temp dirs of earlier runs on `out` whose process is gone."""
    for tmp in out.parent.glob(f".{out.name}.tmp-*"):
        pid = tmp.name.split(".tmp-", 1)[1].split("-")[0]
        if pid.isdigit() and not psutil.pid_exists(int(pid)):
            shutil.rmtree(tmp, ignore_errors=True)


def _part_events(params: DatasetParams, part: str) -> int:
    a, b = params.part_range(part)
    return b - a


def _make_temp(out: Path, parts: tuple[str, ...] = PARTS) -> Path:
    # Unique per call: two runs (or processes) making the same dataset never share a temp dir.
    tmp = out.parent / f".{out.name}.tmp-{os.getpid()}-{uuid.uuid4().hex[:8]}"
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        _remove_stale_temps(out)
        shutil.rmtree(tmp, ignore_errors=True)
        for part in parts:
            (tmp / part).mkdir(parents=True)
    except OSError as exc:
        raise DatasetError(f"cannot write to {out.parent}: {exc.strerror or exc}") from None
    return tmp


def ensure_dataset(
    params: DatasetParams,
    out: storage.Location | str | os.PathLike | None = None,
    workers: int | None = None,
    show_progress: bool = True,
    parts: tuple[str, ...] = PARTS,
) -> Dataset:
    """The dataset of `params` at `out`: reused if complete there, else generated.

    Args:
        params: What to generate.
        out: The dataset directory, or an `s3://bucket/prefix` (settings from the AWS
            variables, `storage.s3`), as text or parsed (`RunOptions.data`: taken as it is);
            default `default_root() / params.dataset_id`.
        workers: Processes writing files in parallel; default `default_workers(events)`.
        show_progress: Show the progress on stderr: a bar on a terminal, else a line every
            `console.progress_interval()` seconds and a closing line.
        parts: The parts to write (a rate search's trials each need only a benchmark part
            laid out for their rate: `protocol.preparation.rate_layout`); the others are absent.

    Raises:
        DatasetError: `out` holds something else or cannot be written; a store that does not
            answer, refuses the credentials or lacks the bucket (StorageError, before any work).
        DiskSpaceError: The estimated size does not fit in the free space.
    """
    if workers is not None and workers < 1:
        raise UsageError(f"workers must be at least 1, got {workers}")
    parts = tuple(p for p in PARTS if p in parts)  # in the dataset's order
    if not parts:
        raise UsageError("a dataset needs at least one of its parts")
    where = storage.location(out) if out else None  # a location already parsed is kept as it is
    if isinstance(where, S3Url):
        return _ensure_on_store(params, where, workers, show_progress, parts)
    local = where.expanduser().resolve() if where else default_root() / params.dataset_id
    return _ensure_on_disk(params, local, workers, show_progress, parts)


def _ensure_on_disk(
    params: DatasetParams,
    out: Path,
    workers: int | None,
    show_progress: bool,
    parts: tuple[str, ...],
) -> Dataset:
    """`ensure_dataset` on a local folder: written into a temp folder beside it, renamed."""
    existing = _reusable(out, params, parts)
    if existing is not None:
        existing.reused = True
        return existing
    most_slices = max(params.slices, params.benchmark_slices or 1)
    workers = min(workers or default_workers(params.events), 2 * params.files * most_slices)
    need = check_disk_space(params, out, parts)
    tmp = _make_temp(out, parts)
    started = time.perf_counter()
    try:
        with _progress(params, parts, show_progress) as advance:
            written = _generate(params, tmp, workers, advance, parts)
        manifest = build_manifest(params, written, time.perf_counter() - started, parts)
        (tmp / MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n")
        return _publish(tmp, out, params, parts)
    except (OSError, DatasetError) as exc:  # a worker's error may come as a DatasetError
        shutil.rmtree(tmp, ignore_errors=True)
        if isinstance(exc, DiskSpaceError) or not diskspace.is_disk_full(exc):
            raise
        # The temp dir is gone: the dataset is absent, never half there under its name.
        raise DiskSpaceError(
            f"disk full writing the dataset {out}: it needs about {console.human_bytes(need)}, "
            f"{diskspace.free_space(out.parent)} with its partial files removed"
        ) from None
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def _publish(tmp: Path, out: Path, params: DatasetParams, parts: tuple[str, ...]) -> Dataset:
    """Rename the finished temp dir to `out`; if another run got there first with the same
    dataset, keep theirs (the bytes are the same) and drop ours."""
    try:
        os.rename(tmp, out)
    except OSError:
        theirs = _reusable(out, params, parts)  # raises if `out` now holds something else
        if theirs is None:
            raise
        shutil.rmtree(tmp, ignore_errors=True)
        theirs.reused = True
        return theirs
    return Dataset(out)


# -- datasets on an object store -----------------------------------------------------------


def _ensure_on_store(
    params: DatasetParams,
    url: S3Url,
    workers: int | None,
    show_progress: bool,
    parts: tuple[str, ...],
) -> Dataset:
    """`ensure_dataset` for `s3://`: the store checked first, then reuse or generation."""
    check_store(url)  # one line for a store we cannot use, before any work
    existing = _reusable_on_store(url, params, parts)
    if existing is not None:
        existing.reused = True
        return existing
    most_slices = max(params.slices, params.benchmark_slices or 1)
    workers = min(workers or default_workers(params.events), 2 * params.files * most_slices)
    root = default_root()
    root.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".s3-staging-{os.getpid()}-", dir=root))
    try:
        _check_staging_space(params, staging, workers, parts)
        for part in parts:
            (staging / part).mkdir()
        started = time.perf_counter()
        with _progress(params, parts, show_progress) as advance:
            written = _generate(params, staging, workers, advance, parts, upload=url)
        manifest = build_manifest(params, written, time.perf_counter() - started, parts)
        storage.write_bytes(url / MANIFEST, (json.dumps(manifest, indent=2) + "\n").encode())
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return Dataset(url)


def _check_staging_space(
    params: DatasetParams, staging: Path, workers: int, parts: tuple[str, ...]
) -> None:
    """The staging folder holds one file per worker at most: the largest ones, estimated."""
    sizes = sorted((f.events for p in parts for f in params.layout(p)), reverse=True)
    events = sum(sizes[:workers])
    need, free = int(estimate_bytes(params) * events / params.events), free_bytes(staging)
    if need + RESERVE_BYTES > free:
        raise DiskSpaceError(
            f"not enough disk space in {staging.parent} to stage the files on their way to the "
            f"store: need about {console.human_bytes(need)} and "
            f"{console.human_bytes(RESERVE_BYTES)} kept free, {console.human_bytes(free)} free"
        )


def _reusable_on_store(url: S3Url, params: DatasetParams, parts: tuple[str, ...]) -> Dataset | None:
    """The dataset at `url` if complete with the same parameters and parts; None if the prefix
    is empty or holds an unfinished dataset (its files, no manifest: removed here, since the
    run that wrote them is gone or writes the same bytes). DatasetError for anything else."""
    found = storage.objects(url)
    if not found:
        return None
    if url / MANIFEST not in found:
        ours = {url / p / f.name for p in PARTS for f in params.layout(p)}
        if not all(_dataset_file_name(url, o) for o in found):
            raise DatasetError(f"{url} holds objects that are not a dataset; choose another --out")
        for stale in found:  # an interrupted generation's files (of these or other parameters)
            if stale not in ours:
                storage.delete(stale)
        return None
    existing = _same_dataset(Dataset(url), params, parts)
    present = set(found)
    for f in existing.files():
        if f.path not in present or storage.size(f.path) != f.bytes:
            raise DatasetError(f"{url} is damaged ({f.path.name}); delete it and generate again")
    return existing


def _dataset_file_name(url: S3Url, obj: S3Url) -> bool:
    """Whether `obj` is named as a dataset's file under `url` (<part>/part-SSSSS-FFF.<format>)."""
    rest = obj.key[len(url.key) :].strip("/") if url.key else obj.key
    part, _, name = rest.partition("/")
    return (
        part in PARTS
        and name.startswith("part-")
        and "/" not in name
        and name.rsplit(".", 1)[-1] in FORMATS
    )

"""Flink on an object store (docs/object-store.md) or a local folder: the part a job reads and
its checks, and the worker-reach check, for a run whose dataset or checkpoints are at `s3://...`.

The settings themselves (the plugin, the `s3.*` options) are `s3_access`'s; the engine
hands them to the embedded cluster at start (`FlinkEngine.use_object_store`).
"""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

from nexmark.engines.flink import ddl
from nexmark.engines.py4j_errors import java_message
from nexmark.errors import DatasetError, EngineError
from nexmark.storage.s3 import S3Url
from nexmark.workload.dataset import FORMATS, MANIFEST, part_format
from nexmark.workload.feed import PartFeed


def part_files(part: Path | S3Url, file_format: str | None) -> tuple[int, str]:
    """(data files, their format) of a part; DatasetError (one line) for none."""
    if isinstance(part, S3Url):
        feed = PartFeed.of(part)  # the manifest, read first: a half-written dataset is refused
        return len(feed.files), file_format or feed.format
    if not Path(part).is_dir():
        raise DatasetError(f"dataset part not found: {part}")
    file_format = file_format or part_format(part, FORMATS)
    return len(list(Path(part).glob(f"*.{file_format}"))), file_format


def check_part(
    part: Path | S3Url,
    readers: int,
    rate_fed: bool = False,
    file_format: str | None = None,
) -> str:
    """One file per source reader: Flink's file source hands each reader whole files, so
    any other count leaves a reader idle or with two files read one after the other (its
    event time then jumps back, and the watermark follows the slowest file). Returns the
    files' format (`file_format`, the source's, else the part's own)."""
    files, file_format = part_files(part, file_format)
    if not files:
        raise DatasetError(f"dataset part {part} has no data files (.{', .'.join(ddl.FORMATS)})")
    if rate_fed and files % readers == 0:  # one file per reader in each released slice
        return file_format
    if files != readers:
        raise DatasetError(
            f"dataset part {part} has {files} files but the job runs {readers} source "
            f"readers (parallelism {readers}): each reader needs exactly one file; use a "
            f"dataset generated with --files {readers}"
        )
    return file_format


def feed_into(part: Path | S3Url, feed_dir: S3Url | None, work_dir: Path) -> Path | S3Url:
    """The folder (or store prefix) the job's open source watches, its part's files released
    in: on the store for a part on the store (`JobSpec.feed_dir`), else in the work folder."""
    if isinstance(part, S3Url):
        if feed_dir is None:
            raise EngineError(f"{part}: a part on an object store needs a feed prefix there")
        return feed_dir / part.name
    return work_dir / "source" / part.name


def check_reach(jvm: Any, urls: list[S3Url]) -> None:
    """The worker-reach check: the engine's own JVM (the embedded cluster's TaskManager runs in
    it) reads the first bytes of each of `urls` (a dataset's manifest) or lists it (a checkpoint
    prefix's bucket) through Flink's file system (its S3 plugin), before the first query.
    EngineError, one line, if it cannot."""
    core = jvm.org.apache.flink.core.fs
    for url in urls:
        try:
            path = core.Path(str(url))
            fs = path.getFileSystem()
            if url.name == MANIFEST:
                stream = fs.open(path)
                try:
                    stream.read()  # one byte: the object is there and readable
                finally:
                    stream.close()
            else:
                fs.exists(path)
        except Exception as exc:  # noqa: BLE001 - the JVM's reason is the answer
            raise EngineError(
                f"Flink's own file system cannot reach {url}: {java_message(exc)[:300]} "
                "(its S3 plugin and s3.* options: docs/object-store.md)"
            ) from None


def reach_probe(reach: list[S3Url]) -> S3Url:
    """Where a remote cluster's reach check puts its one-event file: a fresh folder under the
    checkpoints' prefix when there is one (the cluster writes there anyway), else under
    `nexmark-work/` in the dataset's bucket (the dataset itself is never written to)."""
    name = f".nexmark-reach-{uuid.uuid4().hex[:8]}"
    for url in reach:
        if url.name != MANIFEST:
            return url / name
    return S3Url(reach[0].bucket, "nexmark-work") / name

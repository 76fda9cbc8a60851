"""Spark on an object store (docs/object-store.md): the part a query reads, the folder it
watches, and the worker-reach check, for a run whose dataset or checkpoints are at `s3://...`.

The settings themselves (S3A's jars, the `fs.s3a.*` options) are `s3_access`'s; the
engine starts its session with them (`SparkEngine.use_object_store`).
"""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

from nexmark.engines.source import Source, file_part
from nexmark.engines.spark.checkpoint_dir import plain_path, source_log_files
from nexmark.engines.spec import JobSpec
from nexmark.errors import DatasetError, EngineError
from nexmark.storage import files
from nexmark.storage.files import Location
from nexmark.storage.s3 import S3Url, is_s3
from nexmark.workload.dataset import MANIFEST


def part_of(source: Source, on_store: bool) -> Path | S3Url:
    """The folder (or store prefix) a query's file source reads; one line for what Spark
    cannot (a part on a store whose manifest is missing is refused where its feed is read)."""
    part = file_part(source, "Spark", on_store)
    if isinstance(part, Path) and not part.is_dir():
        raise DatasetError(f"dataset part not found: {part}")
    return part


def watch_dir(spec: JobSpec, part: Path | S3Url, checkpoint: Location, restored: int | None):
    """The folder the query's file source watches. Both phases of a query watch ONE folder
    (source.py): the restored query's log of what the warm-up read goes on there.

    - local part and checkpoint: `source/` beside the checkpoint (a restore's private copy
      sits beside the original, so it is the warm-up's folder);
    - otherwise a fresh query watches its job's own folder, on the store for a part there
      (`spec.feed_dir`), and a restored one the folder its checkpoint's source log read
      the warm-up's files from.
    """
    if isinstance(part, Path) and isinstance(checkpoint, Path):
        return checkpoint.parent / "source"
    if restored is None:
        if isinstance(part, S3Url):
            if spec.feed_dir is None:
                raise EngineError(f"{part}: a part on an object store needs a feed prefix there")
            return spec.feed_dir
        return spec.work_dir / "source"
    return logged_folder(checkpoint)


def logged_folder(checkpoint: Location) -> Location:
    """The folder the query of `checkpoint` read its files from (its source log's paths:
    text Spark wrote, parsed here where it comes in)."""
    for paths in source_log_files(checkpoint).values():
        for path in paths:
            return S3Url.parse(path).parent if is_s3(path) else Path(plain_path(path)).parent
    raise EngineError(
        f"the checkpoint at {checkpoint} logs no file read: the folder its query watched is "
        "unknown, so the restored query cannot go on reading there"
    )


def check_reach(spark: Any, urls: list[S3Url]) -> None:
    """The worker-reach check: a task on an executor (the driver itself in local mode) reads
    each manifest in `urls`, and writes one small file under each other URL (a checkpoint
    prefix: Spark's executors write the state there), removed after, through Spark's own S3A
    file system, before the first query. EngineError, one line, if it cannot."""
    from nexmark.engines.spark.job import _spark_message

    for url in urls:
        try:
            if url.name == MANIFEST:
                spark.read.text(str(url)).count()  # listed by the driver, read by a task
            else:
                probe = url / f".nexmark-reach-{uuid.uuid4().hex[:8]}"
                try:
                    spark.range(1).selectExpr("'reach' AS value").write.text(str(probe))
                finally:
                    files.remove_tree(probe)
        except Exception as exc:  # noqa: BLE001 - the JVM's reason is the answer
            raise EngineError(
                f"Spark's executors cannot reach {url}: {_spark_message(exc)[:300]} "
                "(S3A's jars and spark.hadoop.fs.s3a.* options: docs/object-store.md)"
            ) from None

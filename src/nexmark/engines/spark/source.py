"""The `events` stream over a dataset part, the kind views, and the directory both phases watch.

Spark's file source lists a directory, takes the files it has not seen in modification-time
order (`maxFilesPerTrigger` of them per micro-batch) and records every file it took in the
checkpoint (`sources/0/N`). A restored query resumes that log: it reads only files it has not
seen. So both phases of a query watch ONE directory, `<work_dir>/source/`: the warm-up part's
files are hard-linked into it before the warm-up query starts, and the benchmark part's before
the restored query starts (each link made under a hidden name, which Spark ignores, then
renamed: a file appears whole and at once). The warm-up files stay: they are in the log.

Order: a batch must hold whole time slices, in event order, or the watermark of one batch
would drop the next batch's older events. The engine therefore gives the dataset's files
modification times in event order (part, slice, stripe): a fixed base plus one second per
file. Hard links share their file's inode, so this sets the dataset files' own mtimes
(contents and checksums are untouched; the same values every time). The source's `maxFileAge`
(7 days, relative to the newest file seen) is far above the span this gives.
"""

from __future__ import annotations

import itertools
import os
from pathlib import Path
from typing import Any

from nexmark.engines.source import KafkaSource
from nexmark.errors import DatasetError, EngineError
from nexmark.storage import files
from nexmark.storage.s3 import S3Url
from nexmark.workload.dataset import FORMATS, MANIFEST, Dataset
from nexmark.workload.feed import Feed, PartFeed, release_steps
from nexmark.workload.schema import (
    COLUMNS,
    WATERMARK_DELAY_MS,
    Kind,
    file_name,
    file_type,
    is_time,
    view_columns,
)

SOURCE_VIEW = "events"
# Spark's Kafka connector: the `kafka-spark` group pinned beside the loader, read by the ground
# layer's one reader (maven.KAFKA_JARS).
KAFKA_CONNECTOR = "kafka-spark"
# mtime of the first file in event order (2023-11-14 22:13:20 UTC); +1 s per file after it.
MTIME_BASE_S = 1_700_000_000
_PARTS = ("warmup", "benchmark")

_SPARK_TYPES = {"INT": "INT", "BIGINT": "BIGINT", "VARCHAR": "STRING", "TIMESTAMP(3)": "TIMESTAMP"}


def ddl_schema() -> str:
    """The files' schema as a Spark DDL string, in the files' column order: a time column is
    stored as its epoch milliseconds (`date_time_ms BIGINT`, docs/dataset-format.md)."""
    return ", ".join(f"`{file_name(c)}` {_SPARK_TYPES[file_type(c)]}" for c in COLUMNS)


def _columns() -> list[Any]:
    """The events' columns in schema order, each time as TIMESTAMP from its epoch ms."""
    from pyspark.sql import functions as F

    return [
        F.timestamp_millis(F.col(file_name(c))).alias(c.name) if is_time(c) else F.col(c.name)
        for c in COLUMNS
    ]


def part_files(part_dir: Path) -> list[Path]:
    """A part's data files in event order (`part-SSSSS-FFF.parquet`: slice, then stripe)."""
    return sorted(p for p in Path(part_dir).glob("part-*") if p.suffix[1:] in FORMATS)


def slice_width(files: list[Path]) -> int:
    """Files per time slice: how many share the first file's slice number."""
    slices = [f.name.split("-")[1] if f.name.count("-") >= 2 else f.name for f in files]
    return max(1, slices.count(slices[0])) if slices else 1


def order_mtimes(part_dir: Path) -> None:
    """Give every file of the dataset holding `part_dir` an mtime in event order. A dataset of
    the benchmark part alone (a rate search's layout for a trial) starts after the warm-up's
    files, as if both were there."""
    root = Path(part_dir).resolve().parent
    parts = [root / p for p in _PARTS if (root / p).is_dir()]
    if Path(part_dir).resolve() not in parts:  # a lone directory (tests): order its files only
        parts = [Path(part_dir).resolve()]
    k = 0
    if parts == [root / "benchmark"] and (root / MANIFEST).is_file():
        k = len(Dataset(root).params.layout("warmup"))
    for part in parts:
        for path in part_files(part):
            mtime = MTIME_BASE_S + k
            if int(path.stat().st_mtime) != mtime:
                os.utime(path, (mtime, mtime))
            k += 1


def stage(
    part_dir: Path | S3Url, watch_dir: Path | S3Url, release: bool = True, again: bool = False
) -> Feed:
    """Release the part's files into `watch_dir` (the folder both phases watch), each
    appearing whole and at once, under the part's name as a prefix so the two parts' files
    never collide; files already there (a retried submission) are left alone. `release`
    False (a rate-fed job): staged only, the protocol releases them. `again` (a query
    restored from the phase checkpoint, which read none of the part): the part's files a
    previous restore released are taken away first, so this one's are released anew: by the
    protocol's clock when fed at a rate, and none of another layout's read twice.

    On a store (a part and `watch_dir` both `s3://`), no mtime can be set: an object's
    LastModified is the store's clock at its copy. The files are copied one after another
    in event order, and their keys sort in event order too; Spark's source sorts its listing
    (S3A lists in key order) by modification time with a stable sort, so files copied within
    one clock tick keep their key order. `check_store_order` proves it after the release."""
    prefix = f"{part_dir.name}-"
    if again:
        for stale in files.children(watch_dir):
            if stale.name.startswith(prefix):
                files.delete(stale)
    feed = Feed(PartFeed.of(part_dir), watch_dir, prefix=prefix, fresh=False)
    if not feed.part.files:
        raise DatasetError(f"dataset part {part_dir} has no data files")
    if not feed.on_store:
        order_mtimes(Path(part_dir))
    if release:
        feed.release()  # before the query starts: its batches take whole time slices
        if feed.on_store:
            check_store_order(feed)
    return feed


def check_store_order(feed: Feed) -> None:
    """The released files' LastModified times, in key order (the listing's), never go back:
    Spark's source then reads them in event order. EngineError (one line) if the store's
    clock did go back between two copies."""
    stamps = {str(f): at for f, _, at in files.files_under(feed.dir)}
    ordered = [str(p) for p in feed.paths]  # event order = key order
    for before, after in itertools.pairwise(ordered):
        if stamps.get(after, 0.0) < stamps.get(before, 0.0):
            raise EngineError(
                f"the store dated {after} before {before} (its clock went back between two "
                "copies): Spark's file source would read them out of event order"
            )


def rate_fed_max_files(part: PartFeed, batch_events: int) -> int:
    """maxFilesPerTrigger for a rate-fed part: whole time slices (the release's steps) holding
    about `batch_events` (the unrated batch's size). A batch takes what was released since the
    last one, so the cap only bounds a batch catching up with a backlog; at a rate a slice is
    small (100 ms of events), and one slice a batch would fall behind at any trigger interval
    above 100 ms."""
    steps = release_steps(part)
    if not steps:
        return 1
    width = max(len(step) for step in steps)
    per_slice = max(1, max(sum(f.events for f in step) for step in steps))
    return width * max(1, batch_events // per_slice)


def read_events(spark: Any, watch_dir: Path | S3Url, max_files: int, file_format: str) -> Any:
    """The `events` streaming DataFrame (watermark date_time - 4 s) over `watch_dir`, read
    with Spark's own Parquet (vectorized) or CSV file stream source."""
    delay_s = WATERMARK_DELAY_MS / 1000
    reader = spark.readStream.format(file_format).schema(ddl_schema())
    if file_format == "csv":
        reader = reader.options(**_csv_options())
    return (
        reader.option("pathGlobFilter", f"*.{file_format}")
        .option("maxFilesPerTrigger", str(max_files))
        .load(files.as_engine_path(watch_dir))
        .select(*_columns())
        .withWatermark("date_time", f"{delay_s:g} seconds")
    )


def _csv_options() -> dict[str, str]:
    """The CSV reading both sources share: a file's lines and a Kafka record's value are the
    same text, so they parse alike (an empty field is null; a malformed line fails the query)."""
    return {"header": "false", "sep": ",", "nullValue": "", "mode": "FAILFAST"}


def kafka_options(src: KafkaSource, topics: list[str], max_offsets: int | None) -> dict[str, str]:
    """Spark's `kafka` source over `topics` from their first records, at most
    `max_offsets` records per micro-batch (None: all there are). A restored query resumes
    its checkpoint's offsets instead of the starting ones: restore.kafka_subscription says
    which topics a restore subscribes to, and why."""
    options = {
        "kafka.bootstrap.servers": src.bootstrap,
        "subscribe": ",".join(topics),
        "startingOffsets": "earliest",
    }
    if max_offsets is not None:
        options["maxOffsetsPerTrigger"] = str(max_offsets)
    return options


def read_kafka_events(spark: Any, options: dict[str, str]) -> Any:
    """The `events` streaming DataFrame over a load's topics: each record's value (the
    dataset's CSV line) parsed as the file source parses the files (the same schema and
    options), so the columns, their types, the nulls and the watermark are the file source's."""
    from pyspark.sql import functions as F

    delay_s = WATERMARK_DELAY_MS / 1000
    line = F.col("value").cast("string")
    parsed = F.from_csv(line, ddl_schema(), _csv_options()).alias("e")
    return (
        spark.readStream.format("kafka")
        .options(**options)
        .load()
        .select(parsed)
        .select("e.*")
        .select(*_columns())
        .withWatermark("date_time", f"{delay_s:g} seconds")
    )


def view_sql(kind: Kind) -> str:
    """View `person`, `auction` or `bid`: that kind's rows with its own column names."""
    columns = ", ".join(f"`{c.name}` AS `{c.view_name}`" for c in view_columns(kind))
    return (
        f"CREATE OR REPLACE TEMPORARY VIEW `{kind.name.lower()}` AS SELECT {columns} "
        f"FROM `{SOURCE_VIEW}` WHERE `event_type` = {int(kind)}"
    )


def register_inputs(spark: Any, watch_dir: Path | S3Url, max_files: int, file_format: str) -> None:
    """Register `events` (over the watched directory) and the three kind views."""
    register_events(spark, read_events(spark, watch_dir, max_files, file_format))


def register_events(spark: Any, events: Any) -> None:
    """Register `events` (a streaming DataFrame of either source) and the three kind views."""
    events.createOrReplaceTempView(SOURCE_VIEW)
    for kind in Kind:
        spark.sql(view_sql(kind))

"""Spark on an object store, in a Python process of its own (one SparkContext a process):
`python s3_probe_spark.py DATASET_URL CHECKPOINT_URL JARS [MASTER]` prints one JSON line of
facts (MASTER: local[2] by default, or a standalone master's spark:// URL).

Plain PySpark, no engine of ours: the probe shows which settings make Spark 4 (local mode)
read a Parquet dataset from `s3://` through Hadoop's S3A (hadoop-aws and the AWS SDK bundle,
`JARS` joined by commas) and checkpoint a stateful streaming query there, with the options of
`nexmark.engines.spark.s3_access.conf`. The store's address and credentials come from the
standard AWS variables of the environment.
"""

from __future__ import annotations

import json
import sys
import time


def main(dataset: str, checkpoints: str, jars: str, master: str = "local[2]") -> dict:
    from pyspark.sql import SparkSession
    from pyspark.sql import functions as F  # noqa: N812

    from nexmark.engines.spark.s3_access import conf as spark_conf
    from nexmark.storage.s3 import S3Settings

    builder = (
        SparkSession.builder.master(master)
        .appName("nexmark-s3-probe")
        .config("spark.jars", jars)
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "2")
    )
    for key, value in spark_conf(S3Settings.from_env()).items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    facts: dict = {
        "hadoop": spark.sparkContext._jvm.org.apache.hadoop.util.VersionInfo.getVersion()
    }
    try:
        started = time.monotonic()
        rows = spark.read.parquet(f"{dataset}/warmup").groupBy("event_type").count().collect()
        facts["read_counts"] = {str(r["event_type"]): r["count"] for r in sorted(rows)}
        facts["read_seconds"] = round(time.monotonic() - started, 2)

        # A tiny stateful streaming query checkpointing (offsets, commits, state) to s3://,
        # run twice: the second run restores from the first one's checkpoint there and goes on
        # from its next batch.
        first = _stream(spark, F, checkpoints)
        facts["batches"], facts["stream_error"] = len(first["progress"]), _error(first)
        second = _stream(spark, F, checkpoints)
        facts["first_batch_ids"] = [p["batchId"] for p in first["progress"]]
        facts["restored_batch_ids"] = [p["batchId"] for p in second["progress"]]
        facts["restored_error"] = _error(second)
    finally:
        spark.stop()
    return facts


def _stream(spark, F, checkpoints: str) -> dict:  # noqa: N803 - pyspark's functions
    """Run a counting query on the rate source until 3 batches with rows; its progress."""
    ticks = spark.readStream.format("rate").option("rowsPerSecond", 200).load()
    counts = ticks.groupBy((F.col("value") % 10).alias("k")).count()
    query = (
        counts.writeStream.outputMode("complete")
        .format("noop")
        .option("checkpointLocation", checkpoints)
        .trigger(processingTime="1 second")
        .start()
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and query.exception() is None:
        if sum(1 for p in query.recentProgress if p.get("numInputRows", 0) > 0) >= 3:
            break
        time.sleep(0.5)
    error = query.exception()
    progress = list(query.recentProgress)
    query.stop()
    return {"progress": progress, "error": None if error is None else str(error)[:2000]}


def _error(run: dict) -> str | None:
    return run["error"]


if __name__ == "__main__":
    try:
        out = main(*sys.argv[1:5])
    except Exception as exc:  # the probe reports what failed, as a fact
        out = {"error": f"{type(exc).__name__}: {str(exc)[:3000]}"}
    print(json.dumps(out), flush=True)

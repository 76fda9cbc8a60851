"""Spark 4.3 (PyPI's pyspark) reads a loaded topic through spark-sql-kafka-0-10_2.13 4.2.0
(Maven Central's newest), both as a batch and as a stream (Trigger.AvailableNow): each
partition's counts of each kind match the load, and the stream reads every event once.

The probe runs in a Python process of its own: a SparkSession's jars are fixed when its JVM
starts, and another test of the same pytest process may have started one already."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from nexmark.sources.kafka import connectors, jars
from nexmark.workload.dataset import KIND_NAMES

pytestmark = [pytest.mark.slow, pytest.mark.spark]

PROBE = r"""
import json, sys
from pyspark.sql import SparkSession, functions as F
jars, options, stream_options = json.loads(sys.argv[1])
spark = (SparkSession.builder.master("local[2]").config("spark.jars", ",".join(jars))
         .config("spark.ui.enabled", "false").getOrCreate())
spark.sparkContext.setLogLevel("ERROR")
df = spark.read.format("kafka").options(**options).load()
kind = F.substring_index(F.col("value").cast("string"), ",", 1).cast("int")
rows = df.select(kind.alias("k"), "partition").groupBy("k", "partition").count().collect()
query = (spark.readStream.format("kafka").options(**stream_options).load()
         .selectExpr("CAST(value AS STRING) AS v").writeStream.format("memory")
         .queryName("probe").trigger(availableNow=True).start())
query.awaitTermination(300)
streamed = spark.sql("SELECT COUNT(*), COUNT(DISTINCT v) FROM probe").collect()[0]
print(json.dumps({"batch": [[r["k"], r["partition"], r["count"]] for r in rows],
                  "streamed": [streamed[0], streamed[1]], "version": spark.version}))
spark.stop()
"""


def test_spark_reads_a_load(broker, loaded) -> None:
    connector = [str(p) for p in jars.ensure([jars.SPARK_CONNECTOR])]
    topic = loaded.topics["benchmark"]
    options = connectors.spark_kafka_options(topic, broker.bootstrap)
    stream = {k: v for k, v in options.items() if k != "endingOffsets"}  # batch only
    done = subprocess.run(
        [sys.executable, "-c", PROBE, json.dumps([connector, options, stream])],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["version"].startswith("4.3")
    per_partition = [0] * loaded.partitions
    kinds = dict.fromkeys(KIND_NAMES, 0)
    for k, partition, count in result["batch"]:
        per_partition[partition] += count
        kinds[KIND_NAMES[k]] += count
    assert per_partition == loaded.counts["benchmark"]
    events = sum(loaded.counts["benchmark"])
    assert sum(kinds.values()) == events and kinds["bid"] == events * 46 // 50
    assert result["streamed"] == [events, events]  # every event once (lines are unique)

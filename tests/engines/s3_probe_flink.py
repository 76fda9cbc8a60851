"""Flink on an object store, in a Python process of its own (PyFlink: one gateway a process):
`python s3_probe_flink.py DATASET_URL CHECKPOINT_URL OUT_DIR [init-plugins | remote:PORT]`
prints one JSON line of facts.

Plain PyFlink, no engine of ours: the probe shows which settings make Flink 2.3 (its embedded
cluster, in the gateway JVM) read a Parquet dataset from `s3://` through the flink-s3-fs-hadoop
plugin and checkpoint a stateful job there. The parent sets the environment: FLINK_PLUGINS_DIR
(a folder holding `s3-fs-hadoop/flink-s3-fs-hadoop-2.3.0.jar`), FLINK_CONF_DIR (a config.yaml
with the `s3.*` options), HADOOP_CLASSPATH (the parquet format's jars) and JAVA_HOME.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from pyflink.table import EnvironmentSettings, TableEnvironment

from nexmark.engines.flink import s3_access


def main(dataset: str, checkpoints: str, out_dir: str, mode: str) -> dict:
    """`mode`: "init-plugins" (the embedded cluster, file systems initialized by us), "" (the
    embedded cluster as PyFlink leaves it), or "remote:PORT" (a cluster's REST port)."""
    facts: dict = {}
    init = mode == "init-plugins"
    remote = (
        {"execution.target": "remote", "rest.address": "127.0.0.1", "rest.port": mode[7:]}
        if mode.startswith("remote:")
        else {}
    )
    # 1. Read the dataset's warm-up part from s3:// (a bounded source, batch mode), counts
    # written to local CSV files: a collect() of a finished job waits a minute for results
    # the embedded cluster no longer serves.
    batch = TableEnvironment.create(EnvironmentSettings.in_batch_mode())
    batch.get_config().set("parallelism.default", "1")
    for key, value in {**s3_access.TABLE_OPTIONS, **remote}.items():
        batch.get_config().set(key, value)
    if init:  # what a cluster's entry point does at start, and the embedded cluster does not
        from pyflink.java_gateway import get_gateway

        s3_access.initialize_plugins(get_gateway().jvm)
    batch.execute_sql(
        f"""CREATE TABLE events (event_type INT, b_auction BIGINT, b_price BIGINT)
        WITH ('connector' = 'filesystem', 'path' = '{dataset}/warmup', 'format' = 'parquet')"""
    )
    batch.execute_sql(
        f"""CREATE TABLE counts (event_type INT, n BIGINT)
        WITH ('connector' = 'filesystem', 'path' = '{out_dir}', 'format' = 'csv')"""
    )
    started = time.monotonic()
    batch.execute_sql(
        "INSERT INTO counts SELECT event_type, COUNT(*) FROM events GROUP BY event_type"
    ).wait()
    facts["read_seconds"] = round(time.monotonic() - started, 2)
    counts = {}
    for path in sorted(Path(out_dir).rglob("*")):
        if path.is_file() and not path.name.startswith("."):
            for line in path.read_text().split():
                kind, n = line.split(",")
                counts[kind] = int(n)
    facts["read_counts"] = dict(sorted(counts.items()))

    # 2. A tiny stateful job checkpointing to s3:// every 500 ms, run for a few checkpoints,
    # its checkpoints kept on cancellation (else Flink deletes them: nothing left to check).
    first = _stateful_job(checkpoints, None, remote)
    facts["job_id"], facts["job_status_before_cancel"] = first

    # 3. The same job again, restored from the first one's last checkpoint on s3://: its own
    # checkpoints go on from that one's number.
    numbers = _completed_checkpoints(checkpoints, facts["job_id"])
    last = f"{checkpoints}/{facts['job_id']}/chk-{max(numbers)}"
    facts["restored_from"] = last
    facts["restored_job_id"], facts["restored_status"] = _stateful_job(checkpoints, last, remote)
    return facts


def _completed_checkpoints(checkpoints: str, job_id: str) -> list[int]:
    """The numbers of a job's completed checkpoints on the store (an aborted one, cut by the
    cancel, has no _metadata)."""
    from nexmark.storage import files
    from nexmark.storage.s3 import S3Url

    taken = files.children(S3Url.parse(checkpoints) / job_id)
    done = [p for p in taken if p.name.startswith("chk-") and files.is_file(p / "_metadata")]
    return [int(p.name[4:]) for p in done]


def _stateful_job(checkpoints: str, restore_from: str | None, remote: dict) -> tuple[str, str]:
    """Run the job until it has completed a checkpoint on the store (or failed, or 120 s
    passed), then cancel it; (its id, its status before the cancel)."""
    stream = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    conf = stream.get_config()
    conf.set("parallelism.default", "1")
    conf.set("execution.checkpointing.interval", "500ms")
    conf.set("execution.checkpointing.dir", checkpoints)
    conf.set("execution.checkpointing.externalized-checkpoint-retention", "RETAIN_ON_CANCELLATION")
    conf.set("state.backend.type", "hashmap")
    for key, value in remote.items():
        conf.set(key, value)
    if restore_from is not None:
        conf.set("execution.state-recovery.path", restore_from)
    stream.execute_sql(
        """CREATE TABLE ticks (k INT, v BIGINT) WITH ('connector' = 'datagen',
        'rows-per-second' = '200', 'fields.k.min' = '0', 'fields.k.max' = '9')"""
    )
    stream.execute_sql("CREATE TABLE sink (k INT, n BIGINT) WITH ('connector' = 'blackhole')")
    result = stream.execute_sql("INSERT INTO sink SELECT k, COUNT(*) FROM ticks GROUP BY k")
    client = result.get_job_client()
    job_id = str(client.get_job_id())
    # Polled, not a fixed wait: a loaded machine takes seconds more to schedule the job and
    # write its first checkpoint to the store.
    deadline = time.monotonic() + 120
    while not _completed_checkpoints(checkpoints, job_id) and time.monotonic() < deadline:
        if client.get_job_status().result().is_globally_terminal_state():
            break
        time.sleep(0.5)
    status = str(client.get_job_status().result())
    client.cancel().result()
    return job_id, status


if __name__ == "__main__":
    try:
        out = main(*sys.argv[1:4], mode=(sys.argv[4:] or [""])[0])
    except Exception as exc:  # the probe reports what failed, as a fact
        out = {"error": f"{type(exc).__name__}: {str(exc)[:3000]}"}
    print(json.dumps(out), flush=True)

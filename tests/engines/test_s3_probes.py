"""Flink 2.3 and Spark 4 on an object store, for real: the session's local s3proxy, a tiny
dataset generated on it, each engine (plain PyFlink / PySpark in a child process:
s3_probe_*.py) reading the dataset's warm-up part from `s3://` and checkpointing a small
stateful job there. The settings are each engine's `s3_access` module's; docs/object-store.md
reports the outcome."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from nexmark.engines import support
from nexmark.engines.flink import s3_access as flink_s3
from nexmark.engines.spark import s3_access as spark_s3
from nexmark.java import find_java
from nexmark.storage.s3proxy import S3Proxy
from nexmark.workload.dataset import KIND_NAMES, Dataset, DatasetParams
from nexmark.workload.writer import ensure_dataset

pytestmark = pytest.mark.slow

HERE = Path(__file__).parent
BUCKET = "probe"


@pytest.fixture(scope="module")
def s3(s3_server: S3Proxy) -> S3Proxy:
    """The session's s3proxy, this module's bucket on it."""
    s3_server.make_bucket(BUCKET)
    return s3_server


@pytest.fixture(scope="module")
def dataset(s3, monkeypatch_module) -> Dataset:
    for key, value in s3.env().items():
        monkeypatch_module.setenv(key, value)
    url = f"s3://{BUCKET}/ds"
    return ensure_dataset(DatasetParams(events=20_000, files=2), url, show_progress=False)


@pytest.fixture(scope="module")
def monkeypatch_module() -> Iterator[pytest.MonkeyPatch]:
    with pytest.MonkeyPatch.context() as patch:
        yield patch


def warmup_counts(dataset: Dataset) -> dict[str, int]:
    """The manifest's counts of the warm-up part, keyed as the probes report them."""
    counts = dataset.manifest["parts"]["warmup"]["counts"]
    return {str(k): counts[name] for k, name in enumerate(KIND_NAMES) if counts[name]}


def run_probe(script: str, *args: str, env: dict) -> dict:
    done = subprocess.run(
        [sys.executable, str(HERE / script), *args],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, **env},
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def flink_env(s3: S3Proxy, work: Path) -> dict[str, str]:
    """A Flink home's folders for the probe: the S3 plugin, a config.yaml with the s3.*
    options (mode 600: it holds the secret), the parquet format's jars."""
    import pyflink

    from nexmark.engines.flink import jars as flink_jars

    dist = Path(pyflink.__file__).parent
    plugins = flink_s3.plugins_dir(work / "plugins")
    conf = work / "conf"
    shutil.copytree(dist / "conf", conf)
    config = yaml.safe_load((conf / "config.yaml").read_text()) or {}
    config.update(flink_s3.options(s3.settings))
    (conf / "config.yaml").chmod(0o600)
    (conf / "config.yaml").write_text(yaml.safe_dump(config))
    parquet = flink_jars.ensure(["parquet", "zstd"])
    return {
        # With FLINK_HOME set, PyFlink keeps our FLINK_PLUGINS_DIR (else it points it at the
        # distribution's plugins/ when it finds its home).
        "FLINK_HOME": str(dist),
        "FLINK_PLUGINS_DIR": str(plugins),
        "FLINK_CONF_DIR": str(conf),
        "FLINK_LOG_DIR": str(work / "log"),
        "HADOOP_CLASSPATH": os.pathsep.join(str(p) for p in parquet),
        "JAVA_HOME": str(find_java().home),
    }


@pytest.mark.flink
def test_flink_reads_the_dataset_and_checkpoints_on_s3(s3, dataset, tmp_path):
    env = flink_env(s3, tmp_path)
    ckpt, out = f"s3://{BUCKET}/flink-ckpt", str(tmp_path / "out")
    facts = run_probe("s3_probe_flink.py", str(dataset.path), ckpt, out, "init-plugins", env=env)
    assert "error" not in facts, facts["error"][:1500]
    assert facts["read_counts"] == warmup_counts(dataset)
    assert facts["job_status_before_cancel"] == "JobStatus.RUNNING"
    job = s3.blobs / BUCKET / "flink-ckpt" / facts["job_id"]
    completed = sorted(int(p.parent.name[4:]) for p in job.glob("chk-*/_metadata"))
    assert completed, f"no completed checkpoint under {job}: {list(job.glob('*'))}"
    # Restored from the last one on the store, the job's checkpoints go on from its number.
    assert facts["restored_from"].endswith(f"/chk-{completed[-1]}")
    assert facts["restored_status"] == "JobStatus.RUNNING"
    again = s3.blobs / BUCKET / "flink-ckpt" / facts["restored_job_id"]
    resumed = sorted(int(p.parent.name[4:]) for p in again.glob("chk-*/_metadata"))
    assert resumed and resumed[0] > completed[-1], (completed, resumed)


@pytest.mark.flink
def test_flink_cluster_processes_read_and_checkpoint_on_s3(s3, dataset, tmp_path):
    """A JobManager and a TaskManager of their own (LocalCluster), the plugin in their home's
    plugins/, the s3.* options in their config.yaml: they load it at start by themselves."""
    import pyflink

    from nexmark.engines.flink import jars as flink_jars
    from nexmark.engines.flink.local_cluster import LocalCluster

    root = tmp_path / "cluster"
    dist_plugins = Path(pyflink.__file__).parent / "plugins"
    flink_s3.plugins_dir(root / "home" / "plugins", extra=dist_plugins)
    parquet = flink_jars.ensure(["parquet", "zstd"])
    options = {**flink_s3.options(s3.settings), **flink_s3.TABLE_OPTIONS}
    cluster = LocalCluster(root, find_java(), options, parquet)
    try:
        cluster.start()
        env = flink_env(s3, tmp_path / "client")
        del env["FLINK_PLUGINS_DIR"]  # the client reads nothing from the store itself
        ckpt, out = f"s3://{BUCKET}/cluster-ckpt", str(tmp_path / "out")
        facts = run_probe(
            "s3_probe_flink.py",
            str(dataset.path),
            ckpt,
            out,
            f"remote:{cluster.rest_port}",
            env=env,
        )
    finally:
        cluster.stop()
    assert "error" not in facts, facts["error"][:1500]
    assert facts["read_counts"] == warmup_counts(dataset)
    assert facts["restored_status"] == "JobStatus.RUNNING"
    again = s3.blobs / BUCKET / "cluster-ckpt" / facts["restored_job_id"]
    assert list(again.glob("chk-*/_metadata")), "the restored job checkpointed nothing"


@pytest.mark.flink
def test_flink_embedded_does_not_load_plugins_by_itself(s3, dataset, tmp_path):
    """Without FileSystem.initialize(conf, plugins) the gateway's embedded cluster knows no
    s3:// scheme, although FLINK_PLUGINS_DIR holds the plugin: the engine must call it."""
    env = flink_env(s3, tmp_path)
    out = str(tmp_path / "out")
    facts = run_probe("s3_probe_flink.py", str(dataset.path), f"s3://{BUCKET}/x", out, env=env)
    assert "error" in facts
    logs = "".join(p.read_text(errors="replace") for p in (tmp_path / "log").glob("*.log"))
    assert "Could not find a file system implementation for scheme 's3'" in logs


@pytest.mark.spark
def test_spark_reads_the_dataset_and_checkpoints_on_s3(s3, dataset):
    jars = ",".join(str(p) for p in spark_s3.jars())
    facts = run_probe(
        "s3_probe_spark.py",
        str(dataset.path),
        f"s3://{BUCKET}/spark-ckpt",
        jars,
        env={"JAVA_HOME": str(find_java().home)},
    )
    assert "error" not in facts, facts["error"][:1500]
    assert facts["hadoop"] == "3.5.0"  # the client hadoop-aws is pinned to match
    assert facts["read_counts"] == warmup_counts(dataset)
    assert facts["stream_error"] is None and facts["batches"] >= 3
    ckpt = s3.blobs / BUCKET / "spark-ckpt"
    assert (ckpt / "metadata").is_file()
    assert sorted(p.name for p in (ckpt / "commits").iterdir())[:1] == ["0"]
    assert list((ckpt / "state" / "0").glob("*/*.delta")), "no state file on the store"
    # The second run restored from the store: its batches go on after the first run's.
    assert facts["restored_error"] is None
    assert facts["restored_batch_ids"][0] > max(facts["first_batch_ids"])


@pytest.mark.spark
def test_spark_standalone_cluster_reads_and_checkpoints_on_s3(s3, dataset):
    """A master and a worker of their own (StandaloneCluster): the executors get the S3A jars
    from the driver (spark.jars) and the fs.s3a.* options with the application's conf."""
    from nexmark.engines.spark.cluster import StandaloneCluster

    jars = ",".join(str(p) for p in spark_s3.jars())
    # Its own temporary folder (removed at stop): each executor's copy of the jars (the SDK
    # bundle: 686 MB) lands in the worker's work folder.
    with StandaloneCluster(cores=2, memory="2g") as cluster:
        facts = run_probe(
            "s3_probe_spark.py",
            str(dataset.path),
            f"s3://{BUCKET}/spark-cluster-ckpt",
            jars,
            cluster.url,
            env={"JAVA_HOME": str(find_java().home)},
        )
    assert "error" not in facts, facts["error"][:1500]
    assert facts["read_counts"] == warmup_counts(dataset)
    assert facts["stream_error"] is None and facts["restored_error"] is None
    assert facts["restored_batch_ids"][0] > max(facts["first_batch_ids"])


def test_options_mask_the_secret(s3):
    for options in (flink_s3.options(s3.settings), spark_s3.conf(s3.settings)):
        shown = json.dumps(support.redacted(options))
        assert s3.settings.secret_key in json.dumps(options)
        assert s3.settings.secret_key not in shown and s3.endpoint in shown

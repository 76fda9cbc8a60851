"""The remote target: a standalone cluster from the pip-installed distribution, driven over REST."""

from __future__ import annotations

from collections import Counter

import psutil
import pytest
from flink_helpers import isolated_env, q2_expected, run_isolated

from nexmark.engines.flink import files, memory

pytestmark = [pytest.mark.flink, pytest.mark.slow]


def test_two_phase_cycle_on_a_standalone_cluster(tiny_dataset, tmp_path):
    facts = run_isolated("remote", tiny_dataset, tmp_path, isolated_env())

    assert len(facts["pids"]) == 2  # one JobManager, one TaskManager
    assert facts["restored_id"] == facts["phase_id"]
    assert facts["benchmark_events"] == 1000
    rows = facts["rows"]
    assert rows and {op for op, _ in rows} == {"+"}  # RowKind.ADD
    assert Counter(tuple(row) for _, row in rows) == q2_expected(tiny_dataset)  # exactly once
    assert facts["target"] == f"remote {facts['url']}" and facts["version"] == "2.3.0"
    assert facts["slots"] == "2"
    # The project's standalone cluster caches job status 50 ms: nothing to warn about.
    assert facts["config"]["cluster:web.refresh-interval"] == "50 ms" and facts["notes"] == []
    # The cluster keeps its own memory sizing: recorded as found, none of ours sent or recorded.
    config = facts["config"]
    assert not [k for k in facts["job_options"] if k.startswith("taskmanager.memory.")]
    assert not [k for k in config if k.startswith(("taskmanager.memory.", "nexmark.jvm"))]
    assert config["taskmanagers"] == "1" and config["taskmanager.0:slotsNumber"] == "2"
    own = {"taskmanager.memory.process.size": config["cluster:taskmanager.memory.process.size"]}
    managed = int(config["taskmanager.0:memoryConfiguration.managedMemory"])
    assert managed != 300 * memory.MIB  # the settings' managed size did not reach it
    assert abs(managed - memory.size_taskmanager(own, 2, 0).managed) < memory.MIB
    # CPU comes from the cluster's own metrics: positive, and not more than its JVMs used.
    assert 1.0 < facts["cpu"] <= facts["cluster_cpu"] + 1.0
    assert not [p for p in facts["pids"] if psutil.pid_exists(p)]  # the cluster is gone


def test_a_remote_cluster_must_read_the_parts_format(tmp_path):
    part = tmp_path / "part"
    part.mkdir()
    for i in range(2):
        table = files.file_table(i * 500, (i + 1) * 500)
        files.write_parquet(table, part / f"part-00000-{i:03d}.parquet", "zstd", 100)
    facts = run_isolated("remote_formats", part, tmp_path / "work", isolated_env())

    refused = facts["without"]
    assert "\n" not in refused["error"]
    assert "cannot read parquet files" in refused["error"]
    assert "flink-sql-parquet-2.3.0.jar" in refused["error"] and "lib/" in refused["error"]
    # The check's job is refused at submission (the JobManager cannot load the format) or fails;
    # either way the query itself is never submitted.
    assert refused["jobs"] <= 1, refused
    # With the jars in its lib/ (StandaloneCluster's default), the check passes and the job
    # reads the part; the check's file is removed.
    assert facts["with"]["state"] == "finished" and facts["with"]["jobs"] == 2
    assert facts["with"]["probe_left"] == [] or all(
        "format-check" not in p for p in facts["with"]["probe_left"]
    )

"""The remote target: a standalone cluster from the pip-installed distribution, driven over REST."""

from __future__ import annotations

from collections import Counter

import psutil
import pytest
from flink_helpers import q2_expected
from test_flink_errors import isolated_env, run_isolated

from nexmark.engines.flink import memory

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

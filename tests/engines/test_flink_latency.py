"""Event-time latency on the real embedded Flink: a rate-fed q0 (a row per bid), q11 (session
windows) and q5 (hopping windows, whose rows leave out the window) get percentiles that are
coherent and bounded by the phase."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from nexmark.metrics.machine import collect_machine
from nexmark.protocol.display import RunDisplay
from nexmark.protocol.options import ProtocolOptions
from nexmark.protocol.parts import PhaseParts
from nexmark.protocol.query_run import QueryRun
from nexmark.protocol.record import RunContext, build_result
from nexmark.results.store import load_results
from nexmark.workload.dataset import DatasetParams
from nexmark.workload.feed import rate_slices
from nexmark.workload.writer import ensure_dataset

pytestmark = [pytest.mark.flink, pytest.mark.slow]

BENCH = 10_000
RATE = 2_000.0  # a 5 s benchmark phase, far below Flink's speed on this data


@pytest.fixture(scope="module")
def dataset(tmp_path_factory):
    # 200 events per second of event time: the phase spans 50 s of it, so sessions close
    params = DatasetParams(
        events=4 * BENCH, files=2, rate=200, benchmark_slices=rate_slices(BENCH, RATE)
    )
    root = tmp_path_factory.mktemp("latency")
    return ensure_dataset(params, out=root / params.dataset_id, show_progress=False)


@pytest.mark.parametrize("query", ["q0", "q11", "q5"])
def test_rate_fed_latency_is_plausible(flink_engine, dataset, tmp_path, query):
    parts = PhaseParts.of(dataset)
    # 1% of the rows stamped (the default 0.1% leaves ~9 of this tiny phase's bids)
    opts = ProtocolOptions(checkpoint_interval_s=2.0, timeout_s=240, rate=RATE, latency_sample=0.01)
    run = QueryRun(
        flink_engine, query, parts, tmp_path / "work", opts, RunDisplay(1, enabled=False)
    )
    measured = run.execute()
    ctx = RunContext("test-run", dataset, flink_engine.info(), collect_machine())
    r = build_result(ctx, measured, run.sampler, parts)

    lat = r.latency
    assert r.rate.delivered_eps == pytest.approx(RATE, rel=0.05)
    assert lat.rows and lat.rows > 10
    assert 0 < lat.p50_s <= lat.p95_s <= lat.p99_s <= lat.max_s
    # no row can leave later than the phase's end after the first release
    phase_s = measured.t_end - measured.release_log[0][0]
    assert lat.max_s < phase_s
    if query == "q0":
        # a bid leaves within a moment of its release when Flink keeps up
        assert lat.p50_s < 1.0 and 30 < lat.rows < 300  # 1% of ~9,200 bids
    else:
        # a session or hopping window's row waits for the watermark (4 s of event time, 0.4 s
        # of wall here); q5's rows leave its window out, its end stamped all the same
        assert lat.p50_s > 0.2 and lat.depends.startswith("its window's end")
    assert lat.series and lat.series[0][0] >= 0


def test_rate_fed_repeats_each_restore_the_stamps_sink(tmp_path):
    """A rate-fed run's repeats restore one snapshot, which names the stamps sink's files
    still to be compacted; the first repeat compacts and deletes them. Each later repeat
    must find them again (engines/flink/sink_dirs.py): every repeat ok, each with stamps."""
    env = {**os.environ, "NEXMARK_DATA_DIR": str(tmp_path / "data")}
    # 50K benchmark events at 10K/s: 5 s, and about 46 stamped bids (1 in 1,000) per repeat
    args = ["-n", "200K", "--rate", "10K", "-q", "q0", "--repeat", "2"]
    args += ["--checkpoint-interval", "2s", "--results", str(tmp_path / "r"), "--no-report"]
    done = subprocess.run(
        [sys.executable, "-m", "nexmark", "run", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=400,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    (result,) = load_results(tmp_path / "r")
    assert [s.status for s in result.repeats] == ["ok", "ok"], [s.reason for s in result.repeats]
    assert all(s.latency_p50_s is not None for s in result.repeats)  # each read its stamps

"""`nexmark run --profile` on embedded Spark, for real: the driver's JVM (local mode: it runs
every task) sampled through the scored phases, a flame graph per query in the results. In a
process of its own: a profiled driver is a session of its own, and one process holds one."""

from __future__ import annotations

import pytest

from cli_process import nexmark
from nexmark.results.store import load_results

pytestmark = [pytest.mark.spark, pytest.mark.slow]


def test_a_spark_run_is_profiled_in_the_drivers_jvm(tmp_path):
    out = tmp_path / "results"
    done = nexmark(
        "run", "--engine", "spark", "-q", "q0", "-n", "400K", "--repeat", "2", "--profile",
        "--no-report", "--results", str(out), data=tmp_path / "data",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    (result,) = load_results(out)
    assert result.ok and result.setup.options["profile"] is True
    profile = result.profile
    assert profile is not None and profile.not_profiled is None
    assert profile.flame_graph == "profiles/q0.html"
    assert "<html" in (out / profile.flame_graph).read_text().lower()
    assert profile.samples > 100  # two repeats of two busy cores, one sample per 10 ms
    assert "file reading" in profile.kinds  # q0 reads Parquet and little else


def test_a_cluster_master_says_why_it_is_not_profiled() -> None:
    from nexmark.engines.spark import SparkEngine
    from nexmark.settings import Settings

    engine = SparkEngine(Settings.load(), master="spark://127.0.0.1:1")
    reason = engine.enable_profiling()
    assert reason is not None and "cluster master" in reason
    assert engine.profiler() is None

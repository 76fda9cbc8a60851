"""async-profiler inside embedded Flink's JVM, for real: a query's run sampled, its flame graph
written, and the samples given to kinds of work.

The profiled run starts its own gateway JVM (the profiler's jar on its classpath), and PyFlink
allows one gateway per Python process, where the session's shared engine already runs: so the run
is a `nexmark run --profile` in a child process."""

from __future__ import annotations

import pytest

from cli_process import nexmark
from nexmark.engines.profiling import DEFAULT_INTERVAL_MS, OTHER
from nexmark.results.store import load_results
from nexmark.settings import Settings

pytestmark = [pytest.mark.flink, pytest.mark.slow]


def test_a_remote_cluster_says_why_it_is_not_profiled() -> None:
    from nexmark.engines.flink import FlinkEngine

    engine = FlinkEngine(Settings.load(), rest_url="http://127.0.0.1:1")
    reason = engine.enable_profiling()
    assert reason is not None and "remote cluster" in reason
    assert engine.profiler() is None


def test_nexmark_run_profile_writes_a_flame_graph_per_query_and_links_it(tmp_path):
    out = tmp_path / "results"
    done = nexmark(
        "run", "-q", "q5", "-n", "1M", "--repeat", "2", "--profile", "--results", str(out),
        data=tmp_path / "data",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    (result,) = load_results(out)
    assert result.ok and result.setup.options["profile"] is True
    profile = result.profile
    assert profile is not None and profile.not_profiled is None
    assert profile.flame_graph == "profiles/q5.html"
    html = (out / profile.flame_graph).read_text()
    assert "<html" in html.lower() and len(html) > 10_000  # the flame graph page, with data
    assert profile.event in ("cpu", "itimer") and profile.interval_ms == DEFAULT_INTERVAL_MS
    assert profile.samples > 100  # two repeats of two busy cores for a second or more
    assert sum(profile.kinds.values()) == pytest.approx(1.0, abs=0.01)
    assert set(profile.kinds) - {OTHER}, profile.kinds  # some samples name a kind of work
    assert "state backend" in profile.kinds  # q5 keeps its windows in RocksDB
    assert profile.top_frames and all(0 < share <= 1 for share in profile.top_frames.values())
    report = (out / "report.html").read_text()
    assert 'href="profiles/q5.html"' in report  # the report links the flame graph

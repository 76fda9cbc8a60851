"""async-profiler inside embedded Flink's JVM, for real: a query's run sampled, its flame graph
written, and the samples given to kinds of work."""

from __future__ import annotations

import pytest

from cli_process import nexmark
from nexmark.engines.profiling import DEFAULT_INTERVAL_MS, OTHER
from nexmark.protocol.display import RunDisplay
from nexmark.protocol.options import ProtocolOptions
from nexmark.protocol.parts import PhaseParts
from nexmark.protocol.query_run import QueryRun
from nexmark.results.store import load_results
from nexmark.settings import Settings
from nexmark.workload.dataset import DatasetParams
from nexmark.workload.writer import ensure_dataset

pytestmark = [pytest.mark.flink, pytest.mark.slow]


@pytest.fixture(scope="module")
def dataset(tmp_path_factory):
    params = DatasetParams(events=1_000_000, files=2)
    root = tmp_path_factory.mktemp("profiled")
    return ensure_dataset(params, out=root / params.dataset_id, show_progress=False)


def test_a_run_is_sampled_in_the_engines_jvm_and_written_as_a_flame_graph(dataset, tmp_path):
    from nexmark.engines.flink import FlinkEngine

    engine = FlinkEngine(Settings.load(overrides=["flink.parallelism.default=2"]))
    assert engine.enable_profiling() is None  # embedded: the tasks run in the gateway's JVM
    with engine:
        profiler = engine.profiler()
        assert profiler is not None
        assert profiler.resume() in ("cpu", "itimer")
        run = QueryRun(
            engine, "q5", PhaseParts.of(dataset), tmp_path / "work",
            ProtocolOptions(timeout_s=240, repeat=1), RunDisplay(1, False),
        )  # fmt: skip
        run.execute()
        profiler.pause()
        summary = profiler.dump(tmp_path / "profiles" / "q5.html")
    html = (tmp_path / "profiles" / "q5.html").read_text()
    assert "<html" in html.lower() and len(html) > 10_000  # the flame graph page, with data
    # Two busy cores for seconds at one sample per 10 ms: hundreds of samples at least.
    assert summary.samples > 300
    assert sum(summary.kinds.values()) == pytest.approx(1.0)
    assert set(summary.kinds) - {OTHER}, summary.kinds  # some samples name a kind of work
    assert "state backend" in summary.kinds  # q5 keeps its windows in RocksDB
    assert summary.top_frames and all(0 < share <= 1 for _, share in summary.top_frames)


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
    assert profile.flame_graph == "profiles/q5.html" and (out / profile.flame_graph).is_file()
    assert profile.event in ("cpu", "itimer") and profile.interval_ms == DEFAULT_INTERVAL_MS
    assert profile.samples > 100  # two repeats of two busy cores for a second or more
    assert sum(profile.kinds.values()) == pytest.approx(1.0, abs=0.01)
    assert profile.top_frames
    report = (out / "report.html").read_text()
    assert 'href="profiles/q5.html"' in report  # the report links the flame graph

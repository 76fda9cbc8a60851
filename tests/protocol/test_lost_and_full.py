"""The suite's answer to a full disk and to an engine that cannot be started again, on the
fake engine (no JVM): the real ones are tests/cli/test_disk_full.py and
tests/integration/test_cluster_lost.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from fake_engine import FakeEngine, FakeWorld, Script
from nexmark.errors import DiskFullError, EngineError
from nexmark.protocol.preparation.options import ProtocolOptions
from nexmark.protocol.suite.runner import SuiteRun, run_suite
from nexmark.results.store import ResultStore
from nexmark.workload.dataset import Dataset, DatasetParams
from nexmark.workload.writer import ensure_dataset


@pytest.fixture(scope="module")
def dataset(tmp_path_factory: pytest.TempPathFactory) -> Dataset:
    params = DatasetParams(events=4_000, seed=3, files=2)
    return ensure_dataset(params, tmp_path_factory.mktemp("ds") / "d", show_progress=False)


def _suite(dataset: Dataset, results: Path, queries: list[str]) -> SuiteRun:
    options = ProtocolOptions(timeout_s=30.0, sample_interval_s=0.01)
    return SuiteRun(queries, dataset, results, options, show_progress=False)


class _DiskFullOn(FakeEngine):
    """Submitting `query` fails as Flink's checkpoint does when its directory's disk is full."""

    query = "q2"

    def submit(self, spec, *args, **kwargs):
        if spec.query == self.query:
            raise EngineError(
                "checkpoint of job 1 failed: CheckpointException: Asynchronous task checkpoint "
                "failed. ... java.io.IOException: No space left on device"
            )
        return super().submit(spec, *args, **kwargs)


def test_a_query_failed_by_a_full_disk_stops_the_run_unrecorded(dataset, tmp_path):
    """Every later query would fail alike: the run stops in one line naming the work directory
    and its free space; the failed query is not recorded (so --resume runs it again), the
    finished one is; no later query starts; the engine is closed."""
    world = FakeWorld()
    results = tmp_path / "r"
    with pytest.raises(DiskFullError) as caught:
        run_suite(_suite(dataset, results, ["q1", "q2", "q3"]), lambda: _DiskFullOn(world))
    line = str(caught.value)
    assert "\n" not in line and line.startswith("disk full: q2 failed (checkpoint of job 1")
    assert f"work directory {results / 'work' / 'q2'}: " in line and " free of " in line
    assert "q2 unrecorded" in line and f"finished results are kept in {results}" in line
    assert [r.query for r in ResultStore(results).load()] == ["q1"]
    assert not any(e[1:2] == ("q3",) for e in world.log if e[0] == "submit")
    assert all(e.closed for e in world.engines)
    assert not (results / "work").exists()


def test_an_engine_that_cannot_start_again_ends_the_run_in_one_line(dataset, tmp_path):
    """A query fails (its cluster lost) and the engine cannot be started again (a remote
    cluster gone): the run stops there, the failure and the finished results recorded."""
    world = FakeWorld({"q1": Script(die_in="benchmark")})

    class Gone(FakeEngine):
        def start(self):
            raise EngineError("Flink REST API at http://10.0.0.9:8081 is not reachable")

    engines = iter([FakeEngine(world), Gone(world)])
    results = tmp_path / "r"
    with pytest.raises(EngineError) as caught:
        run_suite(_suite(dataset, results, ["q0", "q1", "q2"]), lambda: next(engines))
    line = str(caught.value)
    assert line.startswith("the engine could not be started again after the failure")
    assert "http://10.0.0.9:8081 is not reachable" in line and str(results) in line
    got = {r.query: r.status.value for r in ResultStore(results).load()}
    assert got == {"q0": "ok", "q1": "failed"}
    assert all(e.closed for e in world.engines)

"""The phase handoff an engine declares (`Capabilities.handoff`), on the fake engine both ways:
RESUBMIT (cancel, then a job restored from the phase snapshot: Flink, Spark) and IN_PLACE (the
warm-up job goes on into the benchmark part with its state), each recorded with its result."""

from __future__ import annotations

import pytest

from fake_engine import FakeEngine, FakeWorld, Script
from fake_runs import fake_run
from nexmark.engines.base import Handoff
from nexmark.engines.spec import SinkKind
from nexmark.errors import UsageError
from nexmark.protocol.preparation.options import ProtocolOptions
from nexmark.protocol.preparation.parts import PhaseParts
from nexmark.protocol.query.phases import Phase
from nexmark.verify.check import Status
from nexmark.verify.reference import load_events
from nexmark.verify.runner import verify_query
from nexmark.workload.dataset import Dataset, DatasetParams
from nexmark.workload.writer import ensure_dataset


@pytest.fixture(scope="module")
def dataset(tmp_path_factory: pytest.TempPathFactory) -> Dataset:
    params = DatasetParams(events=4000, files=2, rate=100)  # 40 s of event time
    root = tmp_path_factory.mktemp("handoff")
    return ensure_dataset(params, out=root / params.dataset_id, show_progress=False)


def _run(dataset, tmp_path, handoff: Handoff, script: Script | None = None, **options):
    # A 1 s benchmark phase: periodic checkpoints fall in it.
    world = FakeWorld({"q3": script or Script(periodic_s=0.5, eps=1000.0)}, handoff=handoff)
    fake = fake_run(dataset, tmp_path / "work", world=world, **options)
    measured, result = fake.measure()
    return result, fake.world, measured


def test_resubmit_restores_the_phase_snapshot_in_a_new_job(dataset, tmp_path):
    result, world, _ = _run(dataset, tmp_path, Handoff.RESUBMIT)
    assert result.status.value == "ok" and result.handoff == "resubmit"
    submits = [e[2] for e in world.log if e[0] == "submit"]
    assert submits == ["warmup", "benchmark"] and ("cancel", "q3", "warmup") in world.log
    assert result.restored_from and result.restored_from.endswith(
        f"chk-{result.phase_checkpoint.id}"
    )
    assert result.recovery_time_s > 0


def test_in_place_goes_on_in_the_warmup_job_with_its_state(dataset, tmp_path):
    result, world, measured = _run(dataset, tmp_path, Handoff.IN_PLACE)
    assert result.status.value == "ok" and result.problems() == []
    assert result.handoff == "in-place"
    # one job: submitted once, never cancelled at the cut, handed the benchmark part
    assert [e[2] for e in world.log if e[0] == "submit"] == ["warmup"]
    assert ("cancel", "q3", "warmup") not in world.log
    assert ("continue", "q3", "benchmark") in world.log
    assert (
        result.restored_from.startswith("in place")
        and result.repeats[0].restored_checkpoint_id is None
    )
    # the phases still run in order, the benchmark counted from the part's first event
    order = [p.value for p in Phase if p.value in measured.phases]
    assert order[:6] == ["warmup", "phase-checkpoint", "stop", "restore", "benchmark",
                         "end-checkpoint"]  # fmt: skip
    assert result.events_benchmark == 1000 and measured.benchmark_events_seen == 1000
    assert result.recovery_time_s == pytest.approx(0.0, abs=0.06)  # nothing to restore
    # the benchmark's checkpoints are its own, not the warm-up's the same job also lists
    t_submit = measured.t_submit
    assert all(c.trigger_ts >= t_submit for c in measured.benchmark_checkpoints)
    assert result.checkpoints.count == len(measured.benchmark_checkpoints) > 0
    assert world.engines[0].jobs[0].known_parts == ["warmup", "benchmark"]  # the state went on


def test_in_place_verification_matches_the_reference(dataset, tmp_path):
    engine = FakeEngine(FakeWorld({"q3": Script()}, handoff=Handoff.IN_PLACE))
    engine.start()
    options = ProtocolOptions(parallelism=2, timeout_s=120, settle_s=0.2)
    data = load_events(dataset.path)
    verdict = verify_query(engine, "q3", PhaseParts.of(dataset), data, tmp_path, options)
    assert verdict.status is Status.MATCH, verdict.reason or verdict.diff.examples()
    assert verdict.diff.expected_rows > 0


@pytest.mark.parametrize(
    ("options", "words"),
    [
        ({"repeat": 2}, "--repeat 2"),
        ({"rate": 500.0}, "--rate"),
        ({"restore": False}, "without the warm-up's state"),
    ],
)
def test_in_place_runs_one_benchmark_phase_per_warmup(dataset, tmp_path, options, words):
    with pytest.raises(UsageError, match=words) as info:
        _run(dataset, tmp_path, Handoff.IN_PLACE, **options)
    assert "keeps its state in place" in str(info.value)


@pytest.mark.parametrize(
    ("options", "stops"),
    [
        ({}, False),  # its logical size is measured after the cut
        ({"sink": SinkKind.COLLECT}, True),  # writes files, nothing asked after the cut
    ],
)
def test_the_warmup_job_stops_at_its_cut_when_nothing_more_is_asked_of_it(
    dataset, tmp_path, options, stops
):
    result, world, _ = _run(dataset, tmp_path, Handoff.RESUBMIT, **options)
    assert result.status.value == "ok"
    assert world.cut_stops == [stops]


def test_a_warmup_job_handed_on_never_stops_at_its_cut(dataset, tmp_path):
    result, world, _ = _run(dataset, tmp_path, Handoff.IN_PLACE, sink=SinkKind.COLLECT)
    assert result.status.value == "ok" and world.cut_stops == [False]

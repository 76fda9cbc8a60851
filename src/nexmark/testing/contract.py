"""The engine contract, importable by an engine package outside this repository: the same
two-phase, restore-proof, source-ceiling, verification and failover tests on any engine.

An engine's own test module runs it by importing it and giving the fixtures it needs:

    from nexmark.testing.contract import *  # noqa: F403 - the contract's tests and fixtures

    @pytest.fixture
    def engine():  # a started engine (closed afterwards)
        ...

    @pytest.fixture
    def clock():  # what the protocol waits on: Clock() is the real clock
        return Clock()

    @pytest.fixture
    def failover_engine():  # started after `enable_failover()`, or pytest.skip(why not)
        ...

The dataset (`contract_dataset`, 20K events, two files per part) and its reference data
(`contract_data`) are the contract's own fixtures. This repository runs it on the fake engine,
Flink and Spark (tests/contract/).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

import pytest

from nexmark.engines.base import Engine
from nexmark.engines.capabilities import Capabilities, FailoverSupport, Handoff, StateTtlSupport
from nexmark.engines.semantics import (
    Emission,
    FinalWatermark,
    IntegerAverage,
    ResultSemantics,
    SideLookup,
    WindowFiring,
)
from nexmark.errors import UsageError
from nexmark.metrics.machine import collect_machine
from nexmark.protocol.progress.display import RunDisplay
from nexmark.protocol.query.query_run import PhaseParts, ProtocolOptions, QueryRun
from nexmark.protocol.scoring.record import RunContext, build_result
from nexmark.protocol.suite.calibrate import calibrate
from nexmark.verify.check import Status
from nexmark.verify.reference import EventData, load_events
from nexmark.verify.runner import DEFAULTS, verify_query
from nexmark.workload.dataset import Dataset, DatasetParams
from nexmark.workload.feed import RATE_STEP_S, RATE_TOLERANCE, delivered_eps
from nexmark.workload.writer import ensure_dataset

__all__ = [
    "FILES",
    "Clock",
    "contract_data",
    "contract_dataset",
    "test_a_killed_worker_loses_and_duplicates_nothing",
    "test_lost_state_is_caught",
    "test_repeats_each_restore_the_same_phase_snapshot",
    "test_trials_at_different_rates_each_read_their_own_release",
    "test_results_match_the_reference",
    "test_the_engine_declares_what_it_can_do_and_how_to_read_its_results",
    "test_the_source_ceiling_is_measured",
    "test_two_phase_run_restores_the_phase_snapshot",
]

# Parallelism 2 (one file per source reader); 20K events at 500 ev/s span 40 s of event time,
# so 10 s windows open and close in both phases.
FILES = 2


@dataclass(frozen=True)
class Clock:
    """What the protocol waits on: the real clock, or a scripted engine's own."""

    now: Callable[[], float] = time.time
    sleep: Callable[[float], None] = time.sleep


@pytest.fixture(scope="module")
def contract_dataset(tmp_path_factory: pytest.TempPathFactory) -> Dataset:
    params = DatasetParams(events=20_000, rate=500, files=FILES)
    root = tmp_path_factory.mktemp("contract")
    return ensure_dataset(params, out=root / params.dataset_id, show_progress=False)


@pytest.fixture(scope="module")
def contract_data(contract_dataset: Dataset) -> EventData:
    return load_events(contract_dataset.path)


def test_the_engine_declares_what_it_can_do_and_how_to_read_its_results(engine: Engine):
    caps = engine.capabilities()
    assert isinstance(caps, Capabilities) and caps.queries and caps.targets and caps.ready
    assert isinstance(caps.state_ttl, StateTtlSupport)
    sem = engine.semantics()
    assert isinstance(sem, ResultSemantics)
    assert isinstance(sem.emission, Emission) and isinstance(sem.window_firing, WindowFiring)
    assert isinstance(sem.final_watermark, FinalWatermark)
    assert isinstance(sem.integer_average, IntegerAverage) and sem.watermark_slack_ms >= 0
    assert isinstance(sem.side_lookup, SideLookup)
    # Idle sources are kinds the engine reads; an engine's own rule is never the widened one.
    assert sem.idle_sources <= set(caps.sources), (sem.idle_sources, caps.sources)
    assert sem.final_watermark is not FinalWatermark.MIN_TO_MAX_OVER_READERS
    for option in type(engine).target_options:  # engine-owned, named after the engine
        assert option.flag.startswith(f"--{engine.name}-") and option.param and option.help
    assert engine.unsupported_reason("q2") is None


@pytest.mark.parametrize("query", ["q2", "q17"])  # stateless; an aggregation over both phases
def test_two_phase_run_restores_the_phase_snapshot(
    engine, clock, contract_dataset, tmp_path, query
):
    parts = PhaseParts.of(contract_dataset)
    options = ProtocolOptions(checkpoint_interval_s=2.0, timeout_s=240)
    display = RunDisplay(1, enabled=False)
    work = tmp_path / "work"
    run = QueryRun(engine, query, parts, work, options, display, clock.now, clock.sleep)
    measured = run.execute()
    ctx = RunContext("contract", contract_dataset, engine.info(), collect_machine())
    r = build_result(ctx, measured, run.sampler, parts)

    assert r.status.value == "ok" and r.problems() == []
    assert measured.benchmark_events_seen == r.events_benchmark
    assert r.handoff == engine.capabilities().handoff.value
    if engine.capabilities().handoff is Handoff.IN_PLACE:  # the same job went on
        assert r.restored_from and r.restored_from.startswith("in place")
    else:  # a new job, restored from the phase checkpoint's very snapshot
        assert r.restored_from == measured.phase_checkpoint.snapshot.ref
        assert r.recovery_time_s > 0
    assert r.time_s > 0 and r.throughput_eps > 0
    kinds = {(e.phase, e.kind) for e in r.checkpoint_events}
    assert ("warmup", "phase") in kinds and ("benchmark", "end") in kinds
    for phase in ("warmup", "benchmark"):
        assert r.job_options[phase]  # recorded as submitted
    # What bounds the state, in the engine's words, reaches the result.
    assert r.state_bound
    assert r.state_bound == engine.job_setup(run.job_spec("benchmark")).state_bound
    assert not (tmp_path / "work").exists()


def test_repeats_each_restore_the_same_phase_snapshot(engine, clock, contract_dataset, tmp_path):
    """`--repeat`: benchmark phases restored one after another from one warm-up's checkpoint
    (an engine may plan a repeat's job once and submit it again: Flink does)."""
    if not engine.capabilities().repeatable_restore:
        pytest.skip("the engine restores a snapshot only once")
    parts = PhaseParts.of(contract_dataset)
    options = ProtocolOptions(checkpoint_interval_s=2.0, timeout_s=240, repeat=3)
    display = RunDisplay(1, enabled=False)
    run = QueryRun(engine, "q17", parts, tmp_path / "work", options, display, clock.now,
                   clock.sleep)  # fmt: skip
    measured = run.execute()
    ctx = RunContext("contract", contract_dataset, engine.info(), collect_machine())
    r = build_result(ctx, measured, run.sampler, parts)

    assert r.status.value == "ok" and r.problems() == []
    assert [x.status for x in r.repeats] == ["ok"] * 3
    assert r.throughput_stats is not None and r.throughput_stats.n == 3
    if engine.capabilities().handoff is Handoff.RESUBMIT:  # each a new job, from the same one
        assert [x.restored_checkpoint_id for x in r.repeats] == [r.phase_checkpoint.id] * 3
        assert all(x.restored_from == measured.phase_checkpoint.snapshot.ref for x in r.repeats)
    assert all(x.time_s and x.time_s > 0 and x.throughput_eps for x in r.repeats)
    assert all(x.end_checkpoint_id is not None for x in r.repeats)


# On the wall clock a step is released when the releaser's thread wakes, which a loaded machine
# delays by tens of ms: already 2% of a release lasting 1 s.
WALL_RELEASE_SLACK_S = 0.2


def _rate_tolerance(clock: Clock, rate: float, parts: PhaseParts) -> float:
    """RATE_TOLERANCE on a scripted engine's clock; on the wall clock the release's span within
    WALL_RELEASE_SLACK_S of its schedule (10% at 2,500 events/s, 20% at 5,000 here), which
    still tells the trials' rates (a factor 2) apart and fails a release that is not paced."""
    if clock.sleep is not time.sleep:
        return RATE_TOLERANCE
    return max(RATE_TOLERANCE, WALL_RELEASE_SLACK_S * rate / parts.benchmark_events)


@dataclass
class _FixedRates:
    """A `TrialSearch` that tries the given rates in turn (what each trial shows is checked
    here, not judged)."""

    rates: list[float]
    done: bool = False
    tried: list[Any] = field(default_factory=list)

    @property
    def max_trials(self) -> int:
        return len(self.rates)

    def next_rate(self) -> float:
        return self.rates[len(self.tried)]

    def observe_repeat(self, repeat, samples, parts) -> None:
        self.tried.append((repeat, parts.benchmark_dir))
        self.done = len(self.tried) == len(self.rates)

    def summary(self) -> None:
        return None


def test_trials_at_different_rates_each_read_their_own_release(
    engine, clock, contract_dataset, tmp_path
):
    """A rate search's trials: each restored from the one phase checkpoint, reads the
    benchmark part laid out for its rate, released from nothing at that rate (none of the
    previous trial's files is seen again), every event once."""
    caps = engine.capabilities()
    if not (caps.rate_feed and caps.repeatable_restore):
        pytest.skip("the engine feeds no rate-controlled phase, or restores a snapshot once")
    parts = PhaseParts.of(contract_dataset)
    search = _FixedRates([2_500.0, 5_000.0])  # the 5,000 benchmark events in 2 s, then 1 s
    options = ProtocolOptions(checkpoint_interval_s=2.0, timeout_s=240)
    run = QueryRun(engine, "q0", parts, tmp_path / "work", options, RunDisplay(1, enabled=False),
                   clock.now, clock.sleep, search=search)  # fmt: skip
    measured = run.execute()

    assert [r.status for r in measured.repeats] == ["ok", "ok"], measured.repeats
    dirs = [d for _, d in search.tried]
    assert len(set(dirs)) == 2 and parts.benchmark_dir not in dirs  # a layout per rate
    for repeat in measured.repeats:
        m, rate = repeat.measured, repeat.rate
        log = m.release_log
        assert log[0][1] <= rate * RATE_STEP_S  # released from nothing, one step at a time
        assert log[-1][1] == parts.benchmark_events
        assert (
            max(b - a for (_, a), (_, b) in zip(log, log[1:], strict=False)) <= rate * RATE_STEP_S
        )
        assert delivered_eps(log) == pytest.approx(rate, rel=_rate_tolerance(clock, rate, parts))
        assert m.benchmark_events_seen == parts.benchmark_events
        if caps.handoff is Handoff.RESUBMIT:
            assert m.restored_id == measured.phase_checkpoint.id
    assert not (tmp_path / "work").exists()


def test_the_source_ceiling_is_measured(engine, clock, contract_dataset, tmp_path):
    """The calibration job (source only, on the benchmark part) runs on every engine: each
    result's "Of Source" column depends on it."""
    parts = PhaseParts.of(contract_dataset)
    options = ProtocolOptions(checkpoint_interval_s=2.0, timeout_s=240)
    source = calibrate(engine, parts, tmp_path / "source", options, clock.now, clock.sleep)
    assert source.status == "ok", source.reason
    assert source.events == parts.benchmark_events and source.throughput_eps > 0
    assert source.time_s > 0 and source.parallelism == FILES
    assert not (tmp_path / "source").exists()


def _verify(engine, clock, query, dataset, data, tmp_path, restore=True, failover=None, **more):
    options = replace(DEFAULTS, parallelism=FILES, timeout_s=300, restore=restore, **more)
    parts = PhaseParts.of(dataset)
    return verify_query(
        engine, query, parts, data, tmp_path, options, clock.now, clock.sleep, failover=failover
    )


def test_lost_state_is_caught(engine, clock, contract_dataset, contract_data, tmp_path):
    """The restore proof: q17's per-auction totals match only if the warm-up state came back."""
    restored = _verify(engine, clock, "q17", contract_dataset, contract_data, tmp_path)
    assert restored.status is Status.MATCH, restored.diff and restored.diff.examples()
    if engine.capabilities().handoff is Handoff.IN_PLACE:  # no phase can start without it
        with pytest.raises(UsageError, match="keeps its state in place"):
            _verify(engine, clock, "q17", contract_dataset, contract_data, tmp_path, False)
        return
    lost = _verify(engine, clock, "q17", contract_dataset, contract_data, tmp_path, restore=False)
    assert lost.status is Status.MISMATCH and lost.diff.missing_count > 0


# A filter, an average over a join (the engine's AVG rule) and hopping windows (its window
# rule and final watermark).
@pytest.mark.parametrize("query", ["q2", "q4", "q5"])
def test_results_match_the_reference(
    engine, clock, contract_dataset, contract_data, tmp_path, query
):
    reason = engine.unsupported_reason(query)
    if reason:  # refused with the engine's own reason (Spark: q4), which verify reports
        pytest.skip(f"{engine.name} cannot run {query}: {reason}")
    verdict = _verify(engine, clock, query, contract_dataset, contract_data, tmp_path)
    assert verdict.status is Status.MATCH, verdict.diff and verdict.diff.examples()
    assert verdict.diff.expected_rows > 0


def test_a_killed_worker_loses_and_duplicates_nothing(
    failover_engine, clock, contract_dataset, contract_data, tmp_path
):
    """A worker killed in the benchmark phase (or, on an engine that only observes, none):
    the rows committed still match the reference exactly, and the outage is accounted for."""
    engine = failover_engine
    support = engine.capabilities().failover
    if support is not FailoverSupport.INJECT:
        pytest.skip(f"{engine.name} cannot kill its own workers (failover {support.value})")
    verdict = _verify(
        engine, clock, "q17", contract_dataset, contract_data, tmp_path,
        failover=support, checkpoint_interval_s=0.5,
    )  # fmt: skip
    assert verdict.status is Status.MATCH, verdict.reason or verdict.diff.examples()
    assert any(note.startswith("failover: killed") for note in verdict.notes), verdict.notes

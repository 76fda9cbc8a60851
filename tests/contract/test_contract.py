"""The engine contract: the same two-phase, restore-proof and verification tests on every
engine in `conftest.ENGINES` (the fake engine on its own clock, in about a second; Flink and
Spark with a JVM)."""

from __future__ import annotations

import pytest

from conftest import FILES
from nexmark.engines.base import (
    Capabilities,
    Emission,
    Engine,
    FinalWatermark,
    IntegerAverage,
    ResultSemantics,
    SideLookup,
    StateTtlSupport,
    WindowFiring,
)
from nexmark.metrics.machine import collect_machine
from nexmark.protocol.calibrate import calibrate
from nexmark.protocol.display import RunDisplay
from nexmark.protocol.query_run import PhaseParts, ProtocolOptions, QueryRun
from nexmark.protocol.record import RunContext, build_result
from nexmark.verify.check import Status
from nexmark.verify.reference import load_events
from nexmark.verify.runner import VerifyOptions, verify_query


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
    assert r.restored_from == measured.phase_checkpoint.snapshot.ref
    assert r.time_s > 0 and r.throughput_eps > 0 and r.recovery_time_s > 0
    kinds = {(e.phase, e.kind) for e in r.checkpoint_events}
    assert ("warmup", "phase") in kinds and ("benchmark", "end") in kinds
    for phase in ("warmup", "benchmark"):
        assert r.job_options[phase]  # recorded as submitted
    # What bounds the state, in the engine's words, reaches the result.
    assert r.state_bound
    assert r.state_bound == engine.job_setup(run.job_spec(parts.benchmark_dir)).state_bound
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


@pytest.fixture(scope="module")
def contract_data(contract_dataset):
    return load_events(contract_dataset.path)


def _verify(engine, clock, query, dataset, data, tmp_path, restore=True):
    options = VerifyOptions(FILES, timeout_s=300, restore=restore)
    parts = PhaseParts.of(dataset)
    return verify_query(engine, query, parts, data, tmp_path, options, clock.now, clock.sleep)


def test_lost_state_is_caught(engine, clock, contract_dataset, contract_data, tmp_path):
    """The restore proof: q17's per-auction totals match only if the warm-up state came back."""
    restored = _verify(engine, clock, "q17", contract_dataset, contract_data, tmp_path)
    assert restored.status is Status.MATCH, restored.diff and restored.diff.examples()
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

"""A protocol run (`QueryRun`) of one query on the scripted fake engine, as the protocol tests
build it: the world, the started engine, the run on the world's clock, its result. One place, so
that a new argument of `QueryRun` or `build_result` is one edit, not one per test module."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from fake_engine import FakeClock, FakeEngine, FakeWorld, Script
from nexmark.metrics.machine import collect_machine
from nexmark.protocol.preparation.options import ProtocolOptions
from nexmark.protocol.preparation.parts import PhaseParts
from nexmark.protocol.progress.display import RunDisplay
from nexmark.protocol.query.observe import Measured, TrialSearch
from nexmark.protocol.query.query_run import QueryRun
from nexmark.protocol.scoring.record import RunContext, build_result
from nexmark.results.query_result import QueryResult
from nexmark.workload.dataset import Dataset


@dataclass
class FakeRun:
    """The run, not yet executed, and what its result is built from."""

    run: QueryRun
    world: FakeWorld
    engine: FakeEngine
    dataset: Dataset
    parts: PhaseParts

    def context(self) -> RunContext:
        return RunContext("run-1", self.dataset, self.engine.info(), collect_machine())

    def result(self, measured: Measured) -> QueryResult:
        return build_result(self.context(), measured, self.run.sampler, self.parts)

    def measure(self) -> tuple[Measured, QueryResult]:
        """Execute the run: what it measured and the result recorded from it."""
        measured = self.run.execute()
        return measured, self.result(measured)


def fake_run(
    dataset: Dataset,
    work: Path,
    script: Script | None = None,
    query: str = "q3",
    *,
    world: FakeWorld | None = None,
    clock: Callable[[], float] | None = None,
    display: RunDisplay | None = None,
    failover: bool = False,
    trials: TrialSearch | None = None,
    **options,
) -> FakeRun:
    """`query` on a started fake engine following `script` (or the scripts of `world`, whose
    clock becomes the run's), in `work`. `options` are ProtocolOptions' fields (a 600 s
    timeout unless given); `clock` is a fresh FakeClock unless given (time.time: real waits);
    `trials` makes the benchmark phases a search's trials (ProtocolOptions' `search` says how);
    `failover` hands the run what the engine's enable_failover answers."""
    clock = clock or FakeClock()
    if world is None:
        world = FakeWorld({query: script or Script()}, clock)
    world.clock = clock
    engine = FakeEngine(world)
    engine.start()
    parts = PhaseParts.of(dataset)
    run = QueryRun(
        engine, query, parts, work, ProtocolOptions(**{"timeout_s": 600.0, **options}),
        display or RunDisplay(1, enabled=False),
        clock=clock, sleep=clock.sleep if isinstance(clock, FakeClock) else time.sleep,
        search=trials, failover=engine.enable_failover() if failover else None,
    )  # fmt: skip
    return FakeRun(run, world, engine, dataset, parts)

"""The engines this repository runs the contract suite (nexmark.testing.contract) on: one entry
per engine, as ibis runs one backend suite on every backend. An engine outside the repository
runs the same module from its own tests instead (see the module's docstring)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import pytest

from nexmark.engines.base import Engine
from nexmark.testing.contract import Clock


@dataclass(frozen=True)
class EngineEntry:
    """How the suite gets a started engine, the marks of its tests (e.g. needs a JVM), and the
    time its runs wait on (`clock(engine)`: now and sleep)."""

    start: Callable[[pytest.FixtureRequest], Engine]
    marks: tuple = ()
    clock: Callable[[Engine], Clock] = lambda engine: Clock()
    # A started engine set up for failover, or None with the reason it is tested elsewhere.
    failover: Callable[[pytest.FixtureRequest], Engine] | None = None
    failover_elsewhere: str = ""


def _fake(request: pytest.FixtureRequest) -> Engine:
    from fake_engine import FakeClock, FakeEngine, FakeWorld

    # On its own clock a whole verification cycle takes no wall time.
    engine = FakeEngine(FakeWorld(clock=FakeClock()))
    engine.start()
    request.addfinalizer(engine.close)
    return engine


def _fake_with_failover(request: pytest.FixtureRequest) -> Engine:
    from fake_engine import FakeClock, FakeEngine, FakeWorld, Script

    # Reading at 2,000 events/s with checkpoints every 0.5 s: the kill comes mid-phase.
    world = FakeWorld(
        {"q17": Script(eps=2000.0, periodic_s=0.5, detect_s=1.0, restart_s=0.5)},
        clock=FakeClock(),
    )
    engine = FakeEngine(world)
    engine.enable_failover()
    engine.start()
    request.addfinalizer(engine.close)
    return engine


def _flink(request: pytest.FixtureRequest) -> Engine:
    return request.getfixturevalue("flink_engine")  # the session's shared embedded Flink


def _spark(request: pytest.FixtureRequest) -> Engine:
    return request.getfixturevalue("spark_engine")  # the session's shared embedded Spark


def _own_clock(engine: Engine) -> Clock:
    return Clock(engine.world.clock, engine.world.clock.sleep)


# A failover needs an engine of its own (a cluster of separate processes on Flink, a driver to
# kill on Spark): the integration tests run those, through `nexmark verify --failover`.
ENGINES: dict[str, EngineEntry] = {
    "fake": EngineEntry(_fake, clock=_own_clock, failover=_fake_with_failover),
    "flink": EngineEntry(
        _flink, (pytest.mark.flink, pytest.mark.slow),
        failover_elsewhere="tests/integration/test_failover_flink.py kills a TaskManager",
    ),
    "spark": EngineEntry(
        _spark, (pytest.mark.spark, pytest.mark.slow),
        failover_elsewhere="tests/integration/test_failover_spark.py kills the driver",
    ),
}  # fmt: skip


@pytest.fixture(params=[pytest.param(name, marks=e.marks) for name, e in ENGINES.items()])
def engine(request: pytest.FixtureRequest) -> Engine:
    """Each contract test once per engine."""
    return ENGINES[request.param].start(request)


def _entry(request: pytest.FixtureRequest) -> EngineEntry:
    return ENGINES[request.node.callspec.params["engine"]]


@pytest.fixture
def failover_engine(request: pytest.FixtureRequest, engine: Engine) -> Engine:
    """The engine under test set up for failover (a fresh one), where this suite runs it."""
    entry = _entry(request)
    if entry.failover is None:
        pytest.skip(f"failover of {engine.name}: {entry.failover_elsewhere}")
    return entry.failover(request)


@pytest.fixture
def clock(request: pytest.FixtureRequest) -> Clock:
    """The time the engine under test runs on (the failover engine's when it is that)."""
    names = request.fixturenames
    chosen = request.getfixturevalue("failover_engine" if "failover_engine" in names else "engine")
    return _entry(request).clock(chosen)

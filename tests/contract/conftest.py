"""The engines the contract suite runs on: one entry per engine, as ibis runs one backend suite
on every backend. Another engine plugs in by adding its entry to `ENGINES`."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import pytest

from nexmark.engines.base import Engine
from nexmark.workload.dataset import Dataset, DatasetParams
from nexmark.workload.writer import ensure_dataset


@dataclass(frozen=True)
class EngineEntry:
    """How the suite gets a started engine, the marks of its tests (e.g. needs a JVM), and the
    time its runs wait on (`clock(engine)`: now and sleep)."""

    start: Callable[[pytest.FixtureRequest], Engine]
    marks: tuple = ()
    clock: Callable[[Engine], Clock] = lambda engine: Clock()


@dataclass(frozen=True)
class Clock:
    """What the protocol waits on: the real clock, or the fake engine's own."""

    now: Callable[[], float] = time.time
    sleep: Callable[[float], None] = time.sleep


def _fake(request: pytest.FixtureRequest) -> Engine:
    from fake_engine import FakeClock, FakeEngine, FakeWorld

    # On its own clock a whole verification cycle takes no wall time.
    engine = FakeEngine(FakeWorld(clock=FakeClock()))
    engine.start()
    request.addfinalizer(engine.close)
    return engine


def _flink(request: pytest.FixtureRequest) -> Engine:
    return request.getfixturevalue("flink_engine")  # the session's shared embedded Flink


def _spark(request: pytest.FixtureRequest) -> Engine:
    return request.getfixturevalue("spark_engine")  # the session's shared embedded Spark


ENGINES: dict[str, EngineEntry] = {
    "fake": EngineEntry(_fake, clock=lambda e: Clock(e.world.clock, e.world.clock.sleep)),
    "flink": EngineEntry(_flink, (pytest.mark.flink, pytest.mark.slow)),
    "spark": EngineEntry(_spark, (pytest.mark.spark, pytest.mark.slow)),
}


@pytest.fixture(params=[pytest.param(name, marks=e.marks) for name, e in ENGINES.items()])
def engine(request: pytest.FixtureRequest) -> Engine:
    """Each contract test once per engine."""
    return ENGINES[request.param].start(request)


@pytest.fixture
def clock(request: pytest.FixtureRequest, engine: Engine) -> Clock:
    """The time the engine under test runs on."""
    return ENGINES[request.node.callspec.params["engine"]].clock(engine)


# Parallelism 2 (one file per source reader); 20K events at 500 ev/s span 40 s of event time,
# so 10 s windows open and close in both phases.
FILES = 2


@pytest.fixture(scope="module")
def contract_dataset(tmp_path_factory: pytest.TempPathFactory) -> Dataset:
    params = DatasetParams(events=20_000, rate=500, files=FILES)
    root = tmp_path_factory.mktemp("contract")
    return ensure_dataset(params, out=root / params.dataset_id, show_progress=False)

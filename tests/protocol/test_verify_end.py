"""How verification ends the benchmark phase, on the scripted fake: a restored event-time job
whose first watermark trails its data is waited for; one that never gets it is an invalid run,
tried once more, then failed with the reason."""

from __future__ import annotations

import pytest

from fake_engine import FakeClock, FakeEngine, FakeWorld, Script
from nexmark.protocol.preparation.options import ProtocolOptions
from nexmark.protocol.preparation.parts import PhaseParts
from nexmark.verify.check import Status
from nexmark.verify.reference import load_events
from nexmark.verify.runner import verify_query
from nexmark.workload.dataset import Dataset, DatasetParams
from nexmark.workload.writer import ensure_dataset


@pytest.fixture(scope="module")
def dataset(tmp_path_factory: pytest.TempPathFactory) -> Dataset:
    params = DatasetParams(events=4000, files=2, rate=100)  # 40 s of event time
    root = tmp_path_factory.mktemp("verify-end")
    return ensure_dataset(params, out=root / params.dataset_id, show_progress=False)


def _verify(dataset, tmp_path, script: Script):
    clock = FakeClock()  # every wait of the cycle on the fake's time: no wall time
    engine = FakeEngine(FakeWorld({"q3": script}, clock=clock))
    engine.start()
    options = ProtocolOptions(parallelism=2, timeout_s=120, settle_s=0.2)
    data = load_events(dataset.path)
    parts = PhaseParts.of(dataset)
    return verify_query(engine, "q3", parts, data, tmp_path, options, clock, clock.sleep)


def test_a_first_watermark_later_than_the_settle_time_is_waited_for(dataset, tmp_path):
    # The settle time alone (0.2 s) ends before the watermark (1.5 s): the end checkpoint would
    # commit none of the benchmark rows and the verdict would be a mismatch.
    verdict = _verify(dataset, tmp_path, Script(watermark_after_s=1.5))
    assert verdict.status is Status.MATCH, verdict.diff and verdict.diff.examples()
    assert verdict.diff.expected_rows > 0


def test_a_stalled_event_time_is_an_invalid_run_tried_once_more(dataset, tmp_path):
    # The first benchmark job never gets a watermark: not a wrong result, so the cycle runs
    # again and the second one matches.
    verdict = _verify(dataset, tmp_path, Script(watermark_after_s=0.5, watermark_stalls=1))
    assert verdict.status is Status.MATCH, verdict.reason


def test_event_time_that_stalls_twice_fails_with_the_reason(dataset, tmp_path):
    verdict = _verify(dataset, tmp_path, Script(watermark_after_s=0.5, watermark_stalls=2))
    assert verdict.status is Status.FAILED
    assert "received a watermark" in verdict.reason and "never fire" in verdict.reason

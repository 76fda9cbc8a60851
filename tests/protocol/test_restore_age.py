"""The restored state's age: a processing-time TTL keeps counting while a query is stopped and
restored, so a benchmark phase may start from a state the TTL has partly expired. The result
says so (not steady), and further repeats are skipped with why."""

from __future__ import annotations

import pytest

from fake_engine import FakeWorld, Script
from fake_runs import fake_run
from nexmark.engines.capabilities import StateTtlSupport
from nexmark.results import steady
from nexmark.workload.dataset import Dataset, DatasetParams
from nexmark.workload.writer import ensure_dataset


@pytest.fixture(scope="module")
def dataset(tmp_path_factory: pytest.TempPathFactory) -> Dataset:
    params = DatasetParams(events=4000, files=2, rate=1000)
    root = tmp_path_factory.mktemp("restore-age-data")
    return ensure_dataset(params, out=root / params.dataset_id, show_progress=False)


def _result(dataset, tmp_path, ttl: str, repeat: int = 3):
    world = FakeWorld({"q3": Script(ready_s=1.0)}, state_ttl=StateTtlSupport.PROCESSING_TIME)
    fake = fake_run(dataset, tmp_path / "work", world=world, repeat=repeat, state_ttl=ttl)
    return fake.measure()[1], fake.world


def test_the_share_a_ttl_expired_follows_the_age_and_only_ttl_bound_state() -> None:
    assert steady.expired_at_restore("q3", 10.0, 1.0) == pytest.approx(0.1)
    assert steady.expired_at_restore("q3", 10.0, 30.0) == 1.0
    assert steady.expired_at_restore("q5", 10.0, 30.0) is None  # windows: the watermark
    assert steady.expired_at_restore("q3", None, 30.0) is None  # no TTL: nothing expires
    assert steady.expired_reason("q3", 1.0, 10.0, 1.2) is None  # within the growth bound
    reason = steady.expired_reason("q3", 7.5, 10.0, 1.2)
    assert "7.5 s old" in reason and "about 75%" in reason and "at least 38 s" in reason
    assert "expired all" in steady.expired_reason("q3", 20.0, 3.0, 1.2)


def test_a_ttl_shorter_than_the_restore_flags_the_phase_and_skips_further_repeats(
    dataset, tmp_path
) -> None:
    result, world = _result(dataset, tmp_path, ttl="2 s")
    assert result.restored_state_age_s is not None and result.restored_state_age_s >= 1.0
    assert result.state_steady is False and "TTL 2 s" in result.steady_reason
    assert result.problems() == []  # not steady whatever the growth, and it says why
    # only the first repeat ran: the phase checkpoint was already older than 20% of the TTL
    assert [r.status for r in result.repeats] == ["ok", "skipped", "skipped"]
    assert (
        "has expired" in result.repeats[1].reason
        and "keeps more repeats" in result.repeats[1].reason
    )
    assert sum(1 for e in world.log if e[:3] == ("submit", "q3", "benchmark")) == 1
    assert result.throughput_stats.n == 1


def test_a_long_ttl_keeps_every_repeat_and_records_each_age(dataset, tmp_path) -> None:
    result, _ = _result(dataset, tmp_path, ttl="10 min")
    assert [r.status for r in result.repeats] == ["ok"] * 3
    ages = [r.restored_state_age_s for r in result.repeats]
    assert ages[0] < ages[1] < ages[2]  # each restores the same, older, phase checkpoint
    assert result.steady_reason is None or "old at the first" not in result.steady_reason

"""One run preparation (protocol/preparation/prepare.py): the frozen options, what they record,
and the preparation both `run` and `verify` go through."""

from __future__ import annotations

import dataclasses

import pytest

from nexmark.engines.base import StateTtl
from nexmark.errors import UsageError
from nexmark.protocol.preparation.options import ProtocolOptions
from nexmark.protocol.preparation.prepare import (
    RunOptions,
    parse_checkpoint_interval,
    parse_timeout,
)


def test_the_recorded_options_are_derived_from_the_one_object():
    options = RunOptions(
        queries=("q0", "q5"), events=4000, suite="quick", checkpoint_interval_s=2.0,
        state_ttl="3 s", parallelism=2, timeout_s=60.0, repeat=3, runs=2,
    )  # fmt: skip
    recorded = options.recorded()
    assert recorded["queries"] == "q0,q5" and recorded["events"] == 4000
    assert (recorded["repeat"], recorded["runs"]) == (3, 2)
    assert recorded["failover_at"] is None  # only a failover run has a kill point
    # the protocol runs from the same object: nothing is copied, and it stays as made
    assert isinstance(options, ProtocolOptions) and options.state_ttl == StateTtl(3.0)
    assert recorded["state_ttl"] == "3 s" and recorded["checkpoint_interval_s"] == 2.0
    with pytest.raises(dataclasses.FrozenInstanceError):
        options.repeat = 5  # type: ignore[misc]
    # a dataset's event-time rate is recorded only when given, under its own name
    assert "event_rate" not in recorded
    assert RunOptions(queries=("q0",), events=10, event_rate=500).recorded()["event_rate"] == 500
    assert RunOptions(queries=("q0",), events=10, event_rate=500).dataset_params(2).rate == 500
    # a rate-fed run records the watermark delay its window rows' latency includes
    assert "watermark_delay_s" not in recorded
    assert RunOptions(queries=("q0",), events=10, rate=50.0).recorded()["watermark_delay_s"] == 4.0


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"events": 0}, "--events must be a positive number of events, got 0"),
        ({"parallelism": 0}, "--parallelism must be at least 1, got 0"),
        ({"event_rate": 0}, "--event-rate must be at least 1, got 0"),
        ({"timeout_s": 0.0}, "--timeout must be positive"),
        ({"failover_at": 1.5}, "--failover-at must be between 0 and 1, got 1.5"),
        ({"repeat": 0}, "--repeat must be between 1 and 100, got 0"),
        ({"runs": 0}, "--runs must be between 1 and 20, got 0"),
        ({"runs": -3}, "--runs must be between 1 and 20, got -3"),
        ({"runs": 1000}, "--runs must be between 1 and 20, got 1000"),
        ({"repeat": 2, "failover": True}, "--failover measures one benchmark phase per query"),
        ({"format": "orc"}, "unknown dataset format 'orc'"),
        ({"state_ttl": "forever"}, "--state-ttl"),
    ],
)
def test_bad_options_are_refused_when_made(fields, message):
    with pytest.raises(UsageError, match=message):
        RunOptions(**{"queries": ("q0",), "events": 10, **fields})


def test_flag_parsers():
    assert parse_checkpoint_interval(None) is None
    assert parse_checkpoint_interval("5s") == 5.0
    with pytest.raises(UsageError, match="at most 30 s"):
        parse_checkpoint_interval("60s")
    assert parse_checkpoint_interval("60s", bounded=False) == 60.0  # verify's own interval
    with pytest.raises(UsageError, match="--timeout must be positive"):
        parse_timeout("0s")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--event-rate", "0"], "--event-rate must be at least 1, got 0"),
        (["--parallelism", "0"], "--parallelism must be at least 1, got 0"),
        (["--events", "0"], "--events must be a positive number of events, got 0"),
        (["--format", "orc"], "unknown dataset format 'orc'"),
    ],
)
def test_verify_refuses_bad_input_in_one_line_before_any_dataset(
    tmp_path, nexmark_main, args, message
):
    done = nexmark_main("verify", *args, data=tmp_path / "data")
    assert done.returncode == 2, done.stderr
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and message in lines[0]
    assert not (tmp_path / "data").exists()


def test_only_a_dataset_on_a_store_refuses_rate_feeds():
    """A rate feed's release is timed for local files; checkpoints alone on a store change
    nothing, and a failover counts its restart position on the store's objects (the cluster
    test kills a TaskManager with the dataset on s3://)."""
    from nexmark.protocol.preparation.prepare import refused_on_store

    base = {"queries": ("q5",), "events": 1000}
    rated = RunOptions(**base, data="s3://data/ds", rate=100.0)
    assert "a phase fed at a set rate" in refused_on_store(rated)
    assert refused_on_store(RunOptions(**base, checkpoints="s3://ckpt/c", rate=100.0)) is None
    assert refused_on_store(RunOptions(**base, data="s3://data/ds", failover=True)) is None
    assert refused_on_store(RunOptions(**base, data="s3://data/ds")) is None

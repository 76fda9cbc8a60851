"""The reference follows the engine's declared result semantics, not one engine's rules."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest

from nexmark.engines.capabilities import TargetOption
from nexmark.engines.semantics import (
    Emission,
    FinalWatermark,
    IntegerAverage,
    ResultSemantics,
    SideLookup,
    WindowFiring,
)
from nexmark.errors import UsageError
from nexmark.verify.reference import EventData, events_from_rows, final_watermark_of, reference

BASE = datetime(2024, 1, 1)


def _bid(auction: int, price: int, seconds: float) -> dict:
    return {"event_type": 2, "b_auction": auction, "b_bidder": 1000, "b_price": price,
            "b_channel": "Google", "b_url": "u", "date_time": BASE + timedelta(seconds=seconds),
            "extra": "x"}  # fmt: skip


def _semantics(**changes) -> ResultSemantics:
    base = dict(
        emission=Emission.CHANGELOG,
        window_firing=WindowFiring.LAST_MS,
        final_watermark=FinalWatermark.MIN_OVER_READERS,
        integer_average=IntegerAverage.TRUNCATED,
        side_lookup=SideLookup.VERSIONED_AT_WATERMARK,
        watermark_slack_ms=0,
        idle_sources=frozenset(),
    )
    return ResultSemantics(**{**base, **changes})


def test_the_final_watermark_follows_the_engines_rule():
    last = [BASE + timedelta(seconds=10), BASE + timedelta(seconds=12)]
    assert final_watermark_of(last, FinalWatermark.MIN_OVER_READERS) == BASE + timedelta(seconds=6)
    assert final_watermark_of(last, FinalWatermark.MAX_OVER_INPUT) == BASE + timedelta(seconds=8)
    data = EventData(events_from_rows([]), None, reader_last_times=tuple(last))
    assert data.for_engine(_semantics()).final_watermark == BASE + timedelta(seconds=6)
    spark_like = _semantics(final_watermark=FinalWatermark.MAX_OVER_INPUT, watermark_slack_ms=5)
    ended = data.for_engine(spark_like)
    assert ended.final_watermark == BASE + timedelta(seconds=8) and ended.watermark_slack_ms == 5
    assert data.for_engine(spark_like, watermark_slack_ms=0).watermark_slack_ms == 0


def test_a_window_fires_by_the_engines_rule():
    # Window [0 s, 10 s) of q7; the final watermark at 9.999 s passed its last millisecond.
    events = events_from_rows([_bid(1, 500, 3), _bid(2, 700, 4), _bid(3, 100, 12)])
    data = EventData(events, BASE + timedelta(seconds=9.999))
    flink_like = reference("q7", data.for_engine(_semantics()))
    assert [row[:2] for row in flink_like.rows] == [(2, 700)]
    at_end = reference("q7", data.for_engine(_semantics(window_firing=WindowFiring.END)))
    assert at_end.rows == []  # fires only once the watermark reaches 10 s


def test_integer_averages_follow_the_engines_rule():
    # q17: one auction, one day, prices 1 and 2: the average is 1 truncated, 1.5 fractional.
    events = events_from_rows([_bid(1, 1, 1), _bid(1, 2, 2)])
    data = EventData(events, None)
    truncated = reference("q17", data.for_engine(_semantics()))
    fractional = reference(
        "q17", data.for_engine(_semantics(integer_average=IntegerAverage.FRACTIONAL))
    )
    avg = truncated.columns.index("avg_price")
    assert truncated.rows[0][avg] == 1 and truncated.types[avg] == "BIGINT"
    assert fractional.rows[0][avg] == 1.5 and fractional.types[avg] == "DOUBLE"


def test_commands_offer_each_engines_target_options(monkeypatch):
    import inspect

    from nexmark.cli import targets
    from nexmark.engines import registry

    options = [
        ("flink", TargetOption("--flink-rest", "rest_url", "REST URL.", "URL")),
        ("spark", TargetOption("--spark-master", "master", "Master URL.", "URL")),
    ]
    monkeypatch.setattr(registry, "target_options", lambda: options)
    monkeypatch.setattr(registry, "engine_class", lambda name: object)
    seen = {}

    def command(engine: str = "flink", target: dict | None = None) -> None:
        seen.update(engine=engine, target=target)

    wrapped = targets.with_target_options(command)
    params = inspect.signature(wrapped).parameters
    assert {"engine", "flink_rest", "spark_master"} <= set(params) and "target" not in params
    wrapped(engine="spark", flink_rest=None, spark_master="spark://h:7077")
    assert seen == {"engine": "spark", "target": {"master": "spark://h:7077"}}
    wrapped(engine="flink", flink_rest=None, spark_master=None)
    assert seen["target"] == {}
    with pytest.raises(UsageError, match="--flink-rest is an option of engine flink, not of spark"):
        wrapped(engine="spark", flink_rest="http://jm:8081", spark_master=None)


def test_a_side_lookup_follows_the_engines_rule():
    # q13: bids at 3 s and 12 s, final watermark 9.999 s; the side table maps auction -> value.
    events = events_from_rows([_bid(1, 500, 3), _bid(2, 700, 12)])
    data = EventData(events, BASE + timedelta(seconds=9.999), side_table={1: "one", 2: "two"})
    temporal = reference("q13", data.for_engine(_semantics()))
    assert [(row[0], row[-1]) for row in temporal.rows] == [(1, "one")]
    on_arrival = reference("q13", data.for_engine(_semantics(side_lookup=SideLookup.ON_ARRIVAL)))
    assert sorted((row[0], row[-1]) for row in on_arrival.rows) == [(1, "one"), (2, "two")]
    assert on_arrival.optional == []

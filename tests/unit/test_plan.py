"""Before and after a run: the TTL note, and why a query's state was not steady."""

from __future__ import annotations

from nexmark.engines.spec import JobSetup
from nexmark.protocol.preparation.plan import sized_dataset, ttl_warnings
from nexmark.results.steady import steady_reason
from nexmark.workload.dataset import DatasetParams


def setup(ttl_s: float | None, parallelism: int = 2) -> JobSetup:
    return JobSetup(parallelism, 30.0, ttl_s, {})


def test_a_warmup_far_too_short_for_its_ttl_is_foretold():
    # 150M events at a generous 2M events/s last 75 s: under one 5 min TTL
    notes = ttl_warnings({"q3": setup(300), "q0": setup(300), "q5": setup(300)}, 150_000_000)
    assert len(notes) == 1 and notes[0].startswith("q3:") and "3 state TTLs (15 min)" in notes[0]
    # the speed it holds below: 150M events in 15 min, over 2 readers
    assert "below 166,667 events/s (83,333 per source reader)" in notes[0]
    # q0 keeps no state, q5's windows do not depend on the TTL: neither is named
    assert ttl_warnings({"q3": setup(3)}, 7_500_000) == []  # 3.75 s at best: over one 3 s TTL
    assert ttl_warnings({"q3": setup(None)}, 1000) == []  # no TTL, nothing to outlast


def test_not_steady_always_says_why():
    assert steady_reason("q3", 1.1, "live bytes", 1.2, 22, 4, None) is None  # steady: no reason
    short = steady_reason("q20", 1.33, "live bytes", 1.2, 4, 300, None)
    assert short == "warm-up lasted 4 s, under 3 state TTLs (5 min): state could not reach steady"
    faster = steady_reason("q3", 1.31, "live bytes", 1.2, 22, 4, None, 360_000, 540_000)
    assert "1.50x faster than the warm-up" in faster and "processing-time TTL (4 s)" in faster
    assert "no state TTL" in steady_reason("q20", 1.5, "live bytes", 1.2, 60, None, None)
    assert "watermark lagged the data by up to 30 s of event time" in steady_reason(
        "q5", 1.5, "live bytes", 1.2, 60, 4, 30
    )
    # At 1M events/s (100K events per event-time second), 10 s of event time a second: a
    # 14 s lag is the watermark following the data (within 10 + 2 x 10 s), a 40 s one is not.
    fast = steady_reason("q5", 1.5, "live bytes", 1.2, 60, 4, 14, 1e6, 1e6, 10.0)
    assert fast and "watermark" not in fast and "the state itself is not steady" in fast
    held = steady_reason("q5", 1.5, "live bytes", 1.2, 60, 4, 40, 1e6, 1e6, 10.0)
    assert "up to 40 s of event time, over the 30 s it trails at this phase's speed" in held
    other = steady_reason("q3", 1.3, "live bytes", 1.2, 60, 4, None, 100, 100)
    assert other and "1.30x" in other and "60 s" in other
    # The reason names what the growth was judged on.
    assert "over the benchmark phase (live bytes)" in other
    on_files = steady_reason("q3", 1.3, "checkpoint size", 1.2, 60, 4, None, 100, 100)
    assert on_files and "(checkpoint size)" in on_files


def test_the_dataset_gets_the_time_slices_the_engine_asks_for():
    from nexmark.engines.flink.engine import FlinkEngine
    from nexmark.engines.spark.engine import SparkEngine
    from nexmark.settings import Settings

    params = DatasetParams(events=10_000_000, files=2)  # benchmark part: 2.5M events
    assert sized_dataset(FlinkEngine(), params).slices == 1  # streams each file whole
    spark = SparkEngine(settings=Settings.load(None, ["spark.nexmark.slice.events=1000000"]))
    sized = sized_dataset(spark, params)
    assert sized.slices == 3 and sized.files == 2 and sized.events == params.events
    assert sized_dataset(SparkEngine(), DatasetParams(events=1000, files=1)).slices == 1


def test_a_format_the_engine_cannot_read_is_refused_before_generating(tmp_path):
    import dataclasses

    import pytest

    from fake_engine import FakeEngine
    from nexmark.errors import UsageError

    engine = FakeEngine()
    engine.capabilities = lambda: dataclasses.replace(
        FakeEngine().capabilities(), formats=("csv",), files_per_reader=2
    )
    with pytest.raises(UsageError, match="cannot read parquet datasets .it reads csv."):
        sized_dataset(engine, DatasetParams(events=1000, files=2))
    sized = sized_dataset(engine, DatasetParams(events=1000, files=2, format="csv"))
    assert sized.files == 4 and sized.format == "csv"  # two files per reader, as declared


def test_pattern_state_is_not_held_by_a_ttl():
    # MATCH_RECOGNIZE's operator has no state TTL: no note that the warm-up is short for it,
    # and a growth is explained by its partial matches, not by a TTL.
    assert ttl_warnings({"cep1": setup(300)}, 150_000_000) == []
    why = steady_reason("cep1", 1.5, "live bytes", 1.2, 600, 4, None, 100, 200)
    assert why and "partial matches" in why and "1.50x" in why
    assert "processing-time TTL" not in why

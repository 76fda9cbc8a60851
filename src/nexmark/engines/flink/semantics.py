"""How Flink's results are read (`FlinkEngine.semantics`): the rules the verifier derives its
reference from, each as Flink applies it."""

from __future__ import annotations

from nexmark.engines.semantics import (
    Emission,
    FinalWatermark,
    IntegerAverage,
    ResultSemantics,
    SideLookup,
    WindowFiring,
)

# Flink's mini-batch (the recommended setup: 2 s) forwards a row-time watermark only when it
# crosses the next interval boundary, so the last watermark may stay up to 2 s below the
# computed one (docs/verification.md, "Watermark slack").
MINI_BATCH_SLACK_MS = 2000

SEMANTICS = ResultSemantics(
    # The COLLECT sink writes Debezium JSON: inserts and deletes (an update is both).
    emission=Emission.CHANGELOG,
    # TimeWindowUtil.isWindowFired: the watermark has passed the window's last millisecond.
    window_firing=WindowFiring.LAST_MS,
    # Each source reader's watermark is its max event time - delay; operators take the minimum.
    final_watermark=FinalWatermark.MIN_OVER_READERS,
    # AVG of a BIGINT is a BIGINT: the sum divided by the count, truncated.
    integer_average=IntegerAverage.TRUNCATED,
    # q13 is an event-time temporal join (FOR SYSTEM_TIME AS OF the bid's time).
    side_lookup=SideLookup.VERSIONED_AT_WATERMARK,
    watermark_slack_ms=MINI_BATCH_SLACK_MS,
    # A restored job reading Kafka runs with a source idle timeout (engines/flink/kafka.py): a
    # reader done with its partition leaves the minimum 1 s later.
    idle_sources=frozenset({"kafka"}),
)

"""How Spark's results are read (`SparkEngine.semantics`): the rules the verifier derives its
reference from, each as Spark applies it."""

from __future__ import annotations

from nexmark.engines.semantics import (
    Emission,
    FinalWatermark,
    IntegerAverage,
    ResultSemantics,
    SideLookup,
    WindowFiring,
)

SEMANTICS = ResultSemantics(
    # Update-mode upserts are turned into -U/+U changes with the query's key (collect.py).
    emission=Emission.CHANGELOG,
    window_firing=WindowFiring.END,  # a window [start, end) is emitted once watermark >= end
    final_watermark=FinalWatermark.MAX_OVER_INPUT,  # max event time seen - 4 s
    integer_average=IntegerAverage.TRUNCATED,  # the SQL computes SUM DIV COUNT, as Flink
    # q13 is a stream-static join: each bid is looked up in the side table as it arrives.
    side_lookup=SideLookup.ON_ARRIVAL,
    watermark_slack_ms=0,  # no batched watermark forwarding (what Flink's slack is for)
    idle_sources=frozenset(),  # one watermark over the whole input, whatever the source
)

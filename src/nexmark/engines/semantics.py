"""How to read an engine's results: the rules the verifier derives its reference from
(`ResultSemantics`, every field the engine's to state) and the collected rows (`Change`)."""

from __future__ import annotations

import enum
from dataclasses import dataclass, replace
from typing import NamedTuple


class Emission(str, enum.Enum):
    """How an engine's collected rows describe its result table."""

    CHANGELOG = "changelog"  # ADD / RETRACT changes, folded as a multiset
    UPSERT = "upsert"  # UPSERT changes keyed by the query's key (and ADD for append-only rows)


class WindowFiring(str, enum.Enum):
    """When an event-time window [start, end) fires, given the watermark."""

    LAST_MS = "last ms"  # watermark >= end - 1 ms: it passed the window's last millisecond
    END = "end"  # watermark >= end

    @property
    def lead_ms(self) -> int:
        """How many ms before `end` the watermark fires the window."""
        return 1 if self is WindowFiring.LAST_MS else 0


class FinalWatermark(str, enum.Enum):
    """The last watermark of a job whose source stays open after its last event."""

    MIN_OVER_READERS = "min over readers"  # min over source readers of (last event time - delay)
    MAX_OVER_INPUT = "max over input"  # max event time seen by the whole job - delay
    # Readers that turn idle once done leave the minimum (after an idle timeout on the wall
    # clock): the last watermark lies anywhere from the min to the max over readers.
    MIN_TO_MAX_OVER_READERS = "min to max over readers"


class IntegerAverage(str, enum.Enum):
    """What AVG over an integer column returns."""

    TRUNCATED = "truncated"  # an integer: sum / count, truncated
    FRACTIONAL = "fractional"  # a fraction: sum / count exactly (compared as a decimal)


class SideLookup(str, enum.Enum):
    """How a stream row is joined with a side table (q13)."""

    # An event-time temporal join: a row is joined, against the version valid at its time, once
    # the watermark has passed it; rows after the final watermark are never emitted.
    VERSIONED_AT_WATERMARK = "versioned at watermark"
    # A stream-static join: each row is looked up as it arrives, so every row is emitted.
    ON_ARRIVAL = "on arrival"


@dataclass(frozen=True)
class ResultSemantics:
    """How to read an engine's results; the verifier derives its reference from this.

    Attributes:
        emission: How collected rows are emitted and folded into the final table.
        window_firing: When an event-time window fires.
        final_watermark: The final watermark of a run whose source stays open.
        integer_average: AVG over integers (q4, q17).
        side_lookup: How a stream row is joined with a side table (q13).
        watermark_slack_ms: How far below the computed final watermark the engine's last
            watermark may stay (e.g. batched watermark forwarding); rows it would release are
            optional in the comparison.
        idle_sources: The kinds of source (`Source.kind`) whose readers turn idle once done,
            in a restored job: the final watermark is then MIN_TO_MAX_OVER_READERS
            (`for_source`). Flink reading Kafka: a restored job's warm-up splits stay with
            their readers, so it sets a source idle timeout (engines/flink/kafka.py).

    Every field is the engine's to state: none has a default, so no engine is verified by
    another engine's rules because it left one out.
    """

    emission: Emission
    window_firing: WindowFiring
    final_watermark: FinalWatermark
    integer_average: IntegerAverage
    side_lookup: SideLookup
    watermark_slack_ms: int
    idle_sources: frozenset[str]

    def for_source(self, kind: str) -> ResultSemantics:
        """The rules of a run reading a source of `kind`: a reader done with an idle source
        leaves the minimum, so a min-over-readers final watermark becomes min to max."""
        if kind in self.idle_sources and self.final_watermark is FinalWatermark.MIN_OVER_READERS:
            return replace(self, final_watermark=FinalWatermark.MIN_TO_MAX_OVER_READERS)
        return self


class RowKind(str, enum.Enum):
    ADD = "+"  # one more occurrence of `row` (an insert, or an update's new row)
    RETRACT = "-"  # one occurrence fewer (a delete, or an update's old row)
    UPSERT = "="  # `row` is now the one row of `key`, replacing any earlier row of that key


class Change(NamedTuple):
    """One collected row: what it does to the result table."""

    kind: RowKind
    row: tuple
    key: tuple | None = None  # UPSERT: the key the row stands for

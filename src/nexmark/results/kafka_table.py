"""A run from Kafka in the summary (`--source kafka`): the broker's cores beside the engine's,
and the line on what they mean and on the offsets proof."""

from __future__ import annotations

from collections.abc import Sequence

from nexmark.results.query_result import QueryResult


def from_kafka(results: Sequence[QueryResult]) -> list[QueryResult]:
    """The scored results read from Kafka (they carry the restore proof on offsets)."""
    return [r for r in results if r.ok and r.source_offsets is not None]


def kafka_line(results: Sequence[QueryResult]) -> str | None:
    """Under the table of a run from Kafka: what Broker Cores is, and the offsets proof."""
    kafka = from_kafka(results)
    if not kafka:
        return None
    proofs = sorted({r.source_offsets or "" for r in kafka})
    return (
        "Kafka: the events read from topics; Broker Cores = the embedded broker's CPU over the "
        "scored phase / Time, not in Cores ('-': a cluster of your own, not measured); "
        f"offsets {'; '.join(proofs)}"
    )


def broker_cores(timed: Sequence[QueryResult]) -> float | None:
    """The Total row's Broker Cores: time-weighted over the results that measured it; None
    when none did (files, or a user's cluster). The column (table.SOURCE_CORES) shows it beside
    Cores, never in it."""
    brokered = [r for r in timed if r.source_cores is not None and r.time_s]
    broker_time = sum(r.time_s for r in brokered)
    return sum(r.source_cores * r.time_s for r in brokered) / broker_time if broker_time else None

"""The results schema under its former single name: every record type, the codec and the
document functions, re-exported from the modules that now hold them (kept importable while the
protocol and the commands move to the new homes):

- query_result.py: `QueryResult` (and its consistency check, `problems`), `Status`
- figures.py: what a run measured, part by part (checkpoints, source ceiling, failover, rate,
  latency, repeats, statistics, rate search) and the state measures
- setup.py: the setup, the machine, the system check and its lines
- timeline.py: timestamps, samples, live-state reads, checkpoint events
- codec.py: JSON objects back into records, `ResultsError`
- document.py: the file's document, its schema version and upgrades
"""

from __future__ import annotations

from nexmark.results.codec import ResultsError
from nexmark.results.document import SCHEMA_VERSION, UPGRADES, dump_document, load_document, upgrade
from nexmark.results.figures import (
    CHECKPOINT_MEASURE,
    LIVE_BYTES_MEASURE,
    LIVE_KEYS_MEASURE,
    STATE_GROWTH_LIMIT,
    CheckpointStats,
    Failover,
    Latency,
    PhaseCheckpoint,
    RateFeed,
    RepeatSample,
    SourceCalibration,
    Sustainable,
    ThroughputStats,
)
from nexmark.results.query_result import QueryResult, Status
from nexmark.results.setup import Machine, OtherProcess, Setup, SystemCheck
from nexmark.results.timeline import CheckpointEvent, LivePoint, Sample, Timestamps

__all__ = [
    "CHECKPOINT_MEASURE",
    "LIVE_BYTES_MEASURE",
    "LIVE_KEYS_MEASURE",
    "SCHEMA_VERSION",
    "STATE_GROWTH_LIMIT",
    "UPGRADES",
    "CheckpointEvent",
    "CheckpointStats",
    "Failover",
    "Latency",
    "LivePoint",
    "Machine",
    "OtherProcess",
    "PhaseCheckpoint",
    "QueryResult",
    "RateFeed",
    "RepeatSample",
    "ResultsError",
    "Sample",
    "Setup",
    "SourceCalibration",
    "Status",
    "Sustainable",
    "SystemCheck",
    "ThroughputStats",
    "Timestamps",
    "dump_document",
    "load_document",
    "upgrade",
]

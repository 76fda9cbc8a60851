"""JSON objects back into result records: unknown fields are an error, a null nested object
stands for "nothing measured" (an object of nulls), and a missing required field is one line
naming where it is. The way back (`QueryResult.to_dict`) is `dataclasses.asdict`."""

from __future__ import annotations

import dataclasses
from typing import Any

from nexmark.errors import NexmarkError
from nexmark.results.figures import (
    CheckpointStats,
    Failover,
    Latency,
    PhaseCheckpoint,
    RateFeed,
    SourceCalibration,
    Sustainable,
    ThroughputStats,
)
from nexmark.results.profile import Profile
from nexmark.results.setup import (
    Machine,
    MachineSpeed,
    OtherProcess,
    Setup,
    SystemCheck,
    Worker,
)
from nexmark.results.timeline import Timestamps


class ResultsError(NexmarkError):
    """A results file is missing, unreadable, malformed or of an unknown schema version."""


NESTED: dict[str, type] = {
    "phase_checkpoint": PhaseCheckpoint,
    "checkpoints": CheckpointStats,
    "timestamps": Timestamps,
    "setup": Setup,
    "source": SourceCalibration,
    "failover": Failover,
    "rate": RateFeed,
    "latency": Latency,
    "throughput_stats": ThroughputStats,
    "sustainable": Sustainable,
    "system_check": SystemCheck,
    "profile": Profile,
}


def fields_of(cls: type, data: Any, where: str) -> dict[str, Any]:
    if not isinstance(data, dict):
        raise ResultsError(f"{where}: expected an object, got {type(data).__name__}")
    names = {f.name for f in dataclasses.fields(cls)}
    unknown = sorted(set(data) - names)
    if unknown:
        raise ResultsError(f"{where}: unknown field(s) {', '.join(unknown)}")
    return dict(data)


def build(cls: type, data: Any, where: str) -> Any:
    try:
        return cls(**fields_of(cls, data, where))
    except TypeError as exc:  # a required field is missing
        raise ResultsError(f"{where}: {exc}") from exc


def nested(cls: type, data: Any, where: str) -> Any:
    if cls is Setup:
        values = fields_of(Setup, data, where)
        values["machine"] = build(Machine, values.get("machine") or {}, f"{where}.machine")
        check = values.get("system_check") or {}
        values["system_check"] = nested(SystemCheck, check, f"{where}.system_check")
        values["workers"] = [
            build(Worker, d, f"{where}.workers[{i}]")
            for i, d in enumerate(values.get("workers") or [])
        ]
        return Setup(**values)
    if cls is SystemCheck:
        values = fields_of(SystemCheck, data, where)
        values["other_processes"] = [
            build(OtherProcess, d, f"{where}.other_processes[{i}]")
            for i, d in enumerate(values.get("other_processes") or [])
        ]
        if values.get("speed") is not None:
            values["speed"] = build(MachineSpeed, values["speed"], f"{where}.speed")
        return SystemCheck(**values)
    return build(cls, data, where)

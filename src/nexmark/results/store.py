"""A results directory: `results.json` (complete records) and `results.csv` (one flat row each).

Both files are rewritten whole, atomically (temp file + rename), each time a query ends, so an
interrupted suite keeps every finished query and a reader never sees half a file. A directory
holds one record per (engine, query): appending a query again (a retried failure on --resume)
replaces its record.
"""

from __future__ import annotations

import csv
import dataclasses
import io
import json
import math
import os
import secrets
from pathlib import Path
from typing import Any

from nexmark import console, diskspace
from nexmark.errors import DiskFullError
from nexmark.results.codec import ResultsError
from nexmark.results.document import dump_document, load_document
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
from nexmark.results.query_result import QueryResult, Status
from nexmark.results.setup import Machine
from nexmark.results.timeline import Timestamps

JSON_NAME = "results.json"
CSV_NAME = "results.csv"

# Nested objects flattened into the CSV as prefix.field; lists and free-form dicts are left out.
_FLAT_NESTED: tuple[tuple[str, type], ...] = (
    ("phase_checkpoint", PhaseCheckpoint),
    ("checkpoints", CheckpointStats),
    ("timestamps", Timestamps),
    ("setup.machine", Machine),
    ("source", SourceCalibration),
    ("failover", Failover),
    ("rate", RateFeed),
    ("latency", Latency),
    ("throughput_stats", ThroughputStats),
    ("sustainable", Sustainable),
)
_NOT_IN_CSV = {
    "setup",
    "job_options",
    "timeseries",
    "live_state",
    "checkpoint_events",
    "repeats",
    "operators",
    "operator_busy",
    "system_check",  # lists inside: only its figure, below
    *(p for p, _ in _FLAT_NESTED),
}
# Single fields of nested objects that are not flattened whole.
_CSV_EXTRA: tuple[tuple[str, type], ...] = (
    ("system_check.window_s", float),
    ("system_check.other_cores", float),
)


def _scalar_type(annotation: Any) -> type:
    """The Python type of a scalar field from its annotation string ("float | None" -> float)."""
    text = str(annotation)
    for name, kind in (("bool", bool), ("int", int), ("float", float)):
        if text.split(" | ")[0] == name:
            return kind
    return str


def csv_columns() -> list[tuple[str, type]]:
    """Every CSV column, in order, with the Python type its values parse to."""
    cols = [
        (f.name, _scalar_type(f.type))
        for f in dataclasses.fields(QueryResult)
        if f.name not in _NOT_IN_CSV
    ]
    cols.insert(cols.index(("engine_version", str)) + 1, ("setup.engine_target", str))
    for prefix, kind in _FLAT_NESTED:
        cols += [
            (f"{prefix}.{f.name}", _scalar_type(f.type))
            for f in dataclasses.fields(kind)
            if not str(f.type).startswith("list")  # a series (latency over time): JSON only
        ]
    return cols + list(_CSV_EXTRA)


def flatten(result: QueryResult) -> dict[str, Any]:
    """The CSV row of a result as typed values (None for null)."""
    row: dict[str, Any] = {}
    for name, _ in csv_columns():
        value: Any = result
        for part in name.split("."):
            value = getattr(value, part)
        row[name] = value.value if isinstance(value, Status) else value
    return row


def _format(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return repr(value)  # shortest text that reads back to the same float
    return str(value)


def parse_row(row: dict[str, str]) -> dict[str, Any]:
    """Read a CSV row back to typed values: the inverse of `flatten` + formatting."""
    out: dict[str, Any] = {}
    for name, kind in csv_columns():
        text = row.get(name, "")
        if text == "":
            out[name] = None
        elif kind is bool:
            out[name] = text == "true"
        else:
            out[name] = kind(text)
    return out


def to_csv(results: list[QueryResult]) -> str:
    buf = io.StringIO()
    names = [name for name, _ in csv_columns()]
    writer = csv.DictWriter(buf, fieldnames=names, lineterminator="\n")
    writer.writeheader()
    for r in results:
        writer.writerow({k: _format(v) for k, v in flatten(r).items()})
    return buf.getvalue()


def read_csv(path: Path) -> list[dict[str, Any]]:
    """The typed rows of a results.csv."""
    with open(path, newline="", encoding="utf-8") as fh:
        return [parse_row(row) for row in csv.DictReader(fh)]


def _write_all_atomic(files: dict[Path, str]) -> None:
    """Write every file in full beside its target first, then rename each into place: a full
    disk (or any error) while writing leaves every target as it was, never one file updated
    and the other not."""
    # A unique name beside the target (same filesystem, so the rename is atomic); created with
    # open() rather than mkstemp so the file gets the usual umask permissions, not 0600.
    temps = {
        path: path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
        for path in files
    }
    try:
        for path, text in files.items():
            with open(temps[path], "x", encoding="utf-8", newline="") as fh:
                fh.write(text)
                fh.flush()
                os.fsync(fh.fileno())
        for path, tmp in temps.items():
            os.replace(tmp, path)
    except BaseException:
        for tmp in temps.values():
            Path(tmp).unlink(missing_ok=True)
        raise


def _finite(value: Any) -> Any:
    """NaN and infinity (a division by a zero duration) become null: JSON has no such numbers,
    and a result must still be written rather than crash the suite."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_finite(v) for v in value]
    return value


def load_results(path: str | os.PathLike[str]) -> list[QueryResult]:
    """Load the records of a results directory or of a results.json file.

    Raises:
        ResultsError: missing file, invalid JSON, or unknown schema version.
    """
    path = Path(path)
    file = path / JSON_NAME if path.is_dir() else path
    try:
        text = file.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ResultsError(f"no results at {file}") from None
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ResultsError(f"{file}: not valid JSON ({exc})") from None
    return load_document(doc, source=str(file))


class ResultStore:
    """The results directory of one run.

    Args:
        directory: Created on the first append if missing.
    """

    def __init__(self, directory: str | os.PathLike[str]) -> None:
        self.dir = Path(directory)
        self.json_path = self.dir / JSON_NAME
        self.csv_path = self.dir / CSV_NAME

    def load(self) -> list[QueryResult]:
        """Every record, in the order they were first appended; [] if nothing was written yet."""
        if not self.json_path.exists():
            return []
        return load_results(self.json_path)

    def append(self, result: QueryResult) -> None:
        """Add a finished query (replacing an earlier record of the same engine and query)."""
        results = [r for r in self.load() if r.key != result.key]
        results.append(result)
        self.write(results)

    def write(self, results: list[QueryResult]) -> None:
        """Rewrite both files with exactly `results`."""
        doc = _finite(dump_document(results))
        files = {
            self.json_path: json.dumps(doc, indent=1, allow_nan=False) + "\n",
            self.csv_path: to_csv(load_document(doc)),
        }
        try:
            self.dir.mkdir(parents=True, exist_ok=True)
            _write_all_atomic(files)
        except OSError as exc:
            if not diskspace.is_disk_full(exc):
                raise
            need = sum(len(text.encode()) for text in files.values())
            kept = "those written before are intact" if self.json_path.exists() else "none"
            raise DiskFullError(
                f"disk full writing the results to {self.dir}: they need "
                f"{console.human_bytes(need)}, {diskspace.free_space(self.dir)} ({kept})"
            ) from None

    def completed_queries(self, engine: str | None = None, retry_failed: bool = False) -> set[str]:
        """Queries already recorded, for --resume to skip.

        Args:
            engine: Only records of this engine (default: any).
            retry_failed: Leave failed and timed-out queries out, so they run again.
        """
        retry = {Status.FAILED, Status.TIMEOUT} if retry_failed else set()
        return {
            r.query
            for r in self.load()
            if (engine is None or r.engine == engine) and r.status not in retry
        }

    def run_id(self) -> str | None:
        """The run id already recorded here (reuse it on --resume), or None."""
        results = self.load()
        return results[0].run_id if results else None

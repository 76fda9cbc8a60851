"""What a Flink job's restart after a failure restored, read from the REST API.

Flink reports a restart's failure (`/jobs/<id>/exceptions`) and the checkpoint it restored
(`/jobs/<id>/checkpoints`), but not how far the source had read in that checkpoint. Each
restored source reader logs its splits as it gets them back from the checkpoint
(`SourceReaderBase`: "Adding split(s) to reader: [FileSourceSplit: <file> ... position=
CheckpointedPosition: offset=NO_OFFSET, recordsToSkip=<n>]"), so the TaskManagers' logs
(`/taskmanagers/<id>/log`, a remote cluster's too) hold the position exactly: the records of the
file before `offset` plus `recordsToSkip`. A file of the part with no restored split was read to
its end before the checkpoint (the enumerator keeps only unfinished splits in readers' state).
"""

from __future__ import annotations

import contextlib
import re
import time
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote, urlparse

from nexmark.engines.flink.rest import FlinkRest
from nexmark.errors import EngineError
from nexmark.workload.dataset import Dataset

_ADDING = "Adding split(s) to reader:"
_SPLIT = re.compile(
    r"FileSourceSplit: (?P<path>\S+) \[\d+, \d+\).*? ID=\S+ position="
    r"(?:null|CheckpointedPosition: offset=(?P<offset>NO_OFFSET|\d+), recordsToSkip=(?P<skip>\d+))"
)
_LOG_TIME = re.compile(r"^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d),(\d{3}) ")
# Log lines carry the TaskManager's wall clock to the ms; the JobManager stamps the failure.
_CLOCK_SLACK_S = 1.0


@dataclass(frozen=True)
class RestoredSplit:
    path: Path
    events: int  # events of the file before the restored position


def restored_splits(log_text: str, part_dir: Path, since: float) -> dict[Path, RestoredSplit]:
    """The last restored position of each file of `part_dir` logged at or after `since`."""
    part = Path(part_dir).resolve()
    found: dict[Path, RestoredSplit] = {}
    for line in log_text.splitlines():
        if _ADDING not in line or (logged := _line_time(line)) is None:
            continue
        if logged < since - _CLOCK_SLACK_S:
            continue
        for match in _SPLIT.finditer(line):
            path = Path(unquote(urlparse(match["path"]).path))
            if path.parent.resolve() != part:
                continue
            found[path] = RestoredSplit(path, _events_before(path, match["offset"], match["skip"]))
    return found


def _line_time(line: str) -> float | None:
    match = _LOG_TIME.match(line)
    if match is None:
        return None
    return time.mktime(time.strptime(match[1], "%Y-%m-%d %H:%M:%S")) + int(match[2]) / 1000


def _events_before(path: Path, offset: str | None, skip: str | None) -> int:
    """Records before a checkpointed position: lines before the byte offset, plus the skip."""
    if skip is None:  # position=null: a split given out again from its start
        return 0
    before = 0
    if offset not in (None, "NO_OFFSET"):
        with path.open("rb") as fh:
            before = fh.read(int(offset)).count(b"\n")
    return before + int(skip)


def file_events(part_dir: Path) -> dict[Path, int]:
    """Events of each file of a part: from the dataset's manifest, else by counting lines."""
    part = Path(part_dir).resolve()
    with contextlib.suppress(Exception):  # a part outside a dataset (tests): count lines
        return {f.path.resolve(): f.events for f in Dataset(part.parent).files(part.name)}
    out = {}
    for path in sorted(part.glob("*.csv")):
        with path.open("rb") as fh:
            out[path.resolve()] = sum(1 for _ in fh)
    return out


def events_at_restore(rest: FlinkRest, part_dir: Path, since: float) -> int | None:
    """Events of the part the latest restore's checkpoint covered, summed over its files; None
    while no TaskManager has logged a restored split since `since` (the failure)."""
    logs = ""
    for tm in rest.get("/taskmanagers").get("taskmanagers", []):
        with contextlib.suppress(EngineError):  # a TaskManager going away meanwhile
            logs += rest.get_text(f"/taskmanagers/{tm['id']}/log") + "\n"
    restored = restored_splits(logs, part_dir, since)
    if not restored:
        return None
    files = file_events(part_dir)
    return sum(restored[p].events if p in restored else n for p, n in files.items())

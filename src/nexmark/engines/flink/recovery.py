"""What a Flink job's restart after a failure restored, read from the REST API.

Flink reports a restart's failure (`/jobs/<id>/exceptions`) and the checkpoint it restored
(`/jobs/<id>/checkpoints`), but not how far the source had read in that checkpoint. Each
restored source reader logs its splits as it gets them back from the checkpoint
(`SourceReaderBase`: "Adding split(s) to reader: [FileSourceSplit: <file> ... position=
CheckpointedPosition: offset=NO_OFFSET, recordsToSkip=<n>]"), so the TaskManagers' logs
(`/taskmanagers/<id>/log`, a remote cluster's too) hold the position exactly: the records of the
file before `offset` plus `recordsToSkip`. A file of the part with no restored split was read to
its end before the checkpoint (the enumerator keeps only unfinished splits in readers' state).
The same logs say when a reader has read a split to its end ("Finished reading split(s)
[<ids>]"): the fallback that ends a phase when Flink publishes no count for the new attempt.
"""

from __future__ import annotations

import contextlib
import re
import time
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote, urlparse

from nexmark.engines.flink.rest import FlinkRest
from nexmark.errors import EngineError, UsageError
from nexmark.storage import files as storage_files
from nexmark.storage.files import Location  # a file here, or an object of a part on a store
from nexmark.storage.s3 import S3Url, is_s3
from nexmark.workload.feed import PartFeed

_ADDING = "Adding split(s) to reader:"
_FINISHED = re.compile(r"Finished reading split\(s\) \[(?P<ids>[^\]]*)\]")
_SPLIT = re.compile(
    r"FileSourceSplit: (?P<path>\S+) \[\d+, \d+\).*? ID=(?P<id>\S+) position="
    r"(?:null|CheckpointedPosition: offset=(?P<offset>NO_OFFSET|\d+), recordsToSkip=(?P<skip>\d+))"
)
_LOG_TIME = re.compile(r"^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d),(\d{3}) ")
# Log lines carry the TaskManager's wall clock to the ms; the JobManager stamps the failure.
_CLOCK_SLACK_S = 1.0


@dataclass(frozen=True)
class RestoredSplit:
    path: Location
    split_id: str
    events: int  # events of the file before the restored position
    logged_at: float  # when the reader logged it (unix seconds)


def restored_splits(
    log_text: str, part_dir: Location, since: float
) -> dict[Location, RestoredSplit]:
    """The last restored position of each file of `part_dir` (a folder, or a prefix on a
    store) logged at or after `since`."""
    part = _resolved(part_dir)
    found: dict[Location, RestoredSplit] = {}
    for line in log_text.splitlines():
        if _ADDING not in line or (logged := _line_time(line)) is None:
            continue
        if logged < since - _CLOCK_SLACK_S:
            continue
        for match in _SPLIT.finditer(line):
            path = _split_location(match["path"])
            if path is None or _resolved(path.parent) != part:
                continue
            events = _events_before(path, match["offset"], match["skip"])
            found[path] = RestoredSplit(path, match["id"], events, logged)
    return found


def _split_location(logged: str) -> Location | None:
    """A split's file as a reader logs it: `file:/...` (or a plain path), or `s3://bucket/key`
    for a part on a store; None for what is neither."""
    if is_s3(logged):
        try:  # a path Flink logged: text from outside, parsed where it comes in
            return S3Url.parse(logged)
        except UsageError:
            return None
    return Path(unquote(urlparse(logged).path))


def _resolved(where: Location) -> Location:
    return where.resolve() if isinstance(where, Path) else where


def finished_splits(log_text: str, since: float) -> set[str]:
    """Ids of the splits some reader logged as read to their end at or after `since` (the same
    TaskManager clock: no slack)."""
    done: set[str] = set()
    for line in log_text.splitlines():
        match = _FINISHED.search(line)
        logged = _line_time(line) if match else None
        if match and logged is not None and logged >= since:
            done.update(i.strip() for i in match["ids"].split(",") if i.strip())
    return done


def _line_time(line: str) -> float | None:
    match = _LOG_TIME.match(line)
    if match is None:
        return None
    return time.mktime(time.strptime(match[1], "%Y-%m-%d %H:%M:%S")) + int(match[2]) / 1000


def _events_before(path: Location, offset: str | None, skip: str | None) -> int:
    """Records before a checkpointed position, plus the skip. A CSV reader checkpoints a byte
    offset (the lines before it count); Flink's Parquet reader always checkpoints NO_OFFSET
    and the records from the file's start (its restore refuses any other offset)."""
    if skip is None:  # position=null: a split given out again from its start
        return 0
    before = 0
    if offset not in (None, "NO_OFFSET"):
        if path.suffix != ".csv":  # no dataset format but CSV has byte positions
            raise EngineError(f"a restored position at byte {offset} of {path}: not a CSV file")
        with storage_files.open_input(path) as fh:
            before = fh.read(int(offset)).count(b"\n")
    return before + int(skip)


def file_events(part_dir: Location) -> dict[Location, int]:
    """Events of each file of a part: the part's own facts (its manifest, else its files)."""
    return {_resolved(f.path): f.events for f in PartFeed.of(part_dir).files}


def taskmanager_logs(rest: FlinkRest) -> str:
    """Every running TaskManager's log, through the REST API."""
    logs = ""
    for tm in rest.get("/taskmanagers").get("taskmanagers", []):
        with contextlib.suppress(EngineError):  # a TaskManager going away meanwhile
            logs += rest.get_text(f"/taskmanagers/{tm['id']}/log") + "\n"
    return logs


@dataclass(frozen=True)
class Restore:
    """What a restart restored: the events of the part it covered, and the splits it gave
    back to readers (to be read on from their positions)."""

    events: int
    split_ids: frozenset[str]
    logged_at: float  # when the first restored split was logged: nothing of it was read before


def restore_of(
    rest: FlinkRest, part_dir: Location, since: float, files: dict[Location, int]
) -> Restore | None:
    """The latest restore of a job reading `part_dir`, from the splits its readers logged at or
    after `since` (the failure); None while none has. `files`: the events of each file of
    `part_dir`, by the path the job reads it under."""
    restored = restored_splits(taskmanager_logs(rest), part_dir, since)
    if not restored:
        return None
    events = sum(restored[p].events if p in restored else n for p, n in files.items())
    ids = frozenset(s.split_id for s in restored.values())
    return Restore(events, ids, min(s.logged_at for s in restored.values()))


def all_read_since(rest: FlinkRest, split_ids: frozenset[str], since: float) -> bool:
    """Every one of `split_ids` was read to its end at or after `since`."""
    return split_ids <= finished_splits(taskmanager_logs(rest), since)

"""Reading a Spark query's checkpoint directory, local or on a store (a checkpoint is a folder
either way: `storage.files`): its logs of batches (offsets/N, commits/N), the file source's
log of the files each batch read, a Kafka source's offsets, and the bytes written.
"""

from __future__ import annotations

import json
import urllib.parse

from nexmark.storage import files
from nexmark.storage.files import Location


def log_ids(log_dir: Location) -> list[int]:
    """Batch ids present in a checkpoint log directory (offsets/, commits/)."""
    return sorted(int(p.name) for p in files.children(log_dir) if p.name.isdigit())


def last_commit(checkpoint: Location) -> int | None:
    ids = log_ids(checkpoint / "commits")
    return ids[-1] if ids else None


def dir_bytes(path: Location, since: float | None = None) -> int:
    """Bytes of the files under `path` (only those modified at or after `since`)."""
    return sum(n for _, n, at in files.files_under(path) if since is None or at >= since)


def source_log_files(checkpoint: Location) -> dict[int, list[str]]:
    """File source log: batch id -> paths (its N and N.compact files hold JSON lines)."""
    batches: dict[int, list[str]] = {}
    for p in files.children(checkpoint / "sources" / "0"):
        if p.name.startswith("."):
            continue
        try:
            lines = files.read_text(p).splitlines()[1:]  # first line: "v1"
        except (FileNotFoundError, UnicodeDecodeError):
            continue
        for line in lines:
            entry = json.loads(line)
            batches.setdefault(int(entry["batchId"]), []).append(entry["path"])
    return {k: sorted(set(v)) for k, v in batches.items()}


def source_offset(checkpoint: Location, batch: int) -> int | None:
    """The file source's log offset a batch read up to (the last line of `offsets/N`)."""
    try:
        lines = files.read_text(checkpoint / "offsets" / str(batch)).splitlines()
    except FileNotFoundError:
        return None
    for line in reversed(lines):
        if line.startswith("{") and "logOffset" in line:
            return int(json.loads(line)["logOffset"])
    return None


def kafka_offsets(checkpoint: Location, batch: int) -> dict[str, dict[int, int]] | None:
    """The Kafka source's offsets a batch read up to (`offsets/N`: after the version and the
    batch's metadata, the source's offset as JSON {topic: {partition: next offset}}); None
    where that batch has no such line."""
    try:
        lines = files.read_text(checkpoint / "offsets" / str(batch)).splitlines()
    except FileNotFoundError:
        return None
    for line in reversed(lines[2:]):
        if not line.startswith("{"):
            continue
        offsets = json.loads(line)
        if all(isinstance(v, dict) for v in offsets.values()):
            return {t: {int(p): int(o) for p, o in ps.items()} for t, ps in offsets.items()}
    return None


def read_since(
    now: dict[str, dict[int, int]], since: dict[str, dict[int, int]] | None
) -> dict[tuple[str, int], int]:
    """Records read per (topic, partition) between two offset maps (a partition absent from
    `since` was read from 0: the load's topics start there)."""
    since = since or {}
    return {
        (topic, p): o - since.get(topic, {}).get(p, 0)
        for topic, parts in now.items()
        for p, o in parts.items()
    }


def plain_path(path: str) -> str:
    """A source log path (`file:///...`) as a local path."""
    if not path.startswith("file:"):
        return path
    return "/" + urllib.parse.unquote(path[len("file:") :]).lstrip("/")

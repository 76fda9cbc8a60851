"""A run on an object store (`--data s3://...`, `--checkpoints s3://...`; docs/object-store.md).

The protocol is the same as on local files; what changes is where things are:

- the dataset at `--data` (found or generated there, its manifest checked first);
- the run's own prefix on the store (`store_dir`, unique to the run): `<--checkpoints>/<run>`,
  else `s3://<the dataset's bucket>/nexmark-work/<run>` when only the data is there. Each job
  gets `<store_dir>/<query>/<run-n>/`: `source/<part>` (the prefix its source watches, which
  the feed copies the part's objects into) and, with `--checkpoints`, `checkpoints/` (the
  engine's checkpoints and the phase snapshot);
- the run's prefix is removed at the end (the checkpoints kept with --keep-checkpoints).

`check_locations` asks the store once for each bucket before any work (`check_store`: no
such bucket, credentials refused, an endpoint that does not answer, each one line).
"""

from __future__ import annotations

import uuid
from pathlib import Path

from nexmark.errors import DatasetError
from nexmark.storage import files
from nexmark.storage.files import Location
from nexmark.storage.s3 import S3Settings, S3Url, check_store
from nexmark.workload.dataset import MANIFEST

WORK_PREFIX = "nexmark-work"  # under the dataset's bucket when no --checkpoints is given

# The locations arrive parsed (`RunOptions.data`, `.checkpoints`: a Path or an S3Url, an S3Url
# or None): a location on the store is an S3Url, nothing here reads a URL's text.


def on_store(data: Location | None, checkpoints: S3Url | None) -> bool:
    """Whether a run of these locations uses an object store."""
    return isinstance(data, S3Url) or checkpoints is not None


def store_dir(data: Location | None, checkpoints: S3Url | None, run_id: str | None = None) -> S3Url:
    """The run's own prefix on the store (see the module's doc)."""
    run = run_id or uuid.uuid4().hex[:12]
    if checkpoints is not None:
        return checkpoints / run
    assert isinstance(data, S3Url)
    return S3Url(data.bucket, WORK_PREFIX) / run


def check_locations(data: Location | None, checkpoints: S3Url | None) -> S3Settings:
    """Ask the store once per bucket, before any work (StorageError: one line)."""
    settings = S3Settings.from_env()
    buckets: list[S3Url] = []
    for url in (data, checkpoints):
        if isinstance(url, S3Url) and url.bucket not in [b.bucket for b in buckets]:
            buckets.append(url)
    for url in buckets:
        check_store(url, settings)
    return settings


def check_not_half_written(data: Location | None) -> None:
    """A prefix holding objects but no manifest (written last) is a dataset half-written or
    still being written: refused (DatasetError, one line), not generated over by a run."""
    if not isinstance(data, S3Url):
        return
    if not files.is_file(data / MANIFEST) and files.objects(data):
        raise DatasetError(
            f"{data} is not a complete dataset: objects but no {MANIFEST} (written last: a "
            "generation interrupted, or still under way); `nexmark generate --data "
            f"{data}` writes it again"
        )


def reach_urls(data: Location | None, checkpoints: S3Url | None) -> list[S3Url]:
    """What an engine's own file system must reach before the first query (the worker-reach
    check): the dataset's manifest (read), the checkpoints' prefix (listed)."""
    urls = [data / MANIFEST] if isinstance(data, S3Url) else []
    return urls + ([checkpoints] if checkpoints is not None else [])


def job_dirs(
    store: S3Url | None, on_store_checkpoints: bool, work_dir: Path
) -> tuple[S3Url | None, S3Url | None]:
    """(checkpoint_dir, feed_dir) of the job working in `work_dir` (its last two names,
    `<query>/run-<n>` or `<tmp>/<query>`, name it under the run's prefix); None where the
    run has none on the store."""
    if store is None:
        return None, None
    job = store / "/".join(Path(work_dir).parts[-2:])
    return (job / "checkpoints" if on_store_checkpoints else None), job / "source"


def remove(store: S3Url | None, keep_checkpoints: bool) -> None:
    """The run's prefix at the end: the staged feeds always (copies of the data), the
    checkpoints unless kept."""
    if store is None:
        return
    if not keep_checkpoints:
        files.delete_under(store)
        return
    for found in files.objects(store):
        if "/source/" in f"/{found.key}/":
            files.delete(found)

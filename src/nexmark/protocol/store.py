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

from nexmark.errors import DatasetError, UsageError
from nexmark.storage import files
from nexmark.storage.s3 import S3Settings, S3Url, check_store, is_s3
from nexmark.workload.dataset import MANIFEST

WORK_PREFIX = "nexmark-work"  # under the dataset's bucket when no --checkpoints is given


def parse_checkpoints(text: str | None) -> S3Url | None:
    """`--checkpoints`: an s3:// prefix (UsageError, one line, for anything else)."""
    if text is None:
        return None
    if not is_s3(text):
        raise UsageError(
            f"--checkpoints {text}: an s3://bucket/prefix is expected (local checkpoints go "
            "to the run's work directory, as without the option)"
        )
    return S3Url.parse(text)


def on_store(data: str | None, checkpoints: str | None) -> bool:
    """Whether a run of these locations uses an object store."""
    return is_s3(data or "") or checkpoints is not None


def store_dir(data: str | None, checkpoints: str | None, run_id: str | None = None) -> str:
    """The run's own prefix on the store (see the module's doc)."""
    run = run_id or uuid.uuid4().hex[:12]
    given = parse_checkpoints(checkpoints)
    if given is not None:
        return str(given / run)
    assert data is not None and is_s3(data)
    return str(S3Url(S3Url.parse(data).bucket, WORK_PREFIX) / run)


def check_locations(data: str | None, checkpoints: str | None) -> S3Settings:
    """Ask the store once per bucket, before any work (StorageError: one line)."""
    settings = S3Settings.from_env()
    buckets = []
    for where in (data, checkpoints):
        if where is not None and is_s3(where):
            url = S3Url.parse(where)
            if url.bucket not in [b.bucket for b in buckets]:
                buckets.append(url)
    for url in buckets:
        check_store(url, settings)
    return settings


def check_not_half_written(data: str | None) -> None:
    """A prefix holding objects but no manifest (written last) is a dataset half-written or
    still being written: refused (DatasetError, one line), not generated over by a run."""
    if data is None or not is_s3(data):
        return
    url = S3Url.parse(data)
    if not files.is_file(url / MANIFEST) and files.objects(url):
        raise DatasetError(
            f"{url} is not a complete dataset: objects but no {MANIFEST} (written last: a "
            "generation interrupted, or still under way); `nexmark generate --data "
            f"{url}` writes it again"
        )


def reach_urls(data: str | None, checkpoints: str | None) -> list[str]:
    """What an engine's own file system must reach before the first query (the worker-reach
    check): the dataset's manifest (read), the checkpoints' prefix (listed)."""
    urls = [str(S3Url.parse(data) / MANIFEST)] if data and is_s3(data) else []
    return urls + ([str(S3Url.parse(checkpoints))] if checkpoints else [])


def job_dirs(store: str | None, on_store_checkpoints: bool, work_dir: Path) -> tuple[str, str]:
    """(checkpoint_dir or "", feed_dir or "") of the job working in `work_dir` (its last two
    names, `<query>/run-<n>` or `<tmp>/<query>`, name it under the run's prefix)."""
    if store is None:
        return "", ""
    job = S3Url.parse(store) / "/".join(Path(work_dir).parts[-2:])
    return (str(job / "checkpoints") if on_store_checkpoints else ""), str(job / "source")


def remove(store: str | None, keep_checkpoints: bool) -> None:
    """The run's prefix at the end: the staged feeds always (copies of the data), the
    checkpoints unless kept."""
    if store is None:
        return
    if not keep_checkpoints:
        files.delete_under(S3Url.parse(store))
        return
    for found in files.objects(S3Url.parse(store)):
        if "/source/" in f"/{found.key}/":
            files.delete(found)

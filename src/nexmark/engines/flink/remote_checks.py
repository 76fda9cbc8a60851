"""Probes of a remote Flink cluster before its first job of a file format: can its processes
read that format (the jars in their lib/), and, on an object store, reach the store with their
own S3 plugin and settings? Each probe is a tiny bounded job on the cluster over a one-event
file, whose failure is the answer, in one line naming what the cluster needs.

The embedded and local clusters need neither: the engine puts the jars on their class paths
and checks the store from its own JVM (`store.check_reach`).
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

from nexmark.engines.flink import jars, store
from nexmark.engines.flink.files import write_probe_file
from nexmark.engines.py4j_errors import java_message
from nexmark.errors import EngineError
from nexmark.storage import engine_s3
from nexmark.storage import files as storage_files
from nexmark.storage.s3 import S3Url

# How long a remote cluster's format check (one event through a bounded job) may take.
FORMAT_CHECK_TIMEOUT_S = 120

# Runs a bounded source-only job over a part (a folder or a store prefix) of a format on the
# cluster, from a work folder, and waits for it; its failure raised as it came.
RunProbe = Callable[[Path | S3Url, str, Path], None]


def check_reads(
    rest_url: str, file_format: str, work_dir: Path, run_probe: RunProbe, reach: list[str]
) -> None:
    """Can the cluster at `rest_url` read `file_format`? A tiny bounded job over a one-event
    file of that format (in the work directory, which every TaskManager reaches) must finish;
    one line naming the jars its lib/ needs if not. With `reach` (a run on a store), the same
    file is then read from there (`check_reach`)."""
    probe = Path(work_dir) / f"format-check-{file_format}"
    write_probe_file(probe, file_format)
    try:
        try:
            run_probe(probe, file_format, work_dir)
        except Exception as exc:  # noqa: BLE001 - the cluster's failure is the answer
            needed = jars.group_jars(jars.FORMAT_GROUPS[file_format])
            raise EngineError(
                f"the Flink cluster at {rest_url} cannot read {file_format} files "
                f"({java_message(exc)}): its lib/ on every JobManager and TaskManager "
                f"needs {', '.join(j.file_name for j in needed)} (pinned in "
                f"{jars.PINNED.name}; docs/engines.md)"
            ) from None
        if reach:
            check_reach(rest_url, probe, file_format, work_dir, run_probe, reach)
    finally:
        shutil.rmtree(probe, ignore_errors=True)


def check_reach(
    rest_url: str,
    probe: Path,
    file_format: str,
    work_dir: Path,
    run_probe: RunProbe,
    reach: list[str],
) -> None:
    """The worker-reach check on a remote cluster, at the engine's start (after the format
    check of the default format, whose jars docs/object-store.md asks a cluster on a store
    for): the one-event probe is put on the store (under the checkpoints' prefix, else
    the dataset's bucket) and read there by a bounded job on the cluster, so the
    TaskManagers' own S3 plugin and settings are what is tried, not this client's. One
    line if they cannot."""
    where = store.reach_probe(reach)
    for found in probe.iterdir():
        storage_files.upload(found, where / found.name)
    try:
        run_probe(where, file_format, work_dir)
    except Exception as exc:  # noqa: BLE001 - the cluster's failure is the answer
        raise EngineError(
            f"the Flink cluster at {rest_url} cannot read {where} from the store "
            f"({java_message(exc)[:300]}): every JobManager and TaskManager needs "
            f"plugins/{engine_s3.FLINK_PLUGIN}/ and the s3.* options of this store "
            "(docs/object-store.md)"
        ) from None
    finally:
        storage_files.remove_tree(where)

"""Probes of a remote Flink cluster before its first job of a file format: can its processes
read that format (the jars in their lib/), and, on an object store, reach the store with their
own S3 plugin and settings? Each probe is a tiny bounded job on the cluster over a one-event
file (on the store, when the run is on one: no disk shared with the runner is needed), whose
failure is the answer, in one line naming what the cluster needs.

The embedded and local clusters need neither: the engine puts the jars on their class paths
and checks the store from its own JVM (`store.check_reach`).
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path

from nexmark.engines.flink import jars, s3_access, store
from nexmark.engines.flink.files import write_probe_file
from nexmark.engines.py4j_errors import java_message
from nexmark.errors import EngineError
from nexmark.storage import files as storage_files
from nexmark.storage.s3 import S3Url

# How long a remote cluster's format check (one event through a bounded job) may take.
FORMAT_CHECK_TIMEOUT_S = 120

# Runs a bounded source-only job over a part (a folder or a store prefix) of a format on the
# cluster, from a work folder, and waits for it; its failure raised as it came.
RunProbe = Callable[[Path | S3Url, str, Path], None]


def check_reads(
    rest_url: str, file_format: str, work_dir: Path, run_probe: RunProbe, store_at: list[S3Url]
) -> None:
    """Can the cluster at `rest_url` read `file_format`? A tiny bounded job over a one-event
    file of that format must finish; one line naming what the cluster lacks if not.

    From files, the probe is written into the work directory, which every TaskManager reaches
    as it reaches the dataset. On a store (`store_at`: the run's store URLs), the probe is put
    on the store and read from there only (`store.reach_probe`): the cluster needs no disk
    shared with this runner, and the one job tries both its format jars and its own S3
    plugin and settings."""
    with tempfile.TemporaryDirectory(prefix="nexmark-probe-") as local:
        probe = Path(local if store_at else work_dir) / f"format-check-{file_format}"
        write_probe_file(probe, file_format)
        try:
            if store_at:
                _read_from_store(rest_url, probe, file_format, work_dir, run_probe, store_at)
                return
            try:
                run_probe(probe, file_format, work_dir)
            except Exception as exc:  # noqa: BLE001 - the cluster's failure is the answer
                raise EngineError(_jars_missing(rest_url, file_format, java_message(exc))) from None
        finally:
            shutil.rmtree(probe, ignore_errors=True)


def _jars_missing(rest_url: str, file_format: str, why: str) -> str:
    needed = jars.group_jars(jars.FORMAT_GROUPS[file_format])
    return (
        f"the Flink cluster at {rest_url} cannot read {file_format} files ({why}): its lib/ on "
        f"every JobManager and TaskManager needs {', '.join(j.file_name for j in needed)} "
        f"(pinned in {jars.PINNED.name}; docs/engines.md)"
    )


# A cluster's failure to read the store, not the format, names one of these.
_STORE_SIGNS = ("s3", "filesystem", "file system", "credential", "bucket", "endpoint", "host")


def _read_from_store(
    rest_url: str,
    probe: Path,
    file_format: str,
    work_dir: Path,
    run_probe: RunProbe,
    store_at: list[S3Url],
) -> None:
    """The probe put on the store (under the checkpoints' prefix, else the dataset's bucket)
    and read there by a bounded job on the cluster, so that the TaskManagers' own S3 plugin,
    settings and format jars are what is tried, not this client's. A missing class that
    does not name the store is the format's jars; anything else, the store."""
    where = store.reach_probe(store_at)
    for found in probe.iterdir():
        storage_files.upload(found, where / found.name)
    try:
        run_probe(where, file_format, work_dir)
    except Exception as exc:  # noqa: BLE001 - the cluster's failure is the answer
        why = java_message(exc)
        missing_class = "ClassNotFound" in why or "NoClassDefFound" in why
        if missing_class and not any(sign in why.lower() for sign in _STORE_SIGNS):
            raise EngineError(_jars_missing(rest_url, file_format, why[:300])) from None
        raise EngineError(
            f"the Flink cluster at {rest_url} cannot read {where} from the store "
            f"({why[:300]}): every JobManager and TaskManager needs "
            f"plugins/{s3_access.PLUGIN}/ and the s3.* options of this store "
            "(docs/object-store.md)"
        ) from None
    finally:
        storage_files.remove_tree(where)

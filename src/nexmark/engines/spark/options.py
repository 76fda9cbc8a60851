"""Spark options: the session confs, the engine's own knobs, and what a job is set up with.

The `[spark]` settings section holds both: keys starting with `spark.` are session confs passed
verbatim (`"cores"` and `"machine"` resolved here), `nexmark.*` keys are this engine's knobs.
"""

from __future__ import annotations

import os
from pathlib import Path

import psutil

from nexmark.durations import parse_seconds
from nexmark.engines.spec import JobSetup, JobSpec
from nexmark.errors import UsageError
from nexmark.settings import Settings

TRIGGER_KEY = "nexmark.trigger.interval"
SLICES_PER_BATCH_KEY = "nexmark.slices.per.batch"
SLICE_EVENTS_KEY = "nexmark.slice.events"
CHECK_RESTORE_KEY = "nexmark.check.restored.state"
MASTER_KEY = "spark.master"
PARTITIONS_KEY = "spark.sql.shuffle.partitions"
# Set by the engine, per job; recorded with the job's options.
MAX_FILES_KEY = "nexmark.maxFilesPerTrigger"
MAX_OFFSETS_KEY = "nexmark.maxOffsetsPerTrigger"  # a Kafka source's per-batch bound
CHECKPOINT_KEY = "nexmark.checkpointLocation"
OUTPUT_MODE_KEY = "nexmark.outputMode"
RESTORE_KEY = "nexmark.restoreFrom"

GIB = 1024**3


def cores() -> int:
    return os.cpu_count() or 1


def driver_memory(total_bytes: int, n_cores: int) -> str:
    """ "machine": min(1/3 of the machine's memory, 4 GiB per core), in MiB.

    In local mode the driver JVM runs every task; its heap holds Spark's execution and storage
    memory, while RocksDB (the state store) allocates natively outside it, as do the page cache
    of the dataset and the Python harness: hence a third, not Flink's two thirds.
    """
    return f"{min(total_bytes // 3, 4 * GIB * n_cores) // (1024 * 1024)}m"


DRIVER_JAVA_OPTIONS_KEY = "spark.driver.extraJavaOptions"
LOG4J2_FILE = Path(__file__).parents[2] / "config" / "spark-log4j2.properties"
# On a cluster the driver only plans batches and reads progress; the executors hold the state.
CLUSTER_DRIVER_MEMORY = "2g"


def session_confs(
    settings: Settings, total_bytes: int | None = None, master: str | None = None
) -> dict[str, str]:
    """The `spark.*` confs of the session, with "cores" and "machine" resolved (`master`, if
    given, replaces `spark.master`)."""
    n = cores()
    section = dict(settings.section("spark"))
    if master:
        section[MASTER_KEY] = master
    local = str(section.get(MASTER_KEY, "local")).startswith("local")
    confs: dict[str, str] = {}
    for key, value in section.items():
        if not key.startswith("spark."):
            continue
        if value == "cores":
            value = str(n)
        elif key == MASTER_KEY and value == "local[cores]":
            value = f"local[{n}]"
        elif key == "spark.driver.memory" and value == "machine" and not local:
            value = CLUSTER_DRIVER_MEMORY
        elif key == "spark.driver.memory" and value == "machine":
            value = driver_memory(total_bytes or psutil.virtual_memory().total, n)
        confs[key] = value
    # The driver JVM logs errors only (Spark's default profile prints WARN lines into the
    # progress display); a user's own Java options replace this.
    confs.setdefault(DRIVER_JAVA_OPTIONS_KEY, f"-Dlog4j2.configurationFile={LOG4J2_FILE.as_uri()}")
    return confs


def knobs(settings: Settings) -> dict[str, str]:
    """The engine's own `nexmark.*` knobs."""
    return {k: v for k, v in settings.section("spark").items() if k.startswith("nexmark.")}


def local_threads(master: str) -> int | None:
    """N of `local[N]` (`local` = 1, `local[*]` = the cores); None for a cluster master."""
    if master == "local":
        return 1
    if master.startswith("local[") and master.endswith("]"):
        inner = master[len("local[") : -1].split(",")[0]
        return cores() if inner == "*" else int(inner)
    return None


def parallelism(confs: dict[str, str]) -> int:
    value = confs.get(PARTITIONS_KEY, "200")
    try:
        n = int(value)
    except ValueError:
        raise UsageError(f"{PARTITIONS_KEY} must be a whole number, got {value!r}") from None
    if n < 1:
        raise UsageError(f"{PARTITIONS_KEY} must be at least 1, got {n}")
    return n


def trigger_seconds(settings: Settings, spec: JobSpec) -> float:
    """The processing-time trigger interval: the spec's checkpoint interval, else the knob."""
    if spec.checkpoint_interval_s is not None:
        return float(spec.checkpoint_interval_s)
    text = knobs(settings).get(TRIGGER_KEY, "100 ms")
    return parse_seconds(text, f"spark.{TRIGGER_KEY}")


def slices_per_batch(settings: Settings) -> int:
    text = knobs(settings).get(SLICES_PER_BATCH_KEY, "1")
    try:
        n = int(text)
    except ValueError:
        n = 0
    if n < 1:
        raise UsageError(f"spark.{SLICES_PER_BATCH_KEY} must be a whole number >= 1, got {text!r}")
    return n


def slice_events(settings: Settings) -> int:
    """`nexmark.slice.events`: events per time slice of a dataset generated for Spark."""
    text = knobs(settings).get(SLICE_EVENTS_KEY, "500000")
    try:
        per_slice = int(text)
    except ValueError:
        per_slice = 0
    if per_slice < 1:
        raise UsageError(f"spark.{SLICE_EVENTS_KEY} must be a whole number >= 1, got {text!r}")
    return per_slice


def dataset_slices(settings: Settings, part_events: int) -> int:
    """Time slices per part so that a slice of the smaller part holds `nexmark.slice.events`."""
    return max(1, -(-part_events // slice_events(settings)))


def batch_events(settings: Settings) -> int:
    """Events of an unrated micro-batch: `nexmark.slices.per.batch` slices of
    `nexmark.slice.events` (what a rate-fed batch catching up may hold at most)."""
    return slice_events(settings) * slices_per_batch(settings)


def restore_check_mode(settings: Settings) -> str:
    """When the restore proof reads the state store: "after" the phase, "before" the restored
    query starts (inside the recovery time), or "off"."""
    mode = knobs(settings).get(CHECK_RESTORE_KEY, "after").strip().lower()
    if mode not in ("after", "before", "off"):
        raise UsageError(f"spark.{CHECK_RESTORE_KEY} must be after, before or off, got {mode!r}")
    return mode


def job_setup(settings: Settings, spec: JobSpec, confs: dict[str, str] | None = None) -> JobSetup:
    """What one streaming query runs with.

    Parallelism is the shuffle partitions (every stateful operator's partitions; the file
    source splits its files as it likes). The checkpoint interval is the trigger interval:
    Spark commits offsets and state at every micro-batch. Spark SQL has no state TTL.
    """
    confs = dict(confs if confs is not None else session_confs(settings))
    if spec.parallelism:
        confs[PARTITIONS_KEY] = str(spec.parallelism)
    readers = parallelism(confs)
    interval = trigger_seconds(settings, spec)
    options = {**confs, **knobs(settings)}
    options[TRIGGER_KEY] = f"{round(interval * 1000)} ms"
    options[CHECKPOINT_KEY] = str((spec.work_dir / "checkpoint").resolve())
    if spec.restore is not None:
        options[RESTORE_KEY] = spec.restore.ref
    return JobSetup(readers, interval or None, None, options)

"""Flink options: for the embedded cluster, for each job, and for a remote target."""

from __future__ import annotations

import urllib.parse

from nexmark.durations import format_seconds, parse_seconds
from nexmark.engines.flink.ddl import TIME_ZONE
from nexmark.engines.flink.memory import SIZING_KEYS, TaskManagerMemory
from nexmark.engines.flink.state_metrics import metric_options
from nexmark.engines.spec import JobSetup, JobSpec, StateTtl
from nexmark.errors import EngineError, UsageError
from nexmark.settings import Settings
from nexmark.workload import queries

# Cluster-side only: these must not be passed to jobs submitted to a remote cluster.
_REST_KEYS = ("rest.address", "rest.port", "rest.bind-address", "execution.target")


def parse_rest_url(url: str) -> tuple[str, int]:
    """Host and port of a REST URL (`http://host:8081`)."""
    parsed = urllib.parse.urlparse(url if "://" in url else f"http://{url}")
    if not parsed.hostname:
        raise EngineError(f"not a Flink REST address: {url!r}")
    return parsed.hostname, parsed.port or 8081


def remote_options(rest_url: str) -> dict[str, str]:
    """What makes PyFlink submit to the cluster at `rest_url`."""
    host, port = parse_rest_url(rest_url)
    return {"execution.target": "remote", "rest.address": host, "rest.port": str(port)}


def slots(flink: dict[str, str]) -> int:
    """Task slots of the embedded cluster: the configured slots, else the default parallelism."""
    value = flink.get("taskmanager.numberOfTaskSlots") or flink.get("parallelism.default") or "1"
    try:
        return max(1, int(value))
    except ValueError:
        raise EngineError(f"not a number of slots: {value!r}") from None


def without_sizing(flink: dict[str, str]) -> dict[str, str]:
    """The options without the TaskManager's memory sizing (a cluster's, never a job's)."""
    return {k: v for k, v in flink.items() if k not in SIZING_KEYS}


def cluster_options(
    flink: dict[str, str], rest_port: int, memory: TaskManagerMemory | None = None
) -> dict[str, str]:
    """Options of the embedded cluster: the settings, its memory sizes, REST on a local port."""
    cluster = {k: v for k, v in without_sizing(flink).items() if k not in _REST_KEYS}
    if memory is not None:
        cluster.update(memory.cluster_options())
    cluster.update(
        {"rest.address": "127.0.0.1", "rest.bind-address": "127.0.0.1", "rest.port": str(rest_port)}
    )
    return cluster


def ttl_value(ttl: StateTtl) -> str:
    """Flink's form of a state TTL: "0 ms" means state never expires."""
    if ttl.seconds is None:
        return "0 ms"
    text = format_seconds(ttl.seconds)  # "5 min", "3 s", "500 ms": forms Flink reads
    return text if text.split()[0].isdigit() else f"{round(ttl.seconds * 1000)} ms"


def state_ttl(settings: Settings, spec: JobSpec) -> StateTtl | None:
    """The job's TTL: the JobSpec's if given, else the query's `[state_ttl]` entry, else
    `[state_ttl] default`; None when the settings name none."""
    if spec.state_ttl is not None:
        return spec.state_ttl
    text = settings.state_ttl(spec.query)
    return None if text is None else StateTtl.parse(text, f"state_ttl.{spec.query}")


def job_options(settings: Settings, spec: JobSpec) -> dict[str, str]:
    """Every option of one job: the settings (defaults, --config, --set), then what the JobSpec
    asks for explicitly (a CLI flag such as --parallelism). The cluster address is added at
    submission.

    Args:
        settings: Effective settings.
        spec: The job.
    """
    flink = without_sizing(settings.flink_options())
    job = {k: v for k, v in flink.items() if k not in _REST_KEYS}
    # The state backend's own measure of the live state, sampled with the progress.
    job.update(metric_options(job))
    job["pipeline.name"] = f"nexmark {spec.query}"
    # The plan must not depend on the part's size: the restored job has to map every operator
    # of the warm-up job, and file-size statistics can change the plan (seen on q4).
    job["table.optimizer.source.report-statistics-enabled"] = "false"
    # The source's TIMESTAMP(3) columns are computed from epoch milliseconds through this
    # session time zone (ddl.time_expression): UTC gives the times the generator wrote.
    job["table.local-time-zone"] = TIME_ZONE
    job["execution.checkpointing.dir"] = (
        str(spec.checkpoint_dir)  # a prefix of its own on the store
        if spec.checkpoint_dir is not None
        else (spec.work_dir / "checkpoints").resolve().as_uri()
    )
    if spec.parallelism:
        job["parallelism.default"] = str(spec.parallelism)
    if spec.checkpoint_interval_s is not None:
        job["execution.checkpointing.interval"] = f"{round(spec.checkpoint_interval_s * 1000)} ms"
    ttl = state_ttl(settings, spec)
    if ttl is not None:
        job["table.exec.state.ttl"] = ttl_value(ttl)
    if spec.restore is not None:
        job["execution.state-recovery.path"] = spec.restore.ref
        claim = job.get(CLAIM_MODE_KEY, NO_CLAIM)
        if claim.strip().upper() != NO_CLAIM:
            raise UsageError(
                f"flink.{CLAIM_MODE_KEY} must be {NO_CLAIM}, got {claim}: the benchmark phase "
                "restores the phase checkpoint once per repeat, and a claimed checkpoint is "
                "deleted once the restored job's own checkpoints subsume it"
            )
        # Flink's default, stated: the snapshot stays the user's, and the restored job's first
        # checkpoint is a full one, so nothing of its later ones depends on the snapshot.
        job[CLAIM_MODE_KEY] = NO_CLAIM
    return job


CLAIM_MODE_KEY = "execution.state-recovery.claim-mode"
NO_CLAIM = "NO_CLAIM"


def job_setup(settings: Settings, spec: JobSpec) -> JobSetup:
    """The job's options, and what they mean for the protocol (read the way Flink reads them).

    Raises:
        UsageError: An option the protocol depends on is not a value Flink would accept.
    """
    options = job_options(settings, spec)
    parallelism = options.get("parallelism.default", "1")
    try:
        readers = int(parallelism)
    except ValueError:
        raise UsageError(
            f"flink.parallelism.default must be a whole number, got {parallelism!r}"
        ) from None
    if readers < 1:
        raise UsageError(f"flink.parallelism.default must be at least 1, got {readers}")
    interval = options.get("execution.checkpointing.interval")
    interval_s = (
        parse_seconds(interval, "flink.execution.checkpointing.interval") if interval else None
    )
    ttl = options.get("table.exec.state.ttl")
    ttl_s = parse_seconds(ttl, "flink.table.exec.state.ttl") if ttl else None
    bound = state_bound(spec.query, ttl_s or None)
    return JobSetup(readers, interval_s or None, ttl_s or None, options, bound)


def state_bound(query: str, ttl_s: float | None) -> str | None:
    """What bounds a query's state on Flink: nothing to bound, its windows, or the state TTL
    (which expires every other key's state, windowed operators aside)."""
    if query not in {q.name for q in queries.REGISTERED}:
        return None  # the source-only job
    kind = queries.get(query).state
    if kind.startswith("none"):
        return "no state"
    if kind.startswith("pattern"):  # MATCH_RECOGNIZE: its operator has no state TTL
        within = (
            "WITHIN drops partial matches 5 s after their first row; " if "within" in kind else ""
        )
        return (
            f"its partial matches: {within}an ended match or a dead branch frees them "
            "(the state TTL does not apply to MATCH_RECOGNIZE)"
        )
    if kind == "lookup":
        return "the side table (10,000 rows) and the watermark (temporal join)"
    if "bounded" in kind:
        return "its windows: the watermark closes and drops them"
    if ttl_s is not None:
        return f"state TTL {format_seconds(ttl_s)} (processing time)"
    return "nothing: grows (no state TTL)"


# Failover runs only (docs/failover.md): a failed job restarts from its latest checkpoint. The
# recommended setup says "none" (a failure fails the query); any restart option set in the
# settings wins over these.
FAILOVER_RESTART = {
    "restart-strategy.type": "fixed-delay",
    "restart-strategy.fixed-delay.attempts": "3",
    "restart-strategy.fixed-delay.delay": "1 s",
}
# Flink's own defaults, recorded so a result says what shaped its detection time.
HEARTBEAT_DEFAULTS = {"heartbeat.interval": "10 s", "heartbeat.timeout": "50 s"}


# Failover runs on small data checkpoint every second or so; a restarted job restores its
# latest checkpoint, and a few more kept let the run's account of the restart name the one
# it restored. (The phase checkpoint is a savepoint: no number retained ever deletes it.)
FAILOVER_RETAINED = 10
# How many completed checkpoints a job keeps. The JobManager's configuration decides, not the
# job's options; clusters the runner starts set FAILOVER_RETAINED.
RETAINED_KEY = "execution.checkpointing.num-retained"
# A standalone ResourceManager past its start-up period fails a job's slot requests at once
# when the registered TaskManagers cannot serve them, and the restart strategy's few attempts
# are then spent before the replacement TaskManager (a JVM starting on a busy machine) has
# registered: the job failed with "Could not acquire the minimum required resources" once the
# failover cluster had run past the default period (slot.request.timeout, 5 min). Held longer,
# the restarted job's requests wait for the replacement, as a cluster with a standby worker
# would serve them.
STARTUP_KEY = "resourcemanager.standalone.start-up-time"
FAILOVER_STARTUP = "24 h"


def failover_job_options(flink: dict[str, str]) -> dict[str, str]:
    """The restart strategy of a failover run's jobs (the settings' own, unless it is none)
    and enough retained checkpoints for the phase checkpoint to outlive short intervals. The
    state metrics stay on: what once slowed q4's failover verification past its timeout was
    Flink's REST metrics freezing after the kill (`METRIC_WAIT_KEY`), not the metrics."""
    retained = max(FAILOVER_RETAINED, int(flink.get(RETAINED_KEY, 1)))
    out = {RETAINED_KEY: str(retained)}
    if flink.get("restart-strategy.type", "none") not in ("none", "off", "disable"):
        return {**out, **{k: v for k, v in flink.items() if k.startswith("restart-strategy.")}}
    chosen = {k: v for k, v in flink.items() if k.startswith("restart-strategy.fixed-delay.")}
    return {**out, **FAILOVER_RESTART, **chosen}


def local_cluster_options(flink: dict[str, str], memory: TaskManagerMemory) -> dict[str, str]:
    """Every process's options in a failover run's local cluster: the settings (heartbeat
    included), the TaskManager sized as the embedded one would be (Flink derives the parts
    from the process size), its slots."""
    cluster = {k: v for k, v in without_sizing(flink).items() if k not in _REST_KEYS}
    cluster.update(
        {
            "taskmanager.memory.process.size": f"{memory.process // (1 << 20)}m",
            "taskmanager.numberOfTaskSlots": str(slots(flink)),
            "jobmanager.memory.process.size": flink.get("jobmanager.memory.process.size", "1g"),
            METRIC_WAIT_KEY: flink.get(METRIC_WAIT_KEY, METRIC_WAIT),  # a TaskManager is killed
            # The JobManager's, not the job's, decides (RETAINED_KEY): as the jobs ask.
            RETAINED_KEY: failover_job_options(flink)[RETAINED_KEY],
            STARTUP_KEY: flink.get(STARTUP_KEY, FAILOVER_STARTUP),
        }
    )
    return cluster


def failover_recorded(flink: dict[str, str]) -> dict[str, str]:
    """What shapes a failover's times, as the result records it (explicit or Flink's default)."""
    recorded = {f"nexmark.failover.{k}": flink.get(k, v) for k, v in HEARTBEAT_DEFAULTS.items()}
    recorded.update({f"nexmark.failover.{k}": v for k, v in failover_job_options(flink).items()})
    recorded[f"nexmark.failover.{STARTUP_KEY}"] = flink.get(STARTUP_KEY, FAILOVER_STARTUP)
    recorded["nexmark.failover.replacement"] = "a new TaskManager started right after the kill"
    return recorded


# The REST API serves a job's status from a cache this old at most; the runner links an open
# source's files in once it sees every task running (workload/feed.py), so on a cluster with a slow
# cache the benchmark phase's Time runs that long before the first read.
STATUS_CACHE_KEY = "web.refresh-interval"
STATUS_CACHE_DEFAULT_S = 3.0  # Flink's default
STATUS_CACHE_MAX_S = 0.1


# Flink's metric fetcher starts no new fetch of the REST metrics until every query of the
# previous one has answered (MetricFetcherImpl.update, FLINK-29134), and it waits `web.timeout`
# (Flink: 10 min) for each. A query sent to a TaskManager that has just died waits that long:
# every metric the runner reads (events, cores, watermarks) freezes for it. Measured on the
# local cluster: a TaskManager killed, the JobManager's own CPU metric unchanged for 90 s and
# more; with 15 s, for 15 s. The clusters the runner starts set it; a remote one is told.
METRIC_WAIT_KEY = "web.timeout"
METRIC_WAIT_DEFAULT_S = 600.0  # Flink's default
METRIC_WAIT = "15 s"
METRIC_WAIT_MAX_S = 30.0


def _long_duration_note(
    cluster: dict[str, str], key: str, default_s: float, max_s: float, effect: str
) -> str | None:
    """A note on a cluster's duration option `key` when it is above `max_s` (a bare number is
    ms; unset, Flink's `default_s`): its value, then `effect`. None when it is short, or not
    ours to judge (Flink itself reads the cluster's configuration)."""
    value = cluster.get(key)
    if value is None:
        seconds = default_s
    else:
        text = value.strip()
        try:
            seconds = int(text) / 1000 if text.isdigit() else parse_seconds(text, key)
        except UsageError:
            return None
    if seconds <= max_s:
        return None
    default = "" if value is not None else " (Flink default)"
    return f"the cluster's {key} is {format_seconds(seconds)}{default}: {effect}"


def metric_wait_note(cluster: dict[str, str]) -> str | None:
    """What a remote cluster's `web.timeout` does to a failover run, when it is long."""
    return _long_duration_note(
        cluster, METRIC_WAIT_KEY, METRIC_WAIT_DEFAULT_S, METRIC_WAIT_MAX_S,
        "once a TaskManager dies, Flink's REST metrics (events, cores) freeze that long; set "
        f"it to {METRIC_WAIT} in the cluster's configuration",
    )  # fmt: skip


def status_cache_note(cluster: dict[str, str]) -> str | None:
    """What a remote cluster's status cache does to the measurements, when it is too slow."""
    return _long_duration_note(
        cluster, STATUS_CACHE_KEY, STATUS_CACHE_DEFAULT_S, STATUS_CACHE_MAX_S,
        "the runner sees a job running up to that late, and a benchmark phase's Time can run "
        "that long before its first read; set it to 50 ms in the cluster's configuration",
    )  # fmt: skip

"""Whether a results directory may take this run's results (`--resume`), said before any work.

A directory holds one run: resuming it with another dataset (events, seed, warm-up share,
format, event rate), another engine or another setup (the protocol's options, or the job
options the engine resolves from its settings) would mix results that do not compare. The
first check reads only the options; the second, once the engine has resolved every job's setup,
compares those with what the finished queries recorded. Either names each difference in one
line; nothing in the directory is touched.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from nexmark.engines.base import JobSetup
from nexmark.errors import NexmarkError, UsageError
from nexmark.results.query_result import QueryResult

# The recorded options that change what a result means (the queries, the suite's name and the
# per-query timeout may change between sittings: a timed-out query retried with more time).
_DATASET = ("events", "seed", "warmup_fraction", "format", "event_rate")
_SETUP = (
    "parallelism",
    "checkpoint_interval_s",
    "state_ttl",
    "repeat",
    "runs",
    "source",
    "rate",
    "failover",
    "failover_at",
    "sustainable",
)
# Recorded only when set (`RunOptions.recorded`): absent means none.
_ABSENT_IS_NONE = ("event_rate", "sustainable")
# Job options that differ between sittings without changing the setup: where the REST API
# listens, the job's name, and every path (checkpoints, the restore, the feed).
_PER_SITTING = ("rest.", "pipeline.name", "execution.target")


def check_results_dir(results: list[QueryResult], results_dir: Path, resume: bool) -> None:
    """A directory with results is continued only when asked (`--resume`), never overwritten."""
    if results and not resume:
        raise NexmarkError(
            f"{results_dir} already holds results; pass --resume to continue that run "
            "or choose another --results directory"
        )


def option_differences(
    results: list[QueryResult],
    engine: str | None,
    now: dict,
    events: dict[str, int] | None = None,
) -> list[str]:
    """'--events 200,000 there, 10,000 now' for each recorded option (`setup.options`; `now`:
    this run's, as it would record them) and the engine that this run would change. Options
    an older run did not record are not compared. `events`: the events each query reads where
    a suite's queries read datasets of different sizes (`Suite.sittings`), compared per query."""
    if not results:
        return []
    diffs = []
    engines = sorted({r.engine for r in results})
    if engine is not None and engines != [engine]:
        diffs.append(f"engine {', '.join(engines)} there, {engine} now")
    recorded = results[0].setup.options
    if events is not None:
        diffs += _events_differences(results, events)
    for name in (*_DATASET, *_SETUP):
        if name == "events" and events is not None:
            continue  # per query, above
        if name not in recorded and name not in _ABSENT_IS_NONE:
            continue  # not recorded by the version that ran it
        if recorded.get(name) != now.get(name):
            flag = "--" + name.removesuffix("_s").replace("_", "-")
            diffs.append(f"{flag} {_shown(recorded.get(name))} there, {_shown(now.get(name))} now")
    return diffs


def _events_differences(results: list[QueryResult], events: dict[str, int]) -> list[str]:
    """Each finished query's events against those it would read now (a query no longer asked
    for reads what it read: another sitting's size is no difference)."""
    diffs = []
    for result in results:
        before = result.setup.options.get("events")
        now = events.get(result.query, before)
        if before is not None and before != now:
            diffs.append(f"--events {_shown(before)} there, {_shown(now)} now ({result.query})")
    return diffs[:1]  # one query says it; the rest differ alike


def setup_differences(results: list[QueryResult], setups: dict[str, JobSetup]) -> list[str]:
    """The job options of each finished query as recorded (its warm-up job) against what the
    engine resolves for it now, on the options both name."""
    for result in results:
        setup = setups.get(result.query)
        recorded = result.job_options.get("warmup")
        if setup is None or not recorded:
            continue
        return [
            f"{key} {recorded[key]} there, {setup.options[key]} now"
            for key in sorted(set(recorded) & set(setup.options))
            if recorded[key] != setup.options[key] and _compared(key, recorded[key])
        ]
    return []


def _compared(key: str, value: str) -> bool:
    return not key.startswith(_PER_SITTING) and "/" not in value


def refuse_if_different(results_dir: Path, diffs: list[str]) -> None:
    if diffs:
        raise UsageError(
            f"{results_dir} holds a run with another dataset, engine or setup ("
            + "; ".join(diffs)
            + "): resume it as it was run, or choose another --results directory"
        )


def _shown(value: Any) -> str:
    if isinstance(value, int) and not isinstance(value, bool):
        return f"{value:,}"
    return "unset" if value is None else str(value)

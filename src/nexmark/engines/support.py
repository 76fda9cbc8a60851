"""What every engine package needs and none owns: a free local port, the CPU time of a process
tree, a wait polled against a deadline, the planner's verdict on each query, asked once, and
a job's options with their secrets masked.

It lies beside the engine packages (they import nothing of each other) and imports nothing
of theirs.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable
from typing import TypeVar

import psutil

from nexmark.errors import QueryTimeoutError, UnsupportedQueryError

T = TypeVar("T")


# An option whose name says it holds a secret (Flink's `s3.secret-key`, Spark's
# `spark.hadoop.fs.s3a.secret.key`, any the user gives with --set) is never recorded.
_SECRET = "secret"
MASK = "******"


def redacted(options: dict[str, str]) -> dict[str, str]:
    """The options as a result may record them: every secret masked."""
    return {k: (MASK if _SECRET in k.lower() else v) for k, v in options.items()}


def process_tree_cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of process `pid` and all of its live descendants (e.g. a
    JVM's `pyspark.daemon`); 0 for a process that is gone."""
    try:
        root = psutil.Process(pid)
        processes = [root, *root.children(recursive=True)]
    except psutil.NoSuchProcess:
        return 0.0
    total = 0.0
    for process in processes:
        with contextlib.suppress(psutil.NoSuchProcess):  # gone between the listing and the read
            times = process.cpu_times()
            total += times.user + times.system
    return total


def poll_until(
    check: Callable[[], T],
    timeout_s: float,
    interval_s: float,
    what: str | Callable[[], str] = "",
    error: Callable[[str], Exception] | None = QueryTimeoutError,
    on_timeout: Callable[[], object] | None = None,
) -> T:
    """Call `check` until it returns a true value, and return that value: it is called at
    once, then every `interval_s`, and once more at the deadline `timeout_s` from now.

    At the deadline `on_timeout` runs (e.g. to stop what did not come up), then `error(what)`
    is raised (`what` the whole message, or what makes it from the last check's state); with
    `error` None the wait gives up quietly and returns the last (false) value. An exception
    of `check` ends the wait as it comes.
    """
    deadline = time.monotonic() + timeout_s
    while True:
        found = check()
        if found:
            return found
        if time.monotonic() > deadline:
            if on_timeout is not None:
                on_timeout()
            if error is None:
                return found
            raise error(what() if callable(what) else what)
        time.sleep(interval_s)


class UnsupportedQueries:
    """The engine's reason, per query, why it cannot run it (None: it can), asked of its
    planner once: the answer stands for the engine's life, and a job of a refused query is
    refused before anything starts.

    Args:
        engine: The engine's name as its messages give it ("Flink").
        explain: Asks the planner about one query (by its name): its reason, or None.
    """

    def __init__(self, engine: str, explain: Callable[[str], str | None]) -> None:
        self.engine = engine
        self._explain = explain
        self._reasons: dict[str, str | None] = {}

    def reason(self, name: str) -> str | None:
        """The planner's reason for query `name` (asked at its first call only)."""
        if name not in self._reasons:
            self._reasons[name] = self._explain(name)
        return self._reasons[name]

    def refuse_known(self, name: str) -> None:
        """UnsupportedQueryError for a query the planner has already refused; nothing for any
        other (not asked yet, or runnable)."""
        reason = self._reasons.get(name)
        if reason:
            raise UnsupportedQueryError(f"{self.engine} cannot run {name}: {reason}")

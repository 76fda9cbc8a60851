"""The spawned processes that write a dataset's files beside the process generating it: each
takes file jobs from a queue until an end mark, and sends its progress, its files' results
and its errors back on another.
"""

from __future__ import annotations

import multiprocessing
import pickle
import queue
import signal
from collections.abc import Callable

from nexmark.errors import DatasetError
from nexmark.workload.dataset import DatasetParams

# Writes one job's file (`writer._write_job`: params, job, report of events written) and
# returns its result; a module-level function, so that a spawned process can be handed it.
WriteJob = Callable[..., dict]


class Workers:
    """Spawned processes taking file jobs from a queue and reporting progress, results and
    errors back. A worker that dies (killed, out of memory) fails the run at once instead of
    leaving it waiting; leaving the `with` block, by error or Ctrl-C, terminates them all."""

    def __init__(
        self, params: DatasetParams, count: int, jobs: list, advance, write_job: WriteJob
    ) -> None:
        ctx = multiprocessing.get_context("spawn")  # no fork: the parent may run threads (Rich)
        self._advance = advance
        self._jobs, self._events = ctx.Queue(), ctx.Queue()
        for job in jobs:
            self._jobs.put(job)
        for _ in range(count + 1):  # an end mark for every worker, and one for this process
            self._jobs.put(None)
        self._expected = len(jobs)
        self._results: dict = {}
        self._mine = 0  # jobs this process took
        # Workers start with Ctrl-C ignored (inherited across exec), even while still importing:
        # the parent handles it and terminates them.
        handler = signal.signal(signal.SIGINT, signal.SIG_IGN)
        try:
            self._processes = [
                ctx.Process(
                    target=_worker,
                    args=(params, self._jobs, self._events, write_job),
                    daemon=True,
                )
                for _ in range(count)
            ]
            for process in self._processes:
                process.start()
        finally:
            signal.signal(signal.SIGINT, handler)

    def __enter__(self) -> Workers:
        return self

    def __exit__(self, *exc) -> None:
        for process in self._processes:
            if process.is_alive():
                process.terminate()  # SIGTERM: at once on errors and Ctrl-C
        for process in self._processes:
            process.join()
        for q in (self._jobs, self._events):
            q.cancel_join_thread()  # never block exiting on undelivered jobs
            q.close()

    def next_job(self):
        """The next file for this process to write, or None when every file is taken."""
        job = self._jobs.get()
        if job is not None:
            self._mine += 1
        return job

    def advance_and_poll(self, events: int) -> None:
        """Progress of this process; also passes on the workers' reports and errors."""
        self._advance(events)
        self._poll(timeout=0.0)

    def wait(self) -> dict:
        """Wait for the workers' files: {layout: result}."""
        while len(self._results) + self._mine < self._expected:
            self._poll(timeout=0.2)
        return self._results

    def _poll(self, timeout: float) -> None:
        try:
            message = self._events.get(timeout=timeout) if timeout else self._events.get_nowait()
        except queue.Empty:
            self._check_alive()
            return
        while True:
            kind, *body = message
            if kind == "progress":
                self._advance(body[0])
            elif kind == "done":
                self._results[body[0]] = body[1]
            else:
                raise body[0]  # a worker's error, re-raised here
            try:
                message = self._events.get_nowait()
            except queue.Empty:
                return

    def _check_alive(self) -> None:
        for process in self._processes:
            if process.exitcode not in (None, 0):
                raise DatasetError(
                    f"a dataset writer process died (exit code {process.exitcode}; "
                    "killed, or out of memory?)"
                )


def _worker(params: DatasetParams, jobs, events, write_job: WriteJob) -> None:
    """A spawned writer: writes files from `jobs` until the end mark, reporting on `events`."""
    try:
        while (job := jobs.get()) is not None:
            result = write_job(params, job, lambda k: events.put(("progress", k)))
            events.put(("done", job[0], result))
    except Exception as exc:
        try:
            pickle.dumps(exc)
        except Exception:
            exc = DatasetError(f"{type(exc).__name__}: {exc}")
        events.put(("error", exc))

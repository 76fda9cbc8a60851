"""Ctrl-C and SIGTERM end a command the same way: the running query stops, its engine closes
(no JVM is left behind, nor its scratch directory), and the results that finished stay.

Both signals raise KeyboardInterrupt in the main thread; the exit code says which one came
(130 for SIGINT, 143 for SIGTERM, as a shell reports a process ended by either).
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Callable, Iterator

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)
_received: list[int] = []


def _raise_interrupt(signum: int, frame: object) -> None:  # noqa: ARG001 - handler signature
    _received.append(signum)
    raise KeyboardInterrupt


def handle_terminate() -> None:
    """SIGTERM (what `kill`, `timeout` and CI runners send) unwinds like Ctrl-C, instead of
    ending Python at once with every `finally` skipped."""
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, _raise_interrupt)


def exit_code() -> int:
    """128 + the last stop signal received; 130 (SIGINT) when none was seen by our handlers."""
    return 128 + (_received[-1] if _received else signal.SIGINT)


@contextlib.contextmanager
def noted() -> Iterator[Callable[[], bool]]:
    """Note every stop signal while the block runs, besides raising KeyboardInterrupt as usual.

    A KeyboardInterrupt raised inside a library's finalizer is printed and dropped ("Exception
    ignored in ..."; py4j's finalizers do this), and the call it broke then fails as if the
    engine had refused: the caller asks `interrupted()` afterwards and stops anyway.
    """
    if threading.current_thread() is not threading.main_thread():
        yield lambda: False
        return
    start = len(_received)
    previous = {s: signal.signal(s, _raise_interrupt) for s in STOP_SIGNALS}
    try:
        yield lambda: len(_received) > start
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)

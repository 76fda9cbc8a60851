"""What every server and JVM the runner starts needs: a port to listen on that no other
process will take first, and a child that dies with its parent.

Used by the engines' clusters (Flink, Spark), the Kafka broker and the S3 server alike."""

from __future__ import annotations

import ctypes
import random
import signal
import socket
from pathlib import Path

# Ports the kernel hands out to outgoing connections (the local end of every connect) when
# it cannot read its own setting: Linux's default.
_EPHEMERAL_DEFAULT = (32768, 60999)
# Ports below this are left alone (well-known and registered services).
_LOWEST = 10_000
_TRIES = 64

_PR_SET_PDEATHSIG = 1
try:  # loaded here: the child between fork and exec should only make the call
    _LIBC = ctypes.CDLL("libc.so.6", use_errno=True)
except OSError:  # not Linux: a child is stopped by its owner only
    _LIBC = None


def die_with_parent() -> None:
    """`preexec_fn` of a server's process: the kernel kills it (SIGKILL) when the process
    that started it dies, even by SIGKILL, so no orphan JVM outlives the runner."""
    if _LIBC is not None:
        _LIBC.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)


def ephemeral_range() -> tuple[int, int]:
    """The kernel's range of ports for outgoing connections (inclusive)."""
    try:
        low, high = Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()
        return int(low), int(high)
    except (OSError, ValueError):
        return _EPHEMERAL_DEFAULT


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port of `host` that nothing listens on now, for a server about to start.

    Picked outside the kernel's ephemeral range where there is room: a port the kernel
    picks (bind to 0) is one it may also give, before the server binds it, to any process's
    outgoing connection as its local end. With two test workers polling REST APIs, a Spark
    master's port went so (CI of 2026-12-07). Outside that range only an explicit bind can
    take it, and a random pick makes two of ours choosing the same one unlikely."""
    low, _ = ephemeral_range()
    if low - _LOWEST >= 1000:
        pick = random.SystemRandom()
        for _ in range(_TRIES):
            port = pick.randrange(_LOWEST, low)
            if _bindable(host, port):
                return port
    with socket.socket() as sock:  # no room below the range: the kernel's pick
        sock.bind((host, 0))
        return sock.getsockname()[1]


def _bindable(host: str, port: int) -> bool:
    with socket.socket() as sock:
        try:
            sock.bind((host, port))
        except OSError:
            return False
        return True

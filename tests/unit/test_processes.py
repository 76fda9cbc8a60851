"""Ports for the servers the runner starts: never one the kernel may give an outgoing
connection meanwhile."""

from __future__ import annotations

import socket

from nexmark import processes


def test_a_free_port_is_below_the_kernels_ephemeral_range_and_bindable():
    low, high = processes.ephemeral_range()
    assert 0 < low <= high
    ports = {processes.free_port() for _ in range(20)}
    assert len(ports) > 1  # picked at random, not one fixed port
    for port in ports:
        assert 10_000 <= port < low
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", port))


def test_a_port_something_listens_on_is_never_picked(monkeypatch):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        busy = taken.getsockname()[1]
        # Only the busy port in the range, then only free ones: the busy one is skipped.
        picks = iter([busy, busy, busy + 1 if busy + 1 < 65536 else busy - 1])
        monkeypatch.setattr(processes, "ephemeral_range", lambda: (busy + 1000, 60999))
        monkeypatch.setattr(processes.random.SystemRandom, "randrange", lambda *_: next(picks))
        assert processes.free_port() != busy


def test_without_room_below_the_range_the_kernel_picks(monkeypatch):
    monkeypatch.setattr(processes, "ephemeral_range", lambda: (10_500, 60999))
    port = processes.free_port()
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", port))

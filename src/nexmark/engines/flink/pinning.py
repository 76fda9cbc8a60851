"""The engine's Python thread keeps its Java thread: its py4j connection pinned to it.

py4j serves every connection on a Java thread of its own and hands a call whichever connection
is free in its pool. When another Python thread makes a call while this one is between two
calls (a finalizer releasing a Java object, which runs in whatever thread the garbage collector
interrupts), the two swap connections, and this thread's next call runs on another Java thread.
Flink's planner keeps state in thread locals: Calcite's metadata provider is set on the thread
that created the table environment, and planning on another one fails with
`NullPointerException: metadataHandlerProvider` (seen as q1 "unsupported" in CI;
tests/engines/test_flink_embedded.py reproduces it with a second thread). With this, the
engine's thread keeps its first connection: its calls use it whenever it is free, and only a
call nested in one of its own (a finalizer during a call) takes another from the pool.
"""

from __future__ import annotations

import threading
from typing import Any


def pin_connections_to_thread(client: Any) -> None:
    """Give the calling thread (the one driving the engine) its own connection of py4j's
    `GatewayClient` (see the module); other threads share the pool as before."""
    if getattr(client, "_nexmark_pinned", False):
        return
    owner = threading.get_ident()
    lock = threading.Lock()
    own: list[Any] = []  # the owner's connection, once it has one
    free = [False]  # whether it is in the pool's place, not in use
    pooled_get, pooled_give = client._get_connection, client._give_back_connection

    def get_connection() -> Any:
        if threading.get_ident() != owner:
            return pooled_get()
        with lock:
            if own and free[0]:
                free[0] = False
                return own[0]
            if own and not own[0].is_connected:  # closed after an error: the next is its own
                own.clear()
        connection = pooled_get()
        with lock:
            if not own:
                own.append(connection)
        return connection

    def give_back_connection(connection: Any) -> None:
        with lock:
            if own and own[0] is connection:
                free[0] = True
                return
        pooled_give(connection)

    client._get_connection = get_connection
    client._give_back_connection = give_back_connection
    client._nexmark_pinned = True

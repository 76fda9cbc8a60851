"""One line from a Java exception raised through py4j, whichever engine's hook caught it.

PyFlink and PySpark each replace py4j's global error hook with their own converter, and the
last one installed wins for both: in a process that has started both engines (the contract
suite, a comparison), one engine's errors arrive as raw Py4JJavaError whose text starts with
py4j's wrapper line ("An error occurred while calling o42.explain."). Reading the Java
throwable itself gives the same message whichever hook ran.
"""

from __future__ import annotations

from typing import Any

_NOISE = (
    "at ",
    "py4j.",
    "Traceback",
    "File ",
    "JVM stacktrace:",
    "An error occurred while calling ",
)


def _throwable_text(java: Any) -> str | None:
    try:
        chain = [java.toString()]
        cause = java.getCause()
        while cause is not None and len(chain) < 20:
            chain.append("Caused by: " + cause.toString())
            cause = cause.getCause()
    except Exception:  # noqa: BLE001 - a dead gateway: keep py4j's own text
        return None
    return "\n".join(chain)


def java_message(exc: BaseException, text: str | None = None) -> str:
    """The first line and the root cause of `exc` (Java or not), at most 600 characters."""
    java = getattr(exc, "java_exception", None)
    if java is not None:
        text = _throwable_text(java) or text
    if text is None:
        text = str(exc)
    lines = [ln.strip().removeprefix(": ") for ln in text.splitlines() if ln.strip()]
    lines = [ln for ln in lines if ln and not ln.startswith(_NOISE)]
    if not lines:
        return type(exc).__name__
    causes = [ln for ln in lines if ln.startswith("Caused by: ")]
    root = causes[-1][len("Caused by: ") :] if causes else ""
    return (lines[0] if not root or root in lines[0] else f"{lines[0]} ... {root}")[:600]


# -- one error hook per gateway ---------------------------------------------------------------
#
# py4j calls the module global `py4j.java_gateway.get_return_value` for every call on every
# gateway. PyFlink and PySpark each replace it with a converter that asks *its own* JVM about
# the exception (`is_instance_of(its gateway, e, ...)`), so with both in one process the last
# installed one inspects the other JVM's objects by id in the wrong JVM. Each engine calls
# `own_errors(client)` right after its library has installed its hook: that hook is kept for
# that gateway's calls only, and a dispatcher takes the global's place.

_HOOKS: dict[int, Any] = {}


def _dispatch(answer: Any, gateway_client: Any, *args: Any, **kwargs: Any) -> Any:
    import py4j.protocol

    hook = _HOOKS.get(id(gateway_client), py4j.protocol.get_return_value)
    return hook(answer, gateway_client, *args, **kwargs)


def own_errors(gateway_client: Any) -> None:
    """Route the errors of `gateway_client`'s calls through the hook installed just now."""
    import py4j.java_gateway

    current = py4j.java_gateway.get_return_value
    if current is not _dispatch:
        _HOOKS[id(gateway_client)] = current
    py4j.java_gateway.get_return_value = _dispatch


def forget_errors(gateway_client: Any) -> None:
    """A closed gateway's hook goes (its id may be reused by a later client object)."""
    _HOOKS.pop(id(gateway_client), None)

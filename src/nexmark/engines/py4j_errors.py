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

"""A small client for Flink's REST API (stdlib only); every request has a timeout."""

from __future__ import annotations

import json
import math
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Sequence
from typing import Any

from nexmark.engines.support import poll_until
from nexmark.errors import EngineError


class RestError(EngineError):
    """Flink's REST API answered with an error status."""

    def __init__(self, message: str, status: int | None = None):
        super().__init__(message)
        self.status = status


class RestUnreachableError(EngineError):
    """Nothing answered at the REST address (cluster down or JVM gone)."""


class FlinkRest:
    """JSON over HTTP to one Flink cluster.

    Args:
        base_url: e.g. `http://127.0.0.1:8081`.
        timeout_s: Per-request timeout.
    """

    def __init__(self, base_url: str, timeout_s: float = 10.0):
        self.base_url = base_url.rstrip("/")
        self.timeout_s = timeout_s

    def request(self, method: str, path: str, body: Any = None, **params: str) -> Any:
        """Send one request; return the decoded JSON body (None when empty)."""
        raw = self._send(method, path, body, **params)
        return json.loads(raw) if raw else None

    def get_text(self, path: str) -> str:
        """GET a plain-text resource (e.g. a TaskManager's log)."""
        return self._send("GET", path).decode(errors="replace")

    def _send(self, method: str, path: str, body: Any = None, **params: str) -> bytes:
        url = self.base_url + path
        if params:
            url += "?" + urllib.parse.urlencode(params)
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(url, data=data, method=method)
        req.add_header("Content-Type", "application/json")
        try:
            with urllib.request.urlopen(req, timeout=self.timeout_s) as resp:
                raw = resp.read()
        except urllib.error.HTTPError as exc:
            detail = exc.read().decode(errors="replace")[:300]
            raise RestError(
                f"Flink REST {method} {path} failed: HTTP {exc.code} {detail}", exc.code
            ) from None
        except (urllib.error.URLError, OSError) as exc:
            reason = getattr(exc, "reason", exc)
            raise RestUnreachableError(
                f"Flink REST API at {self.base_url} is not reachable ({reason})"
            ) from None
        return raw

    def get(self, path: str, **params: str) -> Any:
        return self.request("GET", path, **params)

    def post(self, path: str, body: Any = None) -> Any:
        return self.request("POST", path, body if body is not None else {})

    def patch(self, path: str, **params: str) -> Any:
        return self.request("PATCH", path, **params)

    def overview(self) -> dict:
        return self.get("/overview")

    def metric_sum(self, path: str, metric: str) -> float | None:
        """Sum of `metric` over the subtasks or managers at `path` (None if not reported yet)."""
        return self.metric_aggregates(path, [metric], "sum").get(metric, {}).get("sum")

    def metric_aggregates(
        self, path: str, metrics: Sequence[str], *aggs: str
    ) -> dict[str, dict[str, float]]:
        """`aggs` ("sum", "avg", "min", "max") of each of `metrics` over the subtasks or
        managers at `path`, in one request: values of one metric dump where they come from
        one process. A metric not reported yet, or not a number (NaN), is left out."""
        values = self.get(path, get=",".join(metrics), agg=",".join(aggs))
        out: dict[str, dict[str, float]] = {}
        for value in values or ():
            found = {a: float(value[a]) for a in aggs if value.get(a) is not None}
            found = {a: v for a, v in found.items() if math.isfinite(v)}
            if value.get("id") in metrics and found:
                out[value["id"]] = found
        return out


def wait_for_taskmanager(
    rest: FlinkRest, check_alive: Callable[[], None], timeout_s: float
) -> None:
    """Wait until an embedded cluster's REST API lists its TaskManager (`check_alive` raises
    if its JVM died meanwhile)."""

    def listed() -> bool:
        try:  # 503 while the REST endpoint is still being elected leader
            if rest.get("/taskmanagers").get("taskmanagers"):
                return True
        except RestError as exc:
            if exc.status != 503:
                raise
        check_alive()
        return False

    poll_until(
        listed,
        timeout_s,
        0.1,
        f"the embedded Flink cluster listed no TaskManager within {timeout_s:.0f} s",
        EngineError,
    )

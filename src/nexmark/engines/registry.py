"""Find engines through the `nexmark.engines` entry points and import them only when used."""

from __future__ import annotations

from importlib.metadata import entry_points
from typing import Any

from nexmark.engines.base import Engine
from nexmark.errors import UsageError


def available() -> list[str]:
    return sorted(ep.name for ep in entry_points(group="nexmark.engines"))


def load(name: str, **settings: Any) -> Engine:
    """Instantiate engine `name` with its settings (not started)."""
    eps = {ep.name: ep for ep in entry_points(group="nexmark.engines")}
    if name not in eps:
        raise UsageError(f"unknown engine {name!r}; available: {', '.join(sorted(eps))}")
    try:
        cls = eps[name].load()
    except ImportError as exc:
        raise UsageError(
            f"engine {name!r} needs a package that is not installed ({exc.name}): "
            "run `make install` or `pip install -e .`"
        ) from exc
    return cls(**settings)

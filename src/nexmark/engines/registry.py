"""Find engines through the `nexmark.engines` entry points and import them only when used."""

from __future__ import annotations

from importlib.metadata import entry_points
from typing import Any

from nexmark.engines.base import Engine, TargetOption
from nexmark.errors import UsageError


def available() -> list[str]:
    return sorted(ep.name for ep in entry_points(group="nexmark.engines"))


def engine_class(name: str) -> type[Engine]:
    """The class of engine `name` (its module imported; its libraries only when it runs)."""
    eps = {ep.name: ep for ep in entry_points(group="nexmark.engines")}
    if name not in eps:
        raise UsageError(f"unknown engine {name!r}; available: {', '.join(sorted(eps))}")
    try:
        return eps[name].load()
    except ImportError as exc:
        raise UsageError(
            f"engine {name!r} needs a package that is not installed ({exc.name}): "
            "run `make install` or `pip install -e .`"
        ) from exc


def load(name: str, **settings: Any) -> Engine:
    """Instantiate engine `name` with its settings (not started)."""
    return engine_class(name)(**settings)


def target_options() -> list[tuple[str, TargetOption]]:
    """(engine, option) for every installed engine's target options; an engine that cannot be
    imported offers none."""
    found = []
    for name in available():
        try:
            cls = engine_class(name)
        except UsageError:
            continue
        found += [(name, opt) for opt in cls.target_options]
    return found

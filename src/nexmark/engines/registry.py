"""Find engines through the `nexmark.engines` entry points and import them only when used."""

from __future__ import annotations

import importlib.util
from importlib.metadata import entry_points
from typing import Any

from nexmark.engines.base import Engine
from nexmark.engines.capabilities import TargetOption
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
            "run `make install` or `pip install -e '.[all]'`"
        ) from exc


def missing_modules(cls: type[Engine]) -> list[str]:
    """The modules engine `cls` needs to run (`Engine.requires`) that are not installed."""
    return [m for m in cls.requires if importlib.util.find_spec(m) is None]


def load(name: str, **settings: Any) -> Engine:
    """Instantiate engine `name` with its settings (not started).

    Raises:
        UsageError: unknown engine, or its pip extra is not installed (one line naming the
            install command).
    """
    cls = engine_class(name)
    missing = missing_modules(cls)
    if missing:
        how = cls.install_command or f"install the package that provides {missing[0]}"
        raise UsageError(
            f"engine {name!r} is not installed (no module {', '.join(missing)}): run `{how}`"
        )
    return cls(**settings)


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

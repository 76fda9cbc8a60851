"""Settings: the packaged defaults, then a suite's own values, then a user TOML file, then
`--set SECTION.KEY=VALUE` overrides; later wins.

The state TTL is engine-neutral: `[state_ttl] default` (and one entry per query). Flink's own key
for it, `flink.table.exec.state.ttl`, given in a user file or with --set, is read as
`state_ttl.default`, so it reaches the job instead of being replaced by the packaged default.

Every section is a flat table of string values. Dotted keys are kept whole, so Flink options can be
written either quoted (`"state.backend.type" = "rocksdb"`) or as TOML nested tables; both end up as
the key `state.backend.type`.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from nexmark.errors import UsageError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised only on 3.10
    import tomli as tomllib


def _flatten(table: Mapping[str, Any], prefix: str = "") -> dict[str, str]:
    flat: dict[str, str] = {}
    for key, value in table.items():
        name = f"{prefix}{key}"
        if isinstance(value, Mapping):
            flat.update(_flatten(value, f"{name}."))
        elif isinstance(value, bool):
            flat[name] = "true" if value else "false"
        else:
            flat[name] = str(value)
    return flat


def _sections(doc: Mapping[str, Any], origin: str) -> dict[str, dict[str, str]]:
    out: dict[str, dict[str, str]] = {}
    for name, table in doc.items():
        if not isinstance(table, Mapping):
            raise UsageError(f"{origin}: top-level key {name!r} must be a [section] table")
        out[name] = _flatten(table)
    return out


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        with path.open("rb") as fh:
            return tomllib.load(fh)
    except FileNotFoundError:
        raise UsageError(f"config file not found: {path}") from None
    except tomllib.TOMLDecodeError as exc:
        raise UsageError(f"config file {path} is not valid TOML: {exc}") from None


def parse_override(text: str) -> tuple[str, str, str]:
    """Split `SECTION.KEY=VALUE` into its parts (the key may itself contain dots)."""
    name, sep, value = text.partition("=")
    section, dot, key = name.strip().partition(".")
    if not sep or not dot or not section or not key:
        raise UsageError(
            f"--set expects SECTION.KEY=VALUE (e.g. flink.parallelism.default=4), got {text!r}"
        )
    return section, key.strip(), value.strip()


FLINK_TTL_KEY = "table.exec.state.ttl"


@dataclass
class Settings:
    """Effective settings, section -> key -> value (strings)."""

    sections: dict[str, dict[str, str]] = field(default_factory=dict)

    @classmethod
    def defaults(cls) -> Settings:
        text = resources.files("nexmark.config").joinpath("defaults.toml").read_text()
        return cls(_sections(tomllib.loads(text), "defaults.toml"))

    @classmethod
    def load(
        cls,
        config_file: Path | None = None,
        overrides: Iterable[str] = (),
        suite: Mapping[str, Mapping[str, str]] | None = None,
    ) -> Settings:
        """Defaults, then a suite's values, then `config_file` (if given), then each
        `SECTION.KEY=VALUE` override."""
        settings = cls.defaults()
        for name, table in (suite or {}).items():
            settings._update(name, dict(table))
        if config_file is not None:
            for name, table in _sections(_read_toml(Path(config_file)), str(config_file)).items():
                settings._update(name, table)
        for text in overrides:
            section, key, value = parse_override(text)
            settings._update(section, {key: value})
        return settings

    def _update(self, section: str, values: dict[str, str]) -> None:
        if section == "flink" and FLINK_TTL_KEY in values:  # the engine's name for the default
            values = dict(values)
            self.sections.setdefault("state_ttl", {})["default"] = values.pop(FLINK_TTL_KEY)
        self.sections.setdefault(section, {}).update(values)

    def section(self, name: str) -> dict[str, str]:
        """A copy of one section (empty if absent)."""
        return dict(self.sections.get(name, {}))

    def flink_options(self) -> dict[str, str]:
        """The Flink options with `cores` resolved to this machine's CPU count."""
        options = self.section("flink")
        for key, value in options.items():
            if value == "cores":
                options[key] = str(os.cpu_count() or 1)
        return options

    def state_ttl(self, query: str) -> str | None:
        """The state TTL of `query`: its own entry, else `[state_ttl] default` (None if unset)."""
        ttl = self.sections.get("state_ttl", {})
        return ttl.get(query) or ttl.get("default")

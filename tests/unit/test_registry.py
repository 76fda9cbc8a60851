"""Engines found by entry point; one whose pip extra is missing is refused in one line."""

from __future__ import annotations

import importlib.util

import pytest

from nexmark.engines import registry
from nexmark.errors import UsageError


def test_both_engines_are_registered_and_declare_their_extra():
    assert {"flink", "spark"} <= set(registry.available())
    for name in ("flink", "spark"):
        cls = registry.engine_class(name)
        assert cls.requires and cls.install_command == f"pip install 'nexmark[{name}]'"
        assert registry.missing_modules(cls) == []  # this venv has every extra


@pytest.mark.parametrize("name, module", [("flink", "pyflink"), ("spark", "pyspark")])
def test_a_missing_extra_is_one_line_naming_the_install_command(monkeypatch, name, module):
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda m, *a: None if m == module else real(m, *a)
    )
    with pytest.raises(UsageError) as caught:
        registry.load(name)
    message = str(caught.value)
    assert "\n" not in message
    assert f"no module {module}" in message and f"pip install 'nexmark[{name}]'" in message


def test_an_unknown_engine_names_the_installed_ones():
    with pytest.raises(UsageError, match="unknown engine 'nosuch'; available: .*flink"):
        registry.load("nosuch")

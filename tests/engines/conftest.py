"""Fixtures of the engine tests (the shared `flink_engine` lives in tests/conftest.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
from tiny_dataset import write_tiny_dataset


@pytest.fixture(scope="module")
def tiny_dataset(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """4,000 hand-made events (3,000 warm-up, 1,000 benchmark) in 2 files per part."""
    return write_tiny_dataset(tmp_path_factory.mktemp("tiny") / "dataset", files=2)

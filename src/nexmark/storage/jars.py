"""The object store's pinned jars (`jars.toml` beside this module): s3proxy, Flink's S3 plugin,
Spark's S3A. Fetched and cached by `nexmark.maven`."""

from __future__ import annotations

from pathlib import Path

from nexmark.maven import PinnedJars

PINNED = Path(__file__).with_name("jars.toml")
JARS = PinnedJars(PINNED, "the object store's")

"""The pinned jars of Kafka as a source (jars.toml beside this file): the broker's, and each
engine's connector. Fetched and cached by `nexmark.maven.PinnedJars`."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from nexmark.maven import KAFKA_JARS

PINNED = KAFKA_JARS
BROKER = "kafka-broker"
FLINK_CONNECTOR = "kafka-flink"
SPARK_CONNECTOR = "kafka-spark"


def ensure(groups: Sequence[str], fetch: bool = True) -> list[Path]:
    """The jar files of `groups`, fetched with mvn where missing (if `fetch`).

    Raises:
        JarsUnavailableError: one line naming the missing jars and why (no mvn, no network).
    """
    return PINNED.ensure(groups, fetch=fetch)

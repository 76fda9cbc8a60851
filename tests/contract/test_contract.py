"""The engine contract (nexmark.testing.contract) on every engine in `conftest.ENGINES`: the
fake engine on its own clock, in about a second; Flink and Spark with a JVM. An engine package
outside this repository runs the same module against its own engine."""

from nexmark.testing.contract import *  # noqa: F403 - the contract's tests and fixtures

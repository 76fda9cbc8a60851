"""nexmark: a two-phase Nexmark benchmark runner for stateful stream processing engines."""

__version__ = "0.1.0"

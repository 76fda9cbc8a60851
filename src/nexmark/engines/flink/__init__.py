"""Apache Flink, through PyFlink (jobs) and its REST API (everything else)."""

from nexmark.engines.flink.engine import FlinkEngine

__all__ = ["FlinkEngine"]

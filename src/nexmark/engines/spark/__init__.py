"""Apache Spark Structured Streaming, through PySpark (one streaming query per job)."""

from nexmark.engines.spark.engine import SparkEngine

__all__ = ["SparkEngine"]

"""Kafka as a source (issue 31, docs/kafka.md): an embedded single-node broker (broker.py) and
the loader that writes a dataset into topics once (load.py). The engines read the topics with
their own connector settings (engines/flink/kafka.py, engines/spark/source.py); the protocol
finds or makes the load (protocol/preparation/kafka.py)."""

"""Kafka as a source (issue 31, docs/kafka.md): an embedded single-node broker (broker.py), the
loader that writes a dataset into topics once (load.py), and the engines' connector settings
(connectors.py). Wiring into the two-phase protocol comes later."""

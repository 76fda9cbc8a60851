"""Where a run's events come from besides dataset files: Kafka (sources/kafka/)."""

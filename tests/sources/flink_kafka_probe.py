"""Run by test_kafka_flink.py in a process of its own (PyFlink allows one gateway per process,
and a test session's shared embedded Flink holds it): read each loaded topic through
flink-sql-connector-kafka with PyFlink SQL, print per part and kind the count and the
event-time range as JSON.

    python flink_kafka_probe.py BOOTSTRAP '{"warmup": "topic-a", "benchmark": "topic-b"}'
"""

from __future__ import annotations

import json
import sys

from nexmark.sources.kafka import connectors, jars


def main(bootstrap: str, topics: dict[str, str]) -> None:
    from pyflink.table import EnvironmentSettings, TableEnvironment

    connector = jars.ensure([jars.FLINK_CONNECTOR])
    t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    config = t_env.get_config()
    config.set("pipeline.jars", ";".join(p.as_uri() for p in connector))
    config.set("parallelism.default", "2")
    config.set("table.local-time-zone", "UTC")
    for part, topic in topics.items():
        t_env.execute_sql(connectors.flink_source_ddl(f"events_{part}", topic, bootstrap))
    query = " UNION ALL ".join(
        f"SELECT '{part}' AS part, `event_type`, COUNT(*) AS n, MIN(`date_time`) AS lo, "
        f"MAX(`date_time`) AS hi FROM `events_{part}` GROUP BY `event_type`"
        for part in topics
    )
    final: dict[str, list] = {}
    with t_env.execute_sql(query).collect() as rows:
        for row in rows:  # a changelog: the last row of each key is its final count
            final[f"{row[0]}/{row[1]}"] = [row[2], _text(row[3]), _text(row[4])]
    print(json.dumps(final))


def _text(t) -> str:
    return t.strftime("%Y-%m-%d %H:%M:%S.%f")[:-3]


if __name__ == "__main__":
    main(sys.argv[1], json.loads(sys.argv[2]))

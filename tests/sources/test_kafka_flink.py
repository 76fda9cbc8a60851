"""Flink 2.3 reads a loaded topic through flink-sql-connector-kafka 5.0.0-2.2 (built for Flink
2.2: no build for 2.3 exists), with PyFlink SQL on the embedded engine: the table is the
files' one over the topic (connectors.flink_source_ddl), and the counts of each kind, and
the event-time range, match the dataset's."""

from __future__ import annotations

import numpy as np
import pytest

from nexmark.sources.kafka import connectors, jars
from nexmark.workload import generator as gen
from nexmark.workload.dataset import KIND_NAMES, format_time, kind_counts

pytestmark = [pytest.mark.slow, pytest.mark.flink]


def test_flink_reads_both_parts_of_a_load(broker, dataset, loaded) -> None:
    from pyflink.table import EnvironmentSettings, TableEnvironment

    connector = jars.ensure([jars.FLINK_CONNECTOR])
    t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    config = t_env.get_config()
    config.set("pipeline.jars", ";".join(p.as_uri() for p in connector))
    config.set("parallelism.default", "2")
    config.set("table.local-time-zone", "UTC")
    for part, topic in loaded.topics.items():
        t_env.execute_sql(connectors.flink_source_ddl(f"events_{part}", topic, broker.bootstrap))
    query = " UNION ALL ".join(
        f"SELECT '{part}' AS part, `event_type`, COUNT(*) AS n, MIN(`date_time`) AS lo, "
        f"MAX(`date_time`) AS hi FROM `events_{part}` GROUP BY `event_type`"
        for part in loaded.topics
    )
    final: dict[tuple[str, int], tuple] = {}
    with t_env.execute_sql(query).collect() as rows:
        for row in rows:  # a changelog: the last row of each key is its final count
            final[(row[0], row[1])] = (row[2], row[3], row[4])
    config_ = dataset.params.generator_config
    for part in loaded.topics:
        a, b = dataset.part_range(part)
        expected = kind_counts(a, b, config_)
        got = {KIND_NAMES[k]: v[0] for (p, k), v in final.items() if p == part}
        assert got == expected, part
        lo = min(v[1] for (p, _), v in final.items() if p == part)
        hi = max(v[2] for (p, _), v in final.items() if p == part)
        first, last = gen.event_time_ms(np.array([a, b - 1]), config_)
        assert (_text(lo), _text(hi)) == (format_time(first), format_time(last))


def _text(t) -> str:
    return t.strftime("%Y-%m-%d %H:%M:%S.%f")[:-3]

"""Flink 2.3 reads a loaded topic through flink-sql-connector-kafka 5.0.0-2.2 (built for Flink
2.2: no build for 2.3 exists), with PyFlink SQL on an embedded engine of its own process
(flink_kafka_probe.py): the table is the files' one over the topic
(connectors.flink_source_ddl), and the counts of each kind, and the event-time range, match
the dataset's."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from nexmark.workload import generator as gen
from nexmark.workload.dataset import KIND_NAMES, format_time, kind_counts

pytestmark = [pytest.mark.slow, pytest.mark.flink]

PROBE = Path(__file__).with_name("flink_kafka_probe.py")


@pytest.mark.timeout(600)
def test_flink_reads_both_parts_of_a_load(broker, dataset, loaded) -> None:
    done = subprocess.run(
        [sys.executable, str(PROBE), broker.bootstrap, json.dumps(dict(loaded.topics))],
        capture_output=True,
        text=True,
        timeout=540,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    final = json.loads(done.stdout.strip().splitlines()[-1])
    config_ = dataset.params.generator_config
    for part in loaded.topics:
        a, b = dataset.part_range(part)
        expected = kind_counts(a, b, config_)
        mine = {int(k.split("/")[1]): v for k, v in final.items() if k.split("/")[0] == part}
        assert {KIND_NAMES[k]: v[0] for k, v in mine.items()} == expected, part
        lo = min(v[1] for v in mine.values())
        hi = max(v[2] for v in mine.values())
        first, last = gen.event_time_ms(np.array([a, b - 1]), config_)
        assert (lo, hi) == (format_time(first), format_time(last))

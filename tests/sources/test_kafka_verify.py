"""`nexmark verify --source kafka` on the embedded Flink, against this module's broker as a
user's cluster (`--kafka-bootstrap`): the run loads the dataset into it, both phases read
topics (the benchmark job restored from the warm-up's checkpoint onto the benchmark topic),
and a windowed query (q7) and a join (q3) match the reference. (q5 is left out: its sliding
windows show the final-watermark difference docs/kafka.md describes under "Open".) Flink runs
in the CLI's own process (the test session's shared embedded Flink holds this process's PyFlink
gateway)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.slow, pytest.mark.flink]


@pytest.mark.timeout(900)
def test_verify_from_kafka_matches(broker, tmp_path: Path) -> None:
    env = {**os.environ, "NEXMARK_DATA_DIR": str(tmp_path / "data")}
    done = subprocess.run(
        [
            sys.executable, "-m", "nexmark", "verify", "-q", "q7,q3", "--events", "50K",
            "--parallelism", "2", "--source", "kafka", "--kafka-bootstrap", broker.bootstrap,
        ],
        capture_output=True, text=True, env=env, timeout=840, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "kafka: loaded load e50000-s0-" in done.stderr
    assert "2 partitions per part" in done.stderr
    rows = [line for line in done.stdout.splitlines() if line.startswith("│ q")]
    assert [r.split("│")[1:3] for r in rows] == [[" q7    ", " match  "], [" q3    ", " match  "]]

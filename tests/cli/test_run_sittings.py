"""A suite whose queries read datasets of different sizes (`Suite.sittings`), run for real on
the embedded Flink: one run, one results directory, each query on its own dataset with that
dataset's source ceiling; resumed, a finished sitting is not prepared again."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.flink, pytest.mark.slow]

# `nexmark run` with two sittings, as the quick suite's q0 and q5 would be (small here).
SCRIPT = """
import sys
from pathlib import Path
from nexmark.cli.run import execute
from nexmark.protocol.preparation.prepare import RunOptions
from nexmark.settings import Settings

options = RunOptions(queries=("q1", "q0"), events=100_000, checkpoint_interval_s=2.0,
                     timeout_s=240.0, repeat=1)
execute(options, "flink", Settings.load(None, []), Path(sys.argv[1]), resume="--resume" in sys.argv,
        report=False, sittings=[(200_000, ("q1",)), (100_000, ("q0",))])
"""


def _run(results: Path, data: Path, *more: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", SCRIPT, str(results), *more],
        capture_output=True,
        text=True,
        env={**os.environ, "NEXMARK_DATA_DIR": str(data)},
        timeout=600,
    )


def test_queries_of_two_sizes_run_as_one_run_each_on_its_dataset(tmp_path):
    results, data = tmp_path / "r", tmp_path / "data"
    done = _run(results, data)
    assert done.returncode == 0, done.stderr[-3000:]
    records = {r["query"]: r for r in json.loads((results / "results.json").read_text())["results"]}
    assert set(records) == {"q0", "q1"}
    q0, q1 = records["q0"], records["q1"]
    assert q1["status"] == q0["status"] == "ok" and q1["run_id"] == q0["run_id"]
    assert (q1["events_total"], q0["events_total"]) == (200_000, 100_000)
    assert q1["setup"]["options"]["events"] == 200_000 and q0["dataset_id"] != q1["dataset_id"]
    # Each sitting measured the ceiling of its own benchmark part.
    assert (q1["source"]["events"], q0["source"]["events"]) == (50_000, 25_000)
    assert len(list(data.iterdir())) == 2  # two datasets
    # Resumed, nothing is left to run: no sitting is prepared again, the records unchanged.
    before = (results / "results.json").read_bytes()
    again = _run(results, data, "--resume")
    assert again.returncode == 0, again.stderr[-3000:]
    assert (results / "results.json").read_bytes() == before
    assert "plan:" not in again.stderr and "generating" not in again.stderr

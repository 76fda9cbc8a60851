"""`nexmark run`'s refusals before any work, as a user meets them: a results directory of
another run given to --resume, a disk too small for the dataset and the largest checkpoint, a
results directory another run holds. One line each, non-zero, nothing finished touched. The
refusals run in process, but the one of a lock another process holds."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from cli_process import nexmark

REAL = Path(__file__).parents[1] / "data" / "real" / "flink-200k"


def _one_error_line(done: subprocess.CompletedProcess) -> str:
    errors = [line for line in done.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "Traceback" not in done.stderr, done.stderr
    return errors[0]


@pytest.mark.parametrize(
    "args, difference",
    [
        (["--events", "1K"], "--events 200,000 there, 1,000 now"),
        (["--events", "200K", "--seed", "7"], "--seed 0 there, 7 now"),
        (["--events", "200K", "--engine", "spark"], "engine flink there, spark now"),
    ],
)
def test_resume_refuses_a_directory_of_another_dataset_or_engine(
    tmp_path, nexmark_main, args, difference
):
    results = tmp_path / "r"
    shutil.copytree(REAL, results)
    before = (results / "results.json").read_bytes()
    done = nexmark_main("run", "--queries", "q0,q8", "--resume", "--results", str(results),
                        *args, data=tmp_path / "data")  # fmt: skip
    assert done.returncode == 2
    line = _one_error_line(done)
    assert "holds a run with another dataset, engine or setup" in line and difference in line
    assert (results / "results.json").read_bytes() == before
    assert not (tmp_path / "data").exists()  # before any work


def test_a_disk_too_small_for_the_dataset_and_the_largest_checkpoint_is_refused(
    tmp_path, nexmark_main
):
    root = tmp_path / "results"
    (root / "earlier").mkdir(parents=True)
    earlier = {"engine": "flink", "query": "q0", "events_total": 1000, "state_bytes_end": 5 << 30}
    (root / "earlier" / "results.json").write_text(json.dumps({"results": [earlier]}))
    done = nexmark_main("run", "--queries", "q0", "--events", "1K", "--results", str(root / "new"),
                        data=tmp_path / "data", NEXMARK_FREE_BYTES=str(1 << 30))  # fmt: skip
    assert done.returncode == 3
    line = _one_error_line(done)
    assert line.startswith("error: not enough free disk for this run on ")
    assert "the largest checkpoint seen so far 5.0 GiB), 1.0 GiB free" in line
    plan = [ln for ln in done.stderr.splitlines() if ln.startswith("plan:")]
    assert plan[0] == "plan: 1 of 1 queries to run on flink: q0"
    assert (
        plan[3]
        == f"plan: largest checkpoint seen so far: 5.0 GiB (q0 at 1,000 events, {root / 'earlier'})"
    )
    assert not (tmp_path / "data").exists() and not (root / "new").exists()


def test_a_second_run_on_a_held_results_directory_is_refused(tmp_path, lock_holder):
    results = tmp_path / "r"
    shutil.copytree(REAL, results)
    holder = lock_holder(results)
    done = nexmark("run", "--queries", "q0", "--events", "200K", "--resume", "--results",
                   str(results), data=tmp_path / "data")  # fmt: skip
    assert done.returncode == 2
    line = _one_error_line(done)
    assert f"is in use by another nexmark run (pid {holder.pid}, started " in line
    assert (results / "results.json").read_bytes() == (REAL / "results.json").read_bytes()
    assert not (tmp_path / "data").exists()

"""What a Flink job really runs with: readers advancing event time together, and the options
given through every path, read back from Flink's REST API."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from flink_helpers import wait_for

from nexmark.durations import parse_seconds
from nexmark.engines.spec import JobSpec
from nexmark.errors import DatasetError
from nexmark.settings import Settings
from nexmark.workload import generator as gen
from nexmark.workload.dataset import DatasetParams
from nexmark.workload.writer import ensure_dataset

pytestmark = [pytest.mark.flink, pytest.mark.slow]

# 30 s of warm-up event time at 5,000 events/s: a reader holding only the first half of it
# (the old contiguous layout) would hold the watermark ~15 s behind the data.
RATE, EVENTS = 5000, 200_000
# Bound on the watermark's lag at the end of a warm-up: the 4 s delay, the mini-batch
# interval that forwards watermarks (2 s), the periodic watermark interval (0.2 s), and the
# metric refresh and slack (1 s).
LAG_BOUND_S = 4 + 2 + 0.2 + 1


@pytest.fixture(scope="module")
def timed_dataset(data_root: Path):
    params = DatasetParams(events=EVENTS, rate=RATE, files=2, seed=3)
    return ensure_dataset(params, out=data_root / params.dataset_id, show_progress=False)


def _settled_watermark(job, floor_ms: int, limit_s: float = 30.0) -> int | None:
    """The watermark once it has reached `floor_ms` and stopped moving for 2 s (or at the
    limit). Below the floor a pause is no end: the mini-batch forwards watermarks every 2 s,
    and a loaded machine delays a forward past that."""
    deadline, last, since = time.monotonic() + limit_s, None, time.monotonic()
    while time.monotonic() < deadline:
        wm = job.watermark_ms()
        if wm != last:
            last, since = wm, time.monotonic()
        elif wm is not None and wm >= floor_ms and time.monotonic() - since > 2.0:
            break
        time.sleep(0.25)
    return last


def test_watermark_follows_the_data_at_the_end_of_a_warmup(flink_engine, timed_dataset, tmp_path):
    """Parallelism 2, q5 (a windowed join): at the cut the job's watermark (the minimum over
    every operator's input) is within a few seconds of the last warm-up event."""
    w0, w1 = timed_dataset.part_range("warmup")
    last_ms = int(gen.event_time_ms(w1 - 1, timed_dataset.params.generator_config))
    job = flink_engine.submit(
        JobSpec("q5", timed_dataset.part_dir("warmup"), tmp_path, keep_source_open=True)
    )
    try:
        wait_for("warm-up events", lambda: job.events_emitted() >= w1 - w0, job)
        wm = _settled_watermark(job, floor_ms=last_ms - int(LAG_BOUND_S * 1000))
        late = job.late_records_dropped()  # q5's window aggregate counts them: none here
    finally:
        job.cancel()
    assert wm is not None, "the windowed operators never received a watermark"
    assert late == 0
    lag_s = (last_ms - wm) / 1000
    assert 4.0 <= lag_s <= LAG_BOUND_S, f"watermark {lag_s:.1f} s behind the last event"


def test_a_dataset_laid_out_for_other_readers_is_refused(flink_engine, data_root, tmp_path):
    params = DatasetParams(events=4000, files=3)
    ds = ensure_dataset(params, out=data_root / params.dataset_id, show_progress=False)
    with pytest.raises(DatasetError, match="3 files but the job runs 2 source readers"):
        flink_engine.submit(JobSpec("q0", ds.part_dir("warmup"), tmp_path, keep_source_open=True))


def _config_path(tmp_path: Path) -> Path:
    path = tmp_path / "my.toml"
    path.write_text(
        '[flink]\n"parallelism.default" = "1"\n"execution.checkpointing.interval" = "7 s"\n'
    )
    return path


@pytest.mark.parametrize("path", ["set", "config", "flags"])
def test_options_reach_the_job_whatever_the_path(
    flink_engine, data_root, tmp_path, monkeypatch, path
):
    """Parallelism 1 and a 7 s checkpoint interval, through --set, --config or the CLI flags
    (JobSpec fields), read back from the job's REST configuration and recorded as submitted."""
    settings = {
        "set": lambda: Settings.load(
            overrides=["flink.parallelism.default=1", "flink.execution.checkpointing.interval=7 s"]
        ),
        "config": lambda: Settings.load(_config_path(tmp_path)),
        "flags": lambda: Settings.load(overrides=["flink.parallelism.default=2"]),
    }[path]()
    monkeypatch.setattr(flink_engine, "settings", settings)
    flags = {"parallelism": 1, "checkpoint_interval_s": 7.0} if path == "flags" else {}
    params = DatasetParams(events=4000, files=1)
    ds = ensure_dataset(params, out=data_root / params.dataset_id, show_progress=False)
    job = flink_engine.submit(
        JobSpec("q0", ds.part_dir("warmup"), tmp_path / "w", keep_source_open=True, **flags)
    )
    try:
        wait_for("running", lambda: job.status().state.value == "ready", job)
        rest = flink_engine.rest
        interval_ms = rest.get(f"/jobs/{job.id}/checkpoints/config")["interval"]
        vertices = rest.get(f"/jobs/{job.id}")["vertices"]
        execution = rest.get(f"/jobs/{job.id}/config")["execution-config"]
    finally:
        job.cancel()
    assert interval_ms == 7000
    assert {v["parallelism"] for v in vertices} == {1}
    assert job.setup is not None and job.setup.parallelism == 1
    assert execution["job-parallelism"] == 1
    assert job.setup.options["parallelism.default"] == "1"  # what the result records
    assert options_interval_s(job.setup.options) == 7.0


def options_interval_s(options: dict[str, str]) -> float:
    return parse_seconds(options["execution.checkpointing.interval"], "interval")

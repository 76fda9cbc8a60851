"""How far the job's watermark trails the data at the end of a warm-up (issue 10's figure).

Runs q5's warm-up at parallelism 2 on a generated dataset, waits until the source has read
every warm-up event and the watermark has settled, then prints each vertex's input watermarks
and the job's lag behind the last warm-up event (the 4 s delay plus mini-batch granularity
when readers advance together; about half the warm-up's event time when they do not).

    .venv/bin/python benchmarks/bench_watermark_lag.py [--events 6M]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from nexmark.engines.base import JobSpec
from nexmark.engines.flink import FlinkEngine
from nexmark.settings import Settings
from nexmark.workload import generator as gen
from nexmark.workload.dataset import DatasetParams
from nexmark.workload.sizes import parse_count
from nexmark.workload.writer import ensure_dataset


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", default="6M")
    parser.add_argument("--query", default="q5")
    args = parser.parse_args()
    params = DatasetParams(events=parse_count(args.events), files=2)
    dataset = ensure_dataset(params, show_progress=False)
    w0, w1 = dataset.part_range("warmup")
    config = params.generator_config
    base_ms, last_ms = int(gen.event_time_ms(0, config)), int(gen.event_time_ms(w1 - 1, config))
    engine = FlinkEngine(Settings.load(overrides=["flink.parallelism.default=2"]))
    engine.start()
    try:
        with tempfile.TemporaryDirectory(prefix="nexmark-wm-") as work:
            spec = JobSpec(
                args.query, dataset.part_dir("warmup"), Path(work), keep_source_open=True
            )
            job = engine.submit(spec)
            while job.events_emitted() < w1 - w0:
                time.sleep(0.5)
            time.sleep(3.0)  # the last watermarks and the 200 ms metric refresh
            for vertex in engine.rest.get(f"/jobs/{job.id}")["vertices"]:
                marks = engine.rest.get(f"/jobs/{job.id}/vertices/{vertex['id']}/watermarks")
                values = [int(m["value"]) for m in marks if m["id"].endswith("InputWatermark")]
                shown = [(v - base_ms) / 1000 for v in values if v > 0]
                print(f"{vertex['name'][:60]:60}  input watermarks (s after base): {shown}")
            watermark = job.watermark_ms()
            job.cancel()
    finally:
        engine.close()
    print(f"last warm-up event at base + {(last_ms - base_ms) / 1000:.3f} s")
    if watermark is None:
        print("the job reports no event-time watermark")
    else:
        print(
            f"job watermark at base + {(watermark - base_ms) / 1000:.3f} s: "
            f"{(last_ms - watermark) / 1000:.1f} s behind the last warm-up event"
        )


if __name__ == "__main__":
    main()

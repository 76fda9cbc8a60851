"""Where the source's time goes: a CPU profile of a source-only (or q0) job, by step.

One bounded job on the warm-up part of a dataset runs on an embedded Flink while the JVM is
profiled two ways:

- Java Flight Recorder (`jcmd <pid> JFR.start`, the `profile` settings: a stack sample of every
  running Java thread about every 10 ms), which sees the file source's fetcher thread, where the
  CSV is read and parsed, as well as the task thread;
- with `--flamegraph`, Flink's own flame graph of the source vertex
  (`rest.flamegraph.enabled`, `/jobs/<id>/vertices/<v>/flamegraph?type=on_cpu`), saved as JSON.

Each sample is put in the step of the deepest frame that names one (tokenizing, the JSON tree
Jackson builds per line, field conversion, timestamp parsing, row building, record copies
between chained operators, computed columns and view filters, watermark generation, the file
source's hand-over, reading bytes, the sink), and the shares are printed per thread kind.

    .venv/bin/python benchmarks/profile_data_path.py [--events 8M] [--format new|text-times]
        [--job source|q0] [--seconds 10] [--flamegraph] [--set flink.KEY=VALUE ...]
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path

from bench_data_path import MAIN_CSV_OPTIONS, text_time_copy

from nexmark.engines.base import SOURCE_ONLY, JobSpec, JobState
from nexmark.engines.flink import FlinkEngine
from nexmark.settings import Settings
from nexmark.workload.dataset import DatasetParams
from nexmark.workload.sizes import parse_count
from nexmark.workload.writer import ensure_dataset

JACKSON = "org.apache.flink.shaded.jackson2.com.fasterxml.jackson."
# (step, frame prefixes), highest priority first: a sample belongs to the first step that any
# frame of its stack matches. So the time a CSV parser spends reading its stream counts as
# reading, a String a converter makes counts as conversion, and whatever a record copy does
# counts as the copy. JDK frames not listed count for whoever called them.
STEPS: list[tuple[str, tuple[str, ...]]] = [
    ("timestamp parsing", ("java.time.", "org.apache.flink.formats.common.TimeFormats")),
    (
        "record copies between chained operators",
        (
            "org.apache.flink.table.runtime.typeutils.",
            "org.apache.flink.streaming.runtime.tasks.CopyingChainingOutput",
        ),
    ),
    (
        "watermark generation",
        ("WatermarkGenerator", "org.apache.flink.table.runtime.operators.wmassigners."),
    ),
    ("computed columns, view filters (Calc)", ("StreamExecCalc", "BatchExecCalc")),
    (
        "sink",
        ("org.apache.flink.connector.blackhole.", "org.apache.flink.table.runtime.operators.sink."),
    ),
    (
        "reading and decoding bytes",
        (
            "java.io.",
            "sun.nio.",
            "org.apache.flink.core.fs.",
            JACKSON + "core.io.",
            JACKSON + "dataformat.csv.impl.UTF8Reader",
        ),
    ),
    (
        "field conversion",
        (
            "java.lang.Long.parseLong",
            "java.lang.Integer.parseInt",
            "org.apache.flink.formats.csv.CsvToRowDataConverters",
        ),
    ),
    ("tokenizing (Jackson CSV parser)", (JACKSON + "dataformat.csv.", JACKSON + "core.")),
    ("JSON tree per line (Jackson databind)", (JACKSON + "databind.",)),
    ("row building (GenericRowData, strings)", ("org.apache.flink.table.data.",)),
    (
        "file source: split fetcher, hand-over to the task",
        ("org.apache.flink.connector.file.", "org.apache.flink.connector.base.source."),
    ),
    ("task framework (mailbox, emit, metrics)", ("org.apache.flink.",)),
]


def step_of(frames: list[str]) -> str:
    """The step of a stack ("class.method" names, in any order)."""
    best = len(STEPS)
    for frame in frames:
        for i, (_, prefixes) in enumerate(STEPS[:best]):
            if frame.startswith(prefixes):
                best = i
                break
    return STEPS[best][0] if best < len(STEPS) else "other (JDK only)"


def thread_kind(name: str) -> str | None:
    if name.startswith("Source Data Fetcher"):
        return "fetcher"
    if "events[" in name or name.startswith("Source: "):
        return "task"
    return None


def jfr_samples(jfr: Path, java_bin: Path) -> list[tuple[str, list[str]]]:
    """(thread name, frames leaf first) of every execution sample of a recording."""
    out = subprocess.run(
        [str(java_bin / "jfr"), "print", "--json", "--stack-depth", "64"]
        + ["--events", "jdk.ExecutionSample", str(jfr)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    samples = []
    for event in json.loads(out)["recording"]["events"]:
        values = event["values"]
        thread = (values.get("sampledThread") or {}).get("javaName") or ""
        frames = []
        for f in (values.get("stackTrace") or {}).get("frames") or []:
            method = f["method"]
            cls = method["type"]["name"].replace("/", ".")
            frames.append(f"{cls}.{method['name']}")
        samples.append((thread, frames))
    return samples


def flame_steps(node: dict, path: list[str], out: Counter) -> None:
    """Self samples of a Flink flame graph node by step (frames are 'class.method:line')."""
    name = node.get("name", "").rsplit(":", 1)[0]
    path = [name, *path]
    children = node.get("children") or []
    own = node.get("value", 0) - sum(c.get("value", 0) for c in children)
    if own > 0 and name != "root":
        out[step_of(path)] += own
    for child in children:
        flame_steps(child, path, out)


def print_shares(title: str, counts: Counter) -> None:
    total = sum(counts.values())
    print(f"\n{title} ({total} samples)")
    for step, n in counts.most_common():
        print(f"  {100 * n / total:5.1f}%  {step}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--events", default="8M")
    ap.add_argument("--parallelism", type=int, default=2)
    ap.add_argument("--format", choices=("new", "text-times"), default="new")
    ap.add_argument("--job", choices=("source", "q0"), default="source")
    ap.add_argument("--seconds", type=float, default=10.0, help="recording length")
    ap.add_argument("--flamegraph", action="store_true", help="also Flink's own flame graph")
    ap.add_argument("--set", action="append", default=[], help="extra SECTION.KEY=VALUE")
    ap.add_argument("--data-dir", type=Path, help="keep the dataset here, and reuse it")
    ap.add_argument("--out", type=Path, help="keep the recording and flame graph here")
    args = ap.parse_args()

    root = args.data_dir or Path(tempfile.mkdtemp(prefix="nexmark-profile-"))
    work = Path(tempfile.mkdtemp(prefix="nexmark-profile-work-"))
    try:
        params = DatasetParams(events=parse_count(args.events), files=args.parallelism)
        ds = ensure_dataset(params, out=root / params.dataset_id, show_progress=False)
        part = ds.part_dir("warmup")
        if args.format == "text-times":
            part = text_time_copy(ds, root) / "warmup"
        overrides = [f"flink.parallelism.default={args.parallelism}", *args.set]
        if args.flamegraph:
            overrides.append("flink.rest.flamegraph.enabled=true")
        with FlinkEngine(Settings.load(overrides=overrides)) as engine:
            if args.format == "text-times":
                engine.source_options = {"text_times": True, "csv_options": MAIN_CSV_OPTIONS}
            spec = JobSpec(
                SOURCE_ONLY if args.job == "source" else "q0",
                part,
                work / "job",
                source_only=args.job == "source",
            )
            job = engine.submit(spec)
            while job.status().state is JobState.STARTING:
                time.sleep(0.05)
            time.sleep(2.0)  # past the JIT's first compilations
            out = args.out or work
            out.mkdir(parents=True, exist_ok=True)
            jfr = out / f"{args.job}-{args.format}.jfr"
            java_bin = engine.java.home / "bin"
            pid = str(engine.gateway.process.pid)
            flames: list[dict] = []
            if args.flamegraph:
                threading.Thread(
                    target=_poll_flamegraph, args=(engine, job, flames, args.seconds), daemon=True
                ).start()
            subprocess.run(
                [str(java_bin / "jcmd"), pid, "JFR.start", "name=nexmark", "settings=profile",
                 f"duration={int(args.seconds)}s", f"filename={jfr}"],
                check=True, capture_output=True,
            )  # fmt: skip
            time.sleep(args.seconds + 1.0)
            while not jfr.exists() or jfr.stat().st_size == 0:
                time.sleep(0.2)
            time.sleep(0.5)
            state = job.status().state
            if not state.terminal:
                job.cancel()
        samples = jfr_samples(jfr, java_bin)
        by_kind: dict[str, Counter] = {"fetcher": Counter(), "task": Counter(), "both": Counter()}
        others = 0
        for thread, frames in samples:
            kind = thread_kind(thread)
            if kind is None:
                others += 1
                continue
            step = step_of(frames)
            by_kind[kind][step] += 1
            by_kind["both"][step] += 1
        print(f"{args.job} on the {args.format} format, {ds.events:,} events, JFR {args.seconds}s;")
        print(f"samples of other threads (harness, REST, checkpoints): {others}")
        if state is JobState.FINISHED:
            print("note: the job finished during the recording; use more events")
        for kind in ("both", "fetcher", "task"):
            if by_kind[kind]:
                print_shares(f"{kind} threads", by_kind[kind])
        if flames:
            counts: Counter = Counter()
            for flame in flames:
                flame_steps(flame["data"], [], counts)
            (out / f"{args.job}-{args.format}-flamegraph.json").write_text(json.dumps(flames))
            print_shares("Flink flame graph of the source vertex (task threads)", counts)
    finally:
        shutil.rmtree(work, ignore_errors=True)
        if args.data_dir is None:
            shutil.rmtree(root, ignore_errors=True)


def _poll_flamegraph(engine: FlinkEngine, job, flames: list[dict], seconds: float) -> None:
    """Flink samples a vertex's task threads when asked, and answers with the last finished
    sampling: ask every 2 s for the recording's length, keep each distinct answer."""
    vertex = engine.rest.get(f"/jobs/{job.id}")["vertices"][0]["id"]
    seen = set()
    until = time.monotonic() + seconds
    while time.monotonic() < until:
        try:
            flame = engine.rest.get(f"/jobs/{job.id}/vertices/{vertex}/flamegraph", type="on_cpu")
        except Exception:  # noqa: BLE001 - the job may end meanwhile
            return
        stamp = flame.get("endTimestamp")
        if not flames and not flame.get("data"):
            print(f"flame graph not ready: {str(flame)[:200]}")
        if flame.get("data") and stamp not in seen:
            seen.add(stamp)
            flames.append(flame)
        time.sleep(2.0)


if __name__ == "__main__":
    main()

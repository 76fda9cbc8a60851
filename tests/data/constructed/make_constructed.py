"""Build CONSTRUCTED results files for the report and compare tests.

These are not measurements. They are simulated with the results model from plausible numbers
(a 2-core machine, embedded Flink 2.3, 10M events) so that the report, the table and compare
can be tested before the protocol runner produces real results (those go to tests/data/real/).
Every run id starts with "constructed-". Deterministic: the same files every time.

    .venv/bin/python tests/data/constructed/make_constructed.py
"""

from __future__ import annotations

import random
import statistics
from dataclasses import dataclass, replace
from datetime import datetime, timezone
from pathlib import Path

from nexmark.results.figures import CheckpointStats, PhaseCheckpoint
from nexmark.results.query_result import QueryResult, Status
from nexmark.results.setup import Machine, Setup
from nexmark.results.steady import STATE_GROWTH_LIMIT
from nexmark.results.store import ResultStore
from nexmark.results.timeline import CheckpointEvent, Sample, Timestamps

HERE = Path(__file__).parent
EVENTS, WARMUP = 10_000_000, 7_500_000
INTERVAL = 10.0  # checkpoint interval of these constructed runs, seconds


@dataclass(frozen=True)
class Profile:
    """How a simulated query behaves."""

    query: str
    eps: float  # steady throughput, events/s
    cores: float  # steady cores
    state_mib: float  # full state at the phase checkpoint, MiB
    growth: float  # state at the end of the benchmark / at the phase checkpoint
    recovery_s: float
    ckpt_s: float  # typical checkpoint duration
    status: Status = Status.OK
    reason: str | None = None
    stop_at: float | None = None  # failed/timeout: stop after this many seconds


BASE = [
    Profile("q0", 720_000, 1.62, 0.01, 1.0, 2.4, 0.05),
    Profile("q1", 650_000, 1.71, 0.01, 1.0, 2.5, 0.05),
    Profile("q2", 810_000, 1.55, 0.01, 1.0, 2.3, 0.04),
    Profile("q5", 185_000, 1.88, 46.0, 1.04, 4.1, 0.62),
    Profile("q8", 240_000, 1.83, 88.0, 1.08, 5.2, 0.85),
    Profile("q16", 150_000, 1.91, 132.0, 1.11, 6.3, 1.35),
    Profile("q19", 205_000, 1.86, 24.0, 1.31, 3.6, 0.41),
    Profile("q20", 95_000, 1.93, 410.0, 1.33, 9.8, 2.9),
    Profile(
        "q10",
        160_000,
        1.8,
        3.0,
        1.0,
        3.0,
        0.3,
        Status.FAILED,
        "job failed in phase benchmark: java.io.IOException: No space left on device",
        70.0,
    ),
    Profile(
        "q13",
        120_000,
        1.9,
        12.0,
        1.0,
        3.0,
        0.3,
        Status.TIMEOUT,
        "q13 did not finish within 60 s (in phase warmup)",
        60.0,
    ),
    Profile(
        "q6",
        0,
        0,
        0,
        1,
        0,
        0,
        Status.UNSUPPORTED,
        "OVER aggregation ordered by a non-time attribute is not supported by Flink streaming",
        0.0,
    ),
]

# The "new" run: what changed per query (factors on the base profile), and q10 fixed.
NEW_CHANGES = {
    "q0": {"eps": 1.02},
    "q1": {"eps": 0.97, "cores": 1.01},
    "q5": {"eps": 0.86, "ckpt_s": 1.1},
    "q8": {"eps": 1.14, "recovery_s": 0.8},
    "q16": {"eps": 1.01, "state_mib": 0.7},
    "q19": {"recovery_s": 1.35},
    "q20": {"ckpt_s": 0.75, "eps": 1.03},
}


def _config(managed_fraction: str) -> dict[str, str]:
    return {
        "execution.checkpointing.interval": "10 s",
        "execution.checkpointing.mode": "EXACTLY_ONCE",
        "state.backend.type": "rocksdb",
        "execution.checkpointing.incremental": "true",
        "parallelism.default": "2",
        "table.exec.mini-batch.enabled": "true",
        "table.exec.mini-batch.allow-latency": "2 s",
        "table.exec.mini-batch.size": "50000",
        "table.optimizer.distinct-agg.split.enabled": "true",
        "taskmanager.memory.managed.fraction": managed_fraction,
    }


class Sim:
    """Simulates one query's two phases, second by second, and derives the metrics."""

    def __init__(self, p: Profile, t0: float, rng: random.Random) -> None:
        self.p, self.t0, self.rng = p, t0, rng
        self.samples: list[Sample] = []
        self.cps: list[CheckpointEvent] = []
        self.next_id = 1

    def rel(self, t: float) -> float:
        return round(t - self.t0, 3)

    def run_phase(self, phase: str, start: float, total: int, state0: float) -> float:
        """Process `total` events from `start`; periodic checkpoints; return the end time."""
        t, done, i, next_cp = start, 0, 0, start + INTERVAL
        stop = self.t0 + self.p.stop_at if self.p.stop_at else None
        while done < total:
            ramp = min(1.0, 0.35 + 0.3 * i)  # JIT and RocksDB warm-up in the first seconds
            rate = self.p.eps * ramp * self.rng.uniform(0.95, 1.05)
            step = min(1.0, (total - done) / rate)
            done += min(total - done, round(rate * step))
            t, i = t + step, i + 1
            cores = self.p.cores * ramp * self.rng.uniform(0.96, 1.04) + 0.08
            self.samples.append(Sample(self.rel(t), phase, done, round(rate, 1), round(cores, 3)))
            if t >= next_cp:
                self.checkpoint(phase, next_cp, self.state(state0, done, total), "periodic")
                next_cp += INTERVAL
            if stop is not None and t >= stop:
                return t
        return t

    def state(self, state0: float, done: int, total: int) -> float:
        """Full state after `done` of `total` events: grows linearly to its end value."""
        if state0 == 0:  # the warm-up grows from nothing to the phase-checkpoint size
            return self.p.state_mib * 2**20 * (0.4 + 0.6 * done / total)
        return state0 * (1 + (self.p.growth - 1) * done / total)

    def checkpoint(self, phase: str, trig: float, state: float, kind: str) -> CheckpointEvent:
        dur = self.p.ckpt_s * self.rng.uniform(0.8, 1.25) * (1.4 if kind == "phase" else 1.0)
        share = 1.0 if self.next_id == 1 else 0.18  # incremental: only the first is full
        cp = CheckpointEvent(
            phase=phase,
            id=self.next_id,
            t=self.rel(trig),
            status="completed",
            duration_s=round(dur, 3),
            checkpointed_bytes=int(state * share),
            state_bytes=int(state),
            kind=kind,
        )
        self.next_id += 1
        self.cps.append(cp)
        return cp


def simulate(p: Profile, run_id: str, t0: float, engine_version: str, cfg: dict) -> QueryResult:
    rng = random.Random(f"{run_id}/{p.query}")
    sim = Sim(p, t0, rng)
    ts = Timestamps(query_start=t0, warmup_start=t0 + 0.3)
    r = QueryResult(
        run_id=run_id,
        engine="flink",
        query=p.query,
        status=p.status,
        reason=p.reason,
        started_at=datetime.fromtimestamp(t0, timezone.utc).isoformat().replace("+00:00", "Z"),
        engine_version=engine_version,
        dataset_id="nexmark-10000000-seed42-w0.75",
        events_total=EVENTS,
        events_warmup=WARMUP,
        events_benchmark=EVENTS - WARMUP,
        setup=_setup(engine_version, cfg),
        timestamps=ts,
    )
    if p.status is Status.UNSUPPORTED:
        return r
    end = sim.run_phase("warmup", ts.warmup_start + 2.2, WARMUP, 0.0)
    if p.status is not Status.OK and p.stop_at <= end - t0 + 0.01:
        return _partial(r, sim)
    ts.warmup_end = round(end, 3)
    phase_cp = sim.checkpoint("warmup", end + 0.05, p.state_mib * 2**20, "phase")
    ts.t_submit = round(end + 0.05 + phase_cp.duration_s + 0.45, 3)
    ts.t_running = round(ts.t_submit + p.recovery_s * rng.uniform(0.97, 1.03), 3)
    t = ts.t_submit
    while t + 1.0 < ts.t_running:  # the restore gap: CPU for state download, no events
        t += 1.0
        sim.samples.append(Sample(sim.rel(t), "restore", 0, 0.0, round(rng.uniform(0.5, 0.9), 3)))
    ts.t_first = round(ts.t_running + rng.uniform(0.2, 0.5), 3)
    last = sim.run_phase("benchmark", ts.t_first, EVENTS - WARMUP, phase_cp.state_bytes)
    if p.status is not Status.OK:
        return _partial(r, sim)
    end_cp = sim.checkpoint("benchmark", last + 0.05, phase_cp.state_bytes * p.growth, "end")
    ts.t_end = round(last + 0.05 + end_cp.duration_s, 3)
    return _derive(r, sim, phase_cp, end_cp)


def _partial(r: QueryResult, sim: Sim) -> QueryResult:
    r.timeseries, r.checkpoint_events = sim.samples, sim.cps
    return r


def _derive(r: QueryResult, sim: Sim, phase_cp, end_cp) -> QueryResult:
    """The metrics from the simulated observations, by the formulas of the protocol spec."""
    ts = r.timestamps
    r.time_s = ts.t_end - ts.t_running
    bench = [s for s in sim.samples if s.phase == "benchmark"]
    # CPU seconds = each interval's cores times its length (the first starts at t_running)
    cpu = bench[0].cores * (bench[0].t - sim.rel(ts.t_running))
    cpu += sum(b.cores * (b.t - a.t) for a, b in zip(bench, bench[1:], strict=False))
    r.cores = cpu / r.time_s
    r.throughput_eps = r.events_benchmark / r.time_s
    r.throughput_per_core = r.throughput_eps / r.cores
    r.cost_core_s_per_million = r.cores * r.time_s / (r.events_benchmark / 1e6)
    r.recovery_time_s = ts.t_running - ts.t_submit
    r.time_to_first_event_s = ts.t_first - ts.t_submit
    median = statistics.median(s.throughput_eps for s in bench)
    steady = next(s for s in bench if s.throughput_eps >= 0.9 * median)
    r.time_to_steady_s = sim.t0 + steady.t - ts.t_submit
    r.phase_checkpoint = PhaseCheckpoint(
        phase_cp.id, phase_cp.duration_s, phase_cp.checkpointed_bytes, phase_cp.state_bytes
    )
    periodic = [c for c in sim.cps if c.phase == "benchmark" and c.kind == "periodic"]
    durs = [c.duration_s for c in periodic]
    r.checkpoints = CheckpointStats(
        count=len(periodic),
        failed=0,
        duration_median_s=statistics.median(durs) if durs else None,
        duration_max_s=max(durs) if durs else None,
        checkpointed_bytes_median=(
            int(statistics.median(c.checkpointed_bytes for c in periodic)) if periodic else None
        ),
        state_bytes_last=periodic[-1].state_bytes if periodic else None,
    )
    r.state_bytes_start, r.state_bytes_end = phase_cp.state_bytes, end_cp.state_bytes
    r.state_growth = r.state_bytes_end / r.state_bytes_start
    r.state_steady = r.state_growth <= STATE_GROWTH_LIMIT
    r.restored_from = f"file:/tmp/nexmark-work/{r.query}/checkpoints/chk-{phase_cp.id}"
    return _partial(r, sim)


def _setup(engine_version: str, cfg: dict) -> Setup:
    return Setup(
        engine_target="embedded",
        engine_config=cfg,
        options={
            "constructed": True,
            "events": EVENTS,
            "warmup_fraction": 0.75,
            "checkpoint_interval_s": INTERVAL,
            "parallelism": 2,
            "timeout_s": 60.0,
        },
        versions={"flink": engine_version, "apache-flink": engine_version, "nexmark": "0.1.0"},
        machine=Machine(
            cores=2,
            physical_cores=1,
            memory_bytes=8 * 2**30,
            os="Linux-6.1.0-27-amd64-x86_64-with-glibc2.36",
            cpu_model="Intel(R) Xeon(R) CPU @ 2.20GHz",
            python="3.11.7",
            java="17.0.13",
        ),
    )


def build(run_id: str, profiles: list[Profile], start: datetime, cfg: dict) -> list[QueryResult]:
    t0, out = start.timestamp(), []
    for p in profiles:
        r = simulate(p, run_id, t0, "2.3.0", cfg)
        out.append(r)
        t0 = (r.timestamps.t_end or t0 + (p.stop_at or 0) + 1) + 3.0
    return out


def changed(p: Profile) -> Profile:
    factors = NEW_CHANGES.get(p.query, {})
    p = replace(p, **{k: getattr(p, k) * f for k, f in factors.items()})
    if p.query == "q10":
        p = replace(p, status=Status.OK, reason=None, stop_at=None)
    return p


def main() -> None:
    runs = {
        "quick-base": ("constructed-base", BASE, "0.4"),
        "quick-new": ("constructed-new", [changed(p) for p in BASE], "0.6"),
    }
    for i, (name, (run_id, profiles, fraction)) in enumerate(runs.items()):
        start = datetime(2026, 11, 28 + i, 12, 0, 0, tzinfo=timezone.utc)
        results = build(run_id, profiles, start, _config(fraction))
        ResultStore(HERE / name).write(results)
        print(f"{name}: {len(results)} results")


if __name__ == "__main__":
    main()

"""The embedded engine on local files against a cluster of two TaskManagers on a local S3
(issue 32's targets): per query, throughput, cores, per core, the phase checkpoint's duration
and the recovery, for three setups on the same events, so that the cluster's own cost and the
store's own cost are each a ratio of their own:

- `embedded/local`: Flink embedded (one JVM, 2 slots), the dataset and checkpoints on disk;
- `cluster/local`: a JobManager and two TaskManagers (separate JVMs, one slot each), started
  here from the pip-installed Flink (`LocalCluster`), the same local files;
- `cluster/s3`: the same cluster, the dataset read from and the checkpoints written to an
  s3proxy on loopback (`--data s3://... --checkpoints s3://...`), the store's CPU measured
  apart (it shares the 2 cores).

    .venv/bin/python benchmarks/bench_cluster_store.py [--events 4M] [--queries q0,q5]
        [--repeat 3] [--tm-memory 4g]

Each setup is a real `nexmark run` (parallelism 2, one file per reader) with its own results
directory; the table is read back from them. The cluster is started after the embedded run
and stopped at the end, so no idle JVM shares the machine with another setup's run.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

import psutil
from nexmark_cli import nexmark_run

from nexmark.engines.flink import jars, s3_access
from nexmark.engines.flink.local_cluster import LocalCluster, standalone_options
from nexmark.java import find_java
from nexmark.results.store import load_results
from nexmark.results.table import fmt_rate
from nexmark.storage.s3 import S3Settings
from nexmark.storage.s3proxy import S3Proxy

SETUPS = ("embedded/local", "cluster/local", "cluster/s3")
DATA, CKPT = "bench-data", "bench-ckpt"


def _cpu(pid: int | None) -> float:
    """CPU seconds of a process and its children so far (0 if it is gone)."""
    try:
        proc = psutil.Process(pid)
        procs = [proc, *proc.children(recursive=True)]
        return sum(sum(p.cpu_times()[:2]) for p in procs)
    except (psutil.NoSuchProcess, TypeError):
        return 0.0


def run_setup(name: str, args: argparse.Namespace, extra: list[str], env: dict) -> Path:
    run_args = ["-q", args.queries, "-n", args.events, "--repeat", str(args.repeat)]
    run_args += ["--parallelism", "2", "--timeout", args.timeout, *extra]
    print(f"$ nexmark run {' '.join(run_args)}", flush=True)
    started = time.monotonic()
    out = nexmark_run(args.out / name.replace("/", "-"), run_args, env)
    print(f"  {name}: {time.monotonic() - started:.0f} s", flush=True)
    return out


def _cell(value: float | None, fmt: str = "{:.2f}") -> str:
    return "-" if value is None else fmt.format(value)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--events", default="4M")
    ap.add_argument("--queries", default="q0,q5")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--timeout", default="20m")
    ap.add_argument("--tm-memory", default="4g", help="each TaskManager's process memory")
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args()
    results, store_cores = {}, {}
    with tempfile.TemporaryDirectory(prefix="bench-cluster-store-") as tmp:
        root = Path(tmp)
        args.out = args.out or root / "results"
        env = {**os.environ, "NEXMARK_DATA_DIR": str(root / "data")}
        results["embedded/local"] = run_setup("embedded/local", args, [], env)
        with S3Proxy(root / "s3", buckets=(DATA, CKPT)) as s3:
            plugin, store_options = s3_access.cluster_setup(S3Settings.from_env(s3.env()))
            options = {**standalone_options(slots=1), **store_options}
            options["taskmanager.memory.process.size"] = args.tm_memory
            cluster = LocalCluster(
                root / "cluster", find_java(), options, jars.ensure(jars.DEFAULT_GROUPS),
                {"s3-fs-hadoop": plugin},
            )  # fmt: skip
            try:
                cluster.start(taskmanagers=2)
                rest = ["--flink-rest", cluster.rest_url]
                results["cluster/local"] = run_setup("cluster/local", args, rest, env)
                on_store = [*rest, "--data", f"s3://{DATA}/e{args.events}",
                            "--checkpoints", f"s3://{CKPT}/bench"]  # fmt: skip
                before = _cpu(s3.pid())
                results["cluster/s3"] = run_setup("cluster/s3", args, on_store, {**env, **s3.env()})
                store_cores["cluster/s3"] = _cpu(s3.pid()) - before
            finally:
                cluster.stop()
        loaded = {name: {r.query: r for r in load_results(out)} for name, out in results.items()}
    print(f"\nFlink, {args.events} events, parallelism 2, median of {args.repeat} restored "
          f"benchmark phases; TaskManagers of {args.tm_memory}, one slot each\n")  # fmt: skip
    print("| query | setup | events/s | cores | per core | phase checkpoint | recovery | "
          "vs embedded |")  # fmt: skip
    print("|---|---|---|---|---|---|---|---|")
    for query in args.queries.split(","):
        base = loaded["embedded/local"].get(query)
        for name in SETUPS:
            r = loaded[name].get(query)
            if r is None or not r.throughput_eps:
                why = "missing" if r is None else (r.reason or r.status.value)
                print(f"| {query} | {name} | - | - | - | - | - | {why} |")
                continue
            ratio = "-"
            if base is not None and base.throughput_eps:
                ratio = f"{r.throughput_eps / base.throughput_eps:.2f}"
            phase = r.phase_checkpoint.duration_s if r.phase_checkpoint else None
            print(f"| {query} | {name} | {fmt_rate(r.throughput_eps)} | {_cell(r.cores)} | "
                  f"{_cell(r.throughput_per_core, '{:,.0f}')} | {_cell(phase, '{:.2f} s')} | "
                  f"{_cell(r.recovery_time_s, '{:.2f} s')} | {ratio} |")  # fmt: skip
    for name, used in store_cores.items():
        print(
            f"\ns3proxy used {used:.1f} CPU seconds during the {name} run (all queries, "
            "warm-ups, generation and checkpoints included): not in any Cores above"
        )


if __name__ == "__main__":
    main()

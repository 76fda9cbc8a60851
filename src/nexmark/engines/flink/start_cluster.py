"""Start a standalone Flink cluster of several TaskManagers on this machine, to point
`nexmark run --flink-rest URL` at (docs/clusters.md):

    python -m nexmark.engines.flink.start_cluster --taskmanagers 2 --slots 1

Each process a JVM of its own from the pip-installed Flink (local_cluster.LocalCluster); the
format jars linked into its lib/. Ctrl-C (or SIGTERM) stops them all and removes its folder.
"""

from __future__ import annotations

import argparse
import shutil
import signal
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from nexmark.engines.flink import jars
from nexmark.engines.flink.local_cluster import LocalCluster, standalone_options
from nexmark.errors import EngineError
from nexmark.java import find_java


def _interrupt(*_: object) -> None:
    raise KeyboardInterrupt


def main(argv: Sequence[str] | None = None) -> int:
    """Start a JobManager and N TaskManagers here, print the REST URL, stop on Ctrl-C."""
    parser = argparse.ArgumentParser(
        prog="python -m nexmark.engines.flink.start_cluster",
        description="A standalone Flink cluster of separate JVMs on this machine, for "
        "`nexmark run --flink-rest URL` (docs/clusters.md). Ctrl-C stops it.",
    )
    parser.add_argument("--taskmanagers", type=int, default=2, help="TaskManagers (default 2)")
    parser.add_argument("--slots", type=int, default=1, help="slots per TaskManager (default 1)")
    parser.add_argument("--heartbeat", type=float, default=1.0, help="heartbeat interval, s")
    parser.add_argument("--dir", type=Path, help="its home and logs (default: a temporary one)")
    args = parser.parse_args(argv)
    if args.taskmanagers < 1 or args.slots < 1 or args.heartbeat <= 0:
        parser.error("--taskmanagers, --slots and --heartbeat must be positive")
    root = args.dir or Path(tempfile.mkdtemp(prefix="nexmark-flink-cluster-"))
    signal.signal(signal.SIGTERM, _interrupt)  # `kill` stops it as Ctrl-C does, cleaned up
    cluster = None
    try:
        options = standalone_options(args.slots, args.heartbeat)
        cluster = LocalCluster(root, find_java(), options, jars.ensure(jars.DEFAULT_GROUPS))
        url = cluster.start(taskmanagers=args.taskmanagers)
        workers = ", ".join(f"{t.name} pid {t.pid}" for t in cluster.taskmanagers)
        print(
            f"Flink REST {url}: JobManager pid {cluster.jobmanager.pid}, {workers} "
            f"({args.slots} slot(s) each); logs in {root}. Ctrl-C stops it.",
            flush=True,
        )
        while cluster.jobmanager_alive():
            time.sleep(1)
        print("error: the JobManager exited", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 0
    except EngineError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    finally:
        if cluster is not None:
            cluster.stop()
        if args.dir is None:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    raise SystemExit(main())

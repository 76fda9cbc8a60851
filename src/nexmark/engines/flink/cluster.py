"""A standalone Flink cluster on this machine, run from the pip-installed PyFlink distribution.

The `pyflink` package directory is a Flink distribution (bin/, conf/, lib/, opt/, plugins/). We
make a private FLINK_HOME from it: bin/ copied (pip drops the scripts' execute bits) with our
own conf/, and lib/, opt/, plugins/ linked. Used by the remote-target tests and by anyone who
wants a local cluster to point `--flink-rest` at.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import stat
import subprocess
import time
from collections.abc import Sequence
from pathlib import Path

import psutil
import yaml

from nexmark.engines.flink import jars
from nexmark.engines.flink.rest import FlinkRest
from nexmark.engines.support import poll_until
from nexmark.errors import EngineError
from nexmark.java import JavaRuntime, find_java
from nexmark.processes import free_port


def _flatten(table: dict, prefix: str = "") -> dict[str, object]:
    flat: dict[str, object] = {}
    for key, value in table.items():
        if isinstance(value, dict):
            flat.update(_flatten(value, f"{prefix}{key}."))
        else:
            flat[f"{prefix}{key}"] = value
    return flat


class StandaloneCluster:
    """One JobManager and one TaskManager started with Flink's own scripts.

    Args:
        home: Directory to build the FLINK_HOME in (created; removed by nobody but you).
        slots: Task slots of the TaskManager.
        options: Extra Flink options for conf/config.yaml.
        java: Java runtime (default: `find_java()`).
        jar_groups: The format jars (`jars.py` groups) linked into its lib/, fetched if
            missing: by default those the engine reads with (parquet).
    """

    def __init__(
        self,
        home: Path,
        slots: int = 2,
        options: dict[str, str] | None = None,
        java: JavaRuntime | None = None,
        jar_groups: Sequence[str] = jars.DEFAULT_GROUPS,
    ):
        self.home = Path(home)
        self.jar_groups = tuple(jar_groups)
        self.slots = slots
        self.options = options or {}
        self.java = java or find_java()
        self.rest_port = free_port()

    @property
    def rest_url(self) -> str:
        return f"http://127.0.0.1:{self.rest_port}"

    def _env(self) -> dict[str, str]:
        return dict(
            os.environ,
            JAVA_HOME=str(self.java.home),
            FLINK_HOME=str(self.home),
            # PyFlink's gateway launcher sets these three in os.environ to the pip
            # distribution's folders, which the scripts would prefer to our home's (whose lib/
            # holds the format jars too).
            FLINK_LIB_DIR=str(self.home / "lib"),
            FLINK_OPT_DIR=str(self.home / "opt"),
            FLINK_PLUGINS_DIR=str(self.home / "plugins"),
            FLINK_CONF_DIR=str(self.home / "conf"),
            FLINK_LOG_DIR=str(self.home / "log"),
            FLINK_PID_DIR=str(self.home / "pid"),
        )

    def prepare(self) -> None:
        """Build the FLINK_HOME: copied scripts, linked jars, our configuration."""
        import pyflink

        dist = Path(pyflink.__file__).parent
        self.home.mkdir(parents=True, exist_ok=True)
        shutil.copytree(dist / "bin", self.home / "bin", dirs_exist_ok=True)
        for script in (self.home / "bin").iterdir():
            script.chmod(script.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
        # The scripts `find` jars in lib/ and opt/ without following a linked directory, so
        # those are real directories of linked files.
        for name in ("lib", "opt"):
            (self.home / name).mkdir(exist_ok=True)
            for jar in (dist / name).iterdir():
                if not (self.home / name / jar.name).exists():
                    (self.home / name / jar.name).symlink_to(jar)
        jars.link_into(self.home / "lib", jars.ensure(self.jar_groups))
        if not (self.home / "plugins").exists():
            (self.home / "plugins").symlink_to(dist / "plugins", target_is_directory=True)
        for name in ("conf", "log", "pid"):
            (self.home / name).mkdir(exist_ok=True)
        for conf in (dist / "conf").iterdir():
            if conf.name != "config.yaml":
                shutil.copy(conf, self.home / "conf" / conf.name)
        config = _flatten(yaml.safe_load((dist / "conf" / "config.yaml").read_text()) or {})
        config.update(
            {
                "jobmanager.rpc.address": "localhost",
                "jobmanager.rpc.port": free_port(),
                "rest.address": "127.0.0.1",
                "rest.bind-address": "127.0.0.1",
                "rest.port": self.rest_port,
                "taskmanager.numberOfTaskSlots": self.slots,
                "metrics.fetcher.update-interval": "1 s",
                # The job status the runner polls (a job's staged files wait for it).
                "web.refresh-interval": "50 ms",
                "rest.cache.checkpoint-statistics.timeout": "50 ms",
                # Metrics frozen at most 15 s once a TaskManager dies; the phase checkpoint
                # kept whatever periodic checkpoints complete before the stop
                # (options.METRIC_WAIT_KEY, options.RETAINED_KEY).
                "web.timeout": "15 s",
                "execution.checkpointing.num-retained": 10,
                "env.java.home": str(self.java.home),
                **self.options,
            }
        )
        (self.home / "conf" / "config.yaml").write_text(yaml.safe_dump(config, sort_keys=True))

    def start(self, timeout_s: float = 120.0) -> str:
        """Start the cluster and wait for its TaskManager; return the REST URL."""
        self.prepare()
        self._run("start-cluster.sh")
        rest = FlinkRest(self.rest_url, timeout_s=5)

        def taskmanager_up() -> bool:
            with contextlib.suppress(EngineError):
                return rest.overview().get("taskmanagers", 0) >= 1
            return False

        poll_until(
            taskmanager_up,
            timeout_s,
            0.5,
            f"standalone Flink cluster in {self.home} did not come up "
            f"within {timeout_s:.0f} s (see {self.home / 'log'})",
            EngineError,
            on_timeout=self.stop,
        )
        return self.rest_url

    def _run(self, script: str) -> None:
        done = subprocess.run(
            [str(self.home / "bin" / script)],
            env=self._env(),
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        if done.returncode != 0:
            raise EngineError(f"{script} failed: {(done.stderr or done.stdout).strip()[:300]}")

    def pids(self) -> list[int]:
        """Process ids of the cluster's JVMs, from Flink's pid files."""
        pids = []
        for pid_file in (self.home / "pid").glob("*.pid"):
            pids += [int(p) for p in pid_file.read_text().split() if p.strip().isdigit()]
        return pids

    def stop(self, timeout_s: float = 60.0) -> None:
        """SIGTERM every process of the cluster at once, SIGKILL whatever is left after
        `timeout_s`. Not Flink's stop-cluster.sh: it stops them one at a time, each through
        scripts that start a JVM of their own to read the configuration (9 s here, where the
        processes themselves exit in under 1 s)."""
        pids = [p for p in self.pids() if self._ours(p)]
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + timeout_s
        while pids and time.monotonic() < deadline:
            time.sleep(0.1)
            pids = [p for p in pids if _alive(p)]
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        for pid_file in (self.home / "pid").glob("*.pid"):
            pid_file.unlink(missing_ok=True)

    def _ours(self, pid: int) -> bool:
        """A process of this cluster (its command line names this home), not one that took
        the number of a process that already ended."""
        with contextlib.suppress(psutil.Error):
            command = " ".join(psutil.Process(pid).cmdline())
            return str(self.home) in command or str(self.home.resolve()) in command
        return False

    def __enter__(self) -> StandaloneCluster:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True

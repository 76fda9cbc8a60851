"""A Flink cluster of separate processes on this machine, for failover runs (docs/failover.md)
and as a standalone cluster of several TaskManagers to try `--flink-rest` on (docs/clusters.md:
`python -m nexmark.engines.flink.start_cluster --taskmanagers 2`).

One JobManager and TaskManagers, each a JVM of its own started in the foreground from the
pip-installed distribution (`jobmanager.sh` / `taskmanager.sh start-foreground`), each with its
own configuration directory, log directory and ports, so that one TaskManager can be killed
without warning and a replacement started, as a supervisor (Kubernetes, systemd) would.
The processes are ours (their pids, not a pid file), stopped by `stop` on every path; they
also die with this process (PR_SET_PDEATHSIG) should it be killed itself.
"""

from __future__ import annotations

import contextlib
import os
import pwd
import shutil
import signal
import stat
import subprocess
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import psutil
import yaml

from nexmark.engines.flink.rest import FlinkRest
from nexmark.engines.status import InjectedFailure
from nexmark.engines.support import poll_until
from nexmark.errors import EngineError
from nexmark.java import JavaRuntime
from nexmark.processes import die_with_parent, free_port


@dataclass
class FlinkProcess:
    """One JVM of the cluster."""

    name: str  # "jobmanager", "tm-1", ...
    process: subprocess.Popen
    log_dir: Path

    @property
    def pid(self) -> int:
        return self.process.pid

    def alive(self) -> bool:
        return self.process.poll() is None


class LocalCluster:
    """A JobManager and its TaskManagers as processes of this machine.

    Args:
        root: Directory for the cluster's FLINK_HOME, configurations and logs (created; the
            caller removes it).
        java: The Java runtime every process runs on.
        options: Flink options of every process (heartbeat, memory, slots, ...).
        extra_jars: Jars linked into its lib/ besides the distribution's (the formats' jars).
        plugins: Plugins besides the distribution's, by folder name: their jars linked into
            plugins/<name>/ (the S3 file system: `s3_access.cluster_setup`).
        user: Run every process as this OS user (the runner must be root), in folders it owns
            with its own copies of the jars: a cluster that shares no disk with the runner,
            whose files (in folders only their owner may open) it cannot read, as a cluster
            on other machines cannot. None: as the runner, sharing its disk.
    """

    def __init__(
        self,
        root: Path,
        java: JavaRuntime,
        options: dict[str, str],
        extra_jars: Sequence[Path] = (),
        plugins: dict[str, Sequence[Path]] | None = None,
        user: str | None = None,
    ):
        self.root = Path(root)
        self.user = user
        self._gid = pwd.getpwnam(user).pw_gid if user is not None else None  # its own group
        self.extra_jars = [Path(j) for j in extra_jars]
        self.plugins = {name: [Path(j) for j in jars] for name, jars in (plugins or {}).items()}
        self.java = java
        self.options = dict(options)
        self.rest_port = free_port()
        self.rpc_port = free_port()
        self.jobmanager: FlinkProcess | None = None
        self.taskmanagers: list[FlinkProcess] = []
        self._cpu: dict[int, float] = {}  # pid -> last CPU seconds seen (kept once it dies)
        self._home = self.root / "home"

    @property
    def rest_url(self) -> str:
        return f"http://127.0.0.1:{self.rest_port}"

    # -- start -----------------------------------------------------------------------------

    def start(self, timeout_s: float = 120.0, taskmanagers: int = 1) -> str:
        """Start the JobManager and `taskmanagers` TaskManagers; wait until all are listed."""
        self.launch(taskmanagers)
        return self.wait_started(timeout_s)

    def launch(self, taskmanagers: int = 1) -> None:
        """Start the JobManager and `taskmanagers` TaskManagers without waiting (the caller
        starts its own JVM meanwhile). Call it from the main thread (`launch_taskmanager`)."""
        self._prepare_home()
        self.jobmanager = self._launch("jobmanager", "jobmanager.sh", {})
        for _ in range(taskmanagers):  # start together
            self.launch_taskmanager()

    def wait_started(self, timeout_s: float = 120.0) -> str:
        """Wait until the JobManager lists every TaskManager launched; the REST URL."""
        for tm in self.taskmanagers:
            self.wait_registered(tm.name, timeout_s)
        return self.rest_url

    def start_taskmanager(self, timeout_s: float = 120.0) -> FlinkProcess:
        """Start one more TaskManager and wait until the JobManager lists it."""
        tm = self.launch_taskmanager()
        self.wait_registered(tm.name, timeout_s)
        return tm

    def launch_taskmanager(self) -> FlinkProcess:
        """Start one more TaskManager (`tm-<n>`, its Flink resource id too) without waiting.

        Call it from the main thread: the child dies with the thread that started it."""
        name = f"tm-{len(self.taskmanagers) + 1}"
        tm = self._launch(name, "taskmanager.sh", {"taskmanager.resource-id": name})
        self.taskmanagers.append(tm)
        return tm

    def running_taskmanagers(self) -> list[FlinkProcess]:
        return [t for t in self.taskmanagers if t.alive()]

    def wait_registered(self, name: str, timeout_s: float) -> None:
        rest = FlinkRest(self.rest_url, timeout_s=5)

        def registered() -> bool:
            with contextlib.suppress(EngineError):
                listed = rest.get("/taskmanagers").get("taskmanagers", [])
                if any(t.get("id") == name for t in listed):
                    return True
            self._check_running(name)  # a process that exited: its own error, at once
            return False

        poll_until(
            registered,
            timeout_s,
            0.2,
            f"Flink {name} did not register within {timeout_s:.0f} s "
            f"(see {self.root / name / 'log'})",
            EngineError,
        )

    def _check_running(self, name: str) -> None:
        for proc in [self.jobmanager, *self.taskmanagers]:
            if proc is not None and proc.name in ("jobmanager", name) and not proc.alive():
                raise EngineError(
                    f"Flink {proc.name} exited with code {proc.process.returncode} "
                    f"(see {proc.log_dir})"
                )

    def _place(self, source: Path, target: Path) -> None:
        """`source` at `target`: a link to it, or for a cluster of another user (which may not
        open the folders it is in) a file of its own, hard-linked where the disk allows."""
        if self.user is None:
            target.symlink_to(source.resolve())
            return
        try:
            os.link(source.resolve(), target)
        except OSError:  # another file system
            shutil.copy2(source, target)

    def _as_user(self) -> dict[str, object]:
        """Popen's arguments that start a process as the cluster's user, in its group only
        (none of the runner's groups)."""
        if self.user is None:
            return {}
        return {"user": self.user, "group": self._gid, "extra_groups": []}

    def _hand_over(self, folder: Path) -> None:
        """Give `folder` and the folders in it to the cluster's user (a no-op without one):
        its processes write their logs, pids and scratch there. Its files stay as they are
        (readable by all; a hard link's owner is the distribution's file's own)."""
        if self.user is None:
            return
        for path in [folder, *folder.rglob("*")]:
            if path.is_dir() and not path.is_symlink():
                shutil.chown(path, self.user, self._gid)

    def _prepare_home(self) -> None:
        """A FLINK_HOME of the pip distribution: scripts copied (pip drops their execute
        bits), jars linked (the scripts `find` them without following a linked directory)."""
        import pyflink

        dist = Path(pyflink.__file__).parent
        home = self._home
        shutil.copytree(dist / "bin", home / "bin", dirs_exist_ok=True)
        for script in (home / "bin").iterdir():
            script.chmod(script.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
        for name in ("lib", "opt"):
            (home / name).mkdir(parents=True, exist_ok=True)
            self._place_all((dist / name).iterdir(), home / name)
        self._place_all(self.extra_jars, home / "lib")
        # plugins/: the distribution's, and ours beside them (a plugin's jars are one folder
        # each, loaded apart from lib/).
        for folder in (dist / "plugins").iterdir():
            if folder.is_dir():
                self._place_all(folder.iterdir(), home / "plugins" / folder.name)
        for name, plugin_jars in self.plugins.items():
            self._place_all(plugin_jars, home / "plugins" / name)
        shutil.copytree(dist / "conf", home / "conf", dirs_exist_ok=True)
        self._hand_over(self.root)

    def _place_all(self, files: Iterable[Path], folder: Path) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        for file in files:
            if not (folder / file.name).exists():
                self._place(file, folder / file.name)

    def _config(self, own: dict[str, str]) -> dict[str, object]:
        """One process's config.yaml: the distribution's, the cluster's address, the options."""
        dist_conf = yaml.safe_load((self._home / "conf" / "config.yaml").read_text()) or {}
        config = _flatten(dist_conf)
        config.update(
            {
                "jobmanager.rpc.address": "localhost",
                "jobmanager.rpc.port": self.rpc_port,
                "jobmanager.bind-host": "localhost",
                "taskmanager.bind-host": "localhost",
                "taskmanager.host": "localhost",
                "rest.address": "127.0.0.1",
                "rest.bind-address": "127.0.0.1",
                "rest.port": self.rest_port,
                "env.java.home": str(self.java.home),
                "env.stdout-err.redirect-to-file": True,
                "io.tmp.dirs": str(self.root / "tmp"),  # removed with the engine's scratch
                **self.options,
                **own,
            }
        )
        return config

    def _launch(self, name: str, script: str, own: dict[str, str]) -> FlinkProcess:
        base = self.root / name
        conf, log, pid = base / "conf", base / "log", base / "pid"
        for folder in (conf, log, pid):
            folder.mkdir(parents=True, exist_ok=True)
        for file in (self._home / "conf").iterdir():
            if file.name != "config.yaml":
                shutil.copy(file, conf / file.name)
        (conf / "config.yaml").write_text(yaml.safe_dump(self._config(own), sort_keys=True))
        self._hand_over(base)
        env = dict(
            os.environ,
            JAVA_HOME=str(self.java.home),
            FLINK_HOME=str(self._home),
            # PyFlink's gateway launcher sets these three in os.environ to the pip
            # distribution's folders, which the scripts would prefer to our home's (whose lib/
            # holds the format jars too).
            FLINK_LIB_DIR=str(self._home / "lib"),
            FLINK_OPT_DIR=str(self._home / "opt"),
            FLINK_PLUGINS_DIR=str(self._home / "plugins"),
            FLINK_CONF_DIR=str(conf),
            FLINK_LOG_DIR=str(log),
            FLINK_PID_DIR=str(pid),
            FLINK_IDENT_STRING=name,
        )
        if self.user is not None:  # its own home too: nothing of the runner's is opened
            env["HOME"] = str(base)
        with open(log / "console.txt", "ab") as console:
            # The scripts exec into the JVM: this pid is the JVM's. Its own session keeps a
            # terminal's Ctrl-C from reaching it: `stop` ends it, in order.
            process = subprocess.Popen(
                [str(self._home / "bin" / script), "start-foreground"],
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=console,
                stderr=subprocess.STDOUT,
                start_new_session=True,
                # (Set after the user is: a change of user would clear it.)
                preexec_fn=die_with_parent,  # noqa: PLW1509 - only prctl, no locks taken
                **self._as_user(),
            )
        return FlinkProcess(name, process, log)

    # -- failures --------------------------------------------------------------------------

    def kill(self, name: str) -> tuple[FlinkProcess, float]:
        """SIGKILL the TaskManager `name`: no shutdown hook, no goodbye to the JobManager.
        Returns it and the unix time of the signal."""
        tm = next((t for t in self.taskmanagers if t.name == name and t.alive()), None)
        if tm is None:
            raise EngineError(f"no running Flink TaskManager {name} to kill")
        self._note_cpu(tm.pid)
        at = time.time()
        tm.process.send_signal(signal.SIGKILL)
        tm.process.wait(timeout=30)
        return tm, at

    def kill_and_replace(self, hosting: Sequence[str]) -> InjectedFailure:
        """SIGKILL the first running TaskManager of `hosting` (those running a job's sources;
        else the last one running), then start a replacement at once (as a supervisor would;
        the JobManager gets its slots once it registers)."""
        running = [t.name for t in self.running_taskmanagers()]
        chosen = [tm for tm in hosting if tm in running] or running[-1:]
        if not chosen:
            raise EngineError("no running TaskManager to kill")
        killed, at = self.kill(chosen[0])
        replacement = self.launch_taskmanager()
        return InjectedFailure(
            at, f"TaskManager {killed.name} (pid {killed.pid}); replacement {replacement.name}"
        )

    def jobmanager_alive(self, grace_s: float = 0.0) -> bool:
        """Whether the JobManager runs; with `grace_s`, a dying one is given that long to be
        seen dead (its sockets close before it exits: a request fails first)."""
        if self.jobmanager is None:
            return False
        if grace_s > 0:
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.jobmanager.process.wait(timeout=grace_s)
        return self.jobmanager.alive()

    # -- accounting and stop ---------------------------------------------------------------

    def pids(self) -> list[int]:
        return [p.pid for p in [self.jobmanager, *self.taskmanagers] if p and p.alive()]

    def cpu_seconds(self) -> float:
        """CPU seconds of every process the cluster ran, the killed ones up to their end."""
        for pid in self.pids():
            self._note_cpu(pid)
        return sum(self._cpu.values())

    def _note_cpu(self, pid: int) -> None:
        with contextlib.suppress(psutil.Error):
            times = psutil.Process(pid).cpu_times()
            self._cpu[pid] = times.user + times.system + times.children_user + times.children_system

    def stop(self, timeout_s: float = 30.0) -> None:
        """TaskManagers first, then the JobManager: SIGTERM, then SIGKILL after `timeout_s`.
        Safe to call twice."""
        for proc in [*self.taskmanagers, self.jobmanager]:
            if proc is not None and proc.alive():
                with contextlib.suppress(ProcessLookupError):
                    proc.process.terminate()
        deadline = time.monotonic() + timeout_s
        for proc in [*self.taskmanagers, self.jobmanager]:
            if proc is None:
                continue
            try:
                proc.process.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                proc.process.kill()
                proc.process.wait(timeout=10)
        self.taskmanagers, self.jobmanager = [], None


def standalone_options(slots: int = 1, heartbeat_s: float = 10.0) -> dict[str, str]:
    """Options of a standalone cluster the runner is pointed at with `--flink-rest`: `slots`
    per TaskManager, modest memory (several JVMs on one machine), the status and metrics
    served fresh (the runner polls them: Flink's 3 s cache would delay every phase), the
    heartbeat that bounds how soon a killed TaskManager is noticed (Flink: 10 s / 50 s), how
    long the metrics may freeze once one is (`web.timeout`), and enough retained checkpoints
    for the phase checkpoint to outlive the periodic ones taken before the stop."""
    return {
        "taskmanager.numberOfTaskSlots": str(slots),
        "taskmanager.memory.process.size": "1g",
        "jobmanager.memory.process.size": "1g",
        "metrics.fetcher.update-interval": "50 ms",
        "web.refresh-interval": "50 ms",
        "rest.cache.checkpoint-statistics.timeout": "50 ms",
        "heartbeat.interval": f"{int(heartbeat_s * 1000)} ms",
        "heartbeat.timeout": f"{int(heartbeat_s * 5000)} ms",
        # Flink's 10 min would freeze the REST metrics that long once a TaskManager dies
        # (options.METRIC_WAIT_KEY).
        "web.timeout": "15 s",
        # Flink's 1 lets a periodic checkpoint delete the phase checkpoint before the restore
        # (options.RETAINED_KEY): as many as a failover run's jobs ask for.
        "execution.checkpointing.num-retained": "10",
    }


def _flatten(table: dict, prefix: str = "") -> dict[str, object]:
    flat: dict[str, object] = {}
    for key, value in table.items():
        if isinstance(value, dict):
            flat.update(_flatten(value, f"{prefix}{key}."))
        else:
            flat[f"{prefix}{key}"] = value
    return flat

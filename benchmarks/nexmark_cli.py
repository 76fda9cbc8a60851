"""The one way the benchmark scripts run `nexmark run`: a real CLI run in a subprocess, its
results directory returned, its error printed (and the script stopped) if it fails."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path


def nexmark_run(out: Path, args: list[str], env: dict) -> Path:
    """`nexmark run ARGS --no-report --results OUT`; OUT."""
    command = [sys.executable, "-m", "nexmark", "run", *args, "--no-report", "--results", str(out)]
    done = subprocess.run(command, env=env, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"nexmark run failed ({done.returncode}):\n{done.stderr[-2000:]}")
    return out

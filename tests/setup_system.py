"""Install the system packages the tests need, only when they are missing.

Run by `make test` before pytest. Today that is Debian's `chromium` for the report's browser
test; the browser comes from the distribution's packages, never from a download of its own.
Skips quietly when the package is present or when this is not a Debian-like system run as root.
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


def ensure_chromium() -> int:
    """Install Debian's chromium if /usr/bin/chromium is missing; return a process exit code."""
    if CHROMIUM.exists():
        return 0
    if not _can_apt():
        print("setup_system: chromium missing and apt-get unusable; the browser test will skip")
        return 0
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    print("setup_system: installing Debian's chromium for the report browser test")
    for cmd in (["apt-get", "update"], ["apt-get", "install", "-y", "chromium"]):
        done = subprocess.run(cmd, env=env, check=False)
        if done.returncode != 0:
            print(f"setup_system: {' '.join(cmd)} failed with exit code {done.returncode}")
            return done.returncode
    return 0


if __name__ == "__main__":
    sys.exit(ensure_chromium())

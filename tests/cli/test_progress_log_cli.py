"""Progress in a log: `nexmark generate` and `nexmark dataset verify` with stderr captured (not a
terminal, as under nohup, CI or a redirect), their lines read back; `--quiet` prints none."""

from __future__ import annotations

import re
from pathlib import Path

from cli_process import nexmark

GENERATING = re.compile(
    r"generating: (?P<done>[\d,]+) / 400,000 events \((?P<pct>\d+)%\), [\d.]+[KM]? ev/s, "
    r"[\d.]+ cores, ETA (\d+ s|\d+ min \d\d s|- \(no progress\))"
)


def test_generate_and_verify_log_progress_lines_and_a_closing_line(tmp_path: Path):
    out = tmp_path / "ds"
    # Interval 0: a line at every update (the default is one every 15 s).
    gen = nexmark(
        "generate", "--events", "400K", "--files", "2", "--workers", "2", "--out", str(out),
        NEXMARK_PROGRESS_INTERVAL="0",
    )  # fmt: skip
    assert gen.returncode == 0, gen.stderr
    lines = gen.stderr.splitlines()
    progress = [m for line in lines if (m := GENERATING.fullmatch(line))]
    assert len(progress) >= 2, gen.stderr
    done = [int(m["done"].replace(",", "")) for m in progress]
    assert done == sorted(done) and 0 < done[0] < 400_000
    closing = [line for line in lines if line.startswith("generating done: ")]
    assert len(closing) == 1 and lines[-1] == closing[0], gen.stderr
    assert re.fullmatch(
        r"generating done: 400,000 events in [\d.]+ s, [\d.]+[KM]? ev/s, [\d.]+ cores", closing[0]
    )
    assert "dataset" in gen.stdout  # the summary stays on stdout

    check = nexmark("dataset", "verify", str(out), NEXMARK_PROGRESS_INTERVAL="0")
    assert check.returncode == 0, check.stderr
    last = check.stderr.splitlines()[-1]
    assert re.fullmatch(
        r"verifying done: [\d.]+ MiB in [\d.]+ s, [\d.]+ (MiB|GiB)/s, [\d.]+ cores", last
    )
    assert check.stdout.startswith("ok")


def test_quiet_prints_no_progress(tmp_path: Path):
    gen = nexmark(
        "--quiet", "generate", "--events", "40K", "--files", "2", "--out", str(tmp_path / "ds"),
        NEXMARK_PROGRESS_INTERVAL="0",
    )  # fmt: skip
    assert gen.returncode == 0, gen.stderr
    assert "generating" not in gen.stderr and "dataset" in gen.stdout
    check = nexmark("-q", "dataset", "verify", str(tmp_path / "ds"), NEXMARK_PROGRESS_INTERVAL="0")
    assert check.returncode == 0 and check.stderr == "", check.stderr


def test_a_bad_interval_is_one_line(tmp_path: Path):
    gen = nexmark(
        "generate", "--events", "4K", "--out", str(tmp_path / "ds"),
        NEXMARK_PROGRESS_INTERVAL="soon",
    )  # fmt: skip
    assert gen.returncode == 2, gen.stderr
    assert gen.stderr.strip().splitlines() == [
        "error: NEXMARK_PROGRESS_INTERVAL must be a duration like 30s, 10min or 1h, got 'soon'"
    ]

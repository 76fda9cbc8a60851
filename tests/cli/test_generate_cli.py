"""`nexmark generate` and `nexmark dataset verify` through a real `python -m nexmark` process; the
refusals of bad input, found before any work, through the same entry point in process."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from cli_process import nexmark


def one_error_line(result: subprocess.CompletedProcess, code: int, words: str) -> None:
    assert result.returncode == code, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr  # one line, no traceback
    assert lines[0].startswith("error:") and words in lines[0], lines[0]


@pytest.fixture(scope="module")
def dataset(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("cli") / "ds"
    result = nexmark("generate", "--events", "4K", "--files", "2", "--out", str(out))
    assert result.returncode == 0, result.stderr
    assert str(out) in result.stdout and "4K" in result.stdout and "events/s" in result.stdout
    return out


def test_generate_writes_a_dataset_and_reuses_it(dataset):
    manifest = json.loads((dataset / "manifest.json").read_text())
    assert manifest["events"] == 4000 and manifest["params"]["files"] == 2
    assert manifest["file_format"]["name"] == "parquet"
    assert sorted(p.name for p in (dataset / "warmup").iterdir()) == [
        "part-00000-000.parquet",
        "part-00000-001.parquet",
    ]
    again = nexmark("generate", "--events", "4000", "--files", "2", "--out", str(dataset))
    assert again.returncode == 0 and "reused" in again.stdout


def test_csv_format_on_request(tmp_path):
    out = tmp_path / "csv"
    result = nexmark("generate", "-n", "4K", "--files", "2", "--format", "csv", "--out", str(out))
    assert result.returncode == 0, result.stderr
    assert "CSV" in result.stdout
    names = sorted(p.name for p in (out / "benchmark").iterdir())
    assert names == ["part-00000-000.csv", "part-00000-001.csv"]
    assert nexmark("dataset", "verify", str(out)).returncode == 0


def test_default_output_is_keyed_by_the_parameters(tmp_path):
    env = {"NEXMARK_DATA_DIR": str(tmp_path)}
    result = nexmark("generate", "-n", "1e3", "--seed", "3", "--files", "1", env=env)
    assert result.returncode == 0, result.stderr
    [made] = list(tmp_path.iterdir())
    assert made.name.startswith("e1000-s3-") and (made / "manifest.json").is_file()


def test_verify_accepts_a_good_dataset(dataset):
    result = nexmark("dataset", "verify", str(dataset))
    assert result.returncode == 0, result.stderr
    assert "ok" in result.stdout and "match the manifest" in result.stdout


def test_verify_detects_a_corrupted_file(dataset, tmp_path, nexmark_main):
    copy = tmp_path / "copy"
    subprocess.run(["cp", "-r", str(dataset), str(copy)], check=True)
    victim = max((copy / "benchmark").glob("*.parquet"), key=lambda p: p.stat().st_size)
    data = bytearray(victim.read_bytes())
    data[len(data) // 2] ^= 0x55  # one byte in a column chunk, same size
    victim.write_bytes(bytes(data))
    one_error_line(nexmark_main("dataset", "verify", str(copy)), 3, "checksum")


def test_verify_detects_a_truncated_file(dataset, tmp_path, nexmark_main):
    copy = tmp_path / "copy"
    subprocess.run(["cp", "-r", str(dataset), str(copy)], check=True)
    victim = max((copy / "warmup").glob("*.parquet"), key=lambda p: p.stat().st_size)
    victim.write_bytes(victim.read_bytes()[:-100])
    one_error_line(nexmark_main("dataset", "verify", str(copy)), 3, "bytes, the manifest says")


def test_unknown_format_is_one_line(tmp_path, nexmark_main):
    result = nexmark_main("generate", "-n", "1000", "--format", "orc", "--out", str(tmp_path / "x"))
    one_error_line(result, 2, "unknown dataset format 'orc'")


def test_verify_of_a_non_dataset(tmp_path, nexmark_main):
    one_error_line(nexmark_main("dataset", "verify", str(tmp_path)), 3, "not a complete dataset")


@pytest.mark.parametrize(
    "args, words",
    [
        (["--events", "0"], "positive"),
        (["--events", "-5"], "positive"),
        (["--events", "lots"], "not a number"),
        (["--events", "1.5"], "whole number"),
        (["--events", "1000", "--warmup-fraction", "1.5"], "between 0 and 1"),
        (["--events", "1000", "--warmup-fraction", "0"], "between 0 and 1"),
        (["--events", "1000", "--event-rate", "0"], "event rate must be a positive"),
        (["--events", "1000", "--workers", "-1"], "workers"),
        (["--events", "1000", "--files", "0"], "files"),
        (["--events", "1000", "--seed", "-3"], "seed"),
        (["--events", "1000", "--base-time", "yesterday"], "not a time"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(tmp_path, nexmark_main, args, words):
    one_error_line(nexmark_main("generate", *args, "--out", str(tmp_path / "x")), 2, words)


def test_unwritable_output(tmp_path, nexmark_main):
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    result = nexmark_main("generate", "--events", "1000", "--out", str(blocker / "ds"))
    one_error_line(result, 3, "cannot write")


def test_too_little_disk(tmp_path, nexmark_main):
    # The free-space probe is the only thing faked: NEXMARK_FREE_BYTES pretends 1 MiB is free.
    result = nexmark_main(
        "generate", "--events", "1M", "--out", str(tmp_path / "ds"),
        env={"NEXMARK_FREE_BYTES": str(1 << 20)},
    )  # fmt: skip
    one_error_line(result, 3, "not enough disk space")
    assert not (tmp_path / "ds").exists()


@pytest.mark.parametrize("workers", ["1", "2"])
def test_ctrl_c_leaves_nothing_behind(tmp_path, workers):
    out = tmp_path / "ds"
    args = ["generate", "--events", "50M", "--workers", workers, "--out", str(out)]
    proc = subprocess.Popen(
        [sys.executable, "-m", "nexmark", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,  # Ctrl-C goes to the whole process group, as in a terminal
        # As in a terminal: a suite started in the background inherits SIGINT ignored (the
        # child then never sees the Ctrl-C and writes all 50M events).
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    try:
        deadline = time.monotonic() + 120
        while not any(f.stat().st_size for f in tmp_path.glob(".ds.tmp-*/*/*.parquet")):
            assert proc.poll() is None and time.monotonic() < deadline, "never started writing"
            time.sleep(0.05)
        os.killpg(proc.pid, signal.SIGINT)
        try:
            proc.communicate(timeout=60)
        except subprocess.TimeoutExpired as exc:  # say where the Ctrl-C went
            pytest.fail(f"still writing 60 s after Ctrl-C; stderr: {(exc.stderr or b'')[-2000:]}")
    finally:
        if proc.poll() is None:  # a failed check must not leave 50M events being written
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    assert proc.returncode == 130
    assert list(tmp_path.iterdir()) == []  # no dataset, no temp dir, no stray file


def test_a_killed_writer_process_fails_the_run_in_one_line(tmp_path):
    """A worker killed by the system (here SIGKILL, as the out-of-memory killer does) must
    end the run with an error, not leave it waiting forever for that worker's file."""
    import psutil

    out = tmp_path / "ds"
    args = ["generate", "--events", "50M", "--workers", "2", "--out", str(out)]
    proc = subprocess.Popen(
        [sys.executable, "-m", "nexmark", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 120
        while len(list(tmp_path.glob(".ds.tmp-*/*/*.parquet"))) < 2:  # both processes write
            assert proc.poll() is None and time.monotonic() < deadline, "never started writing"
            time.sleep(0.05)
        children = psutil.Process(proc.pid).children()
        # The spawned writer, not the resource tracker that multiprocessing also starts.
        (worker,) = [c for c in children if "spawn_main" in " ".join(c.cmdline())]
        worker.kill()
        _, stderr = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:  # a failed check must not leave 50M events being written
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    lines = stderr.decode().strip().splitlines()
    assert proc.returncode == 3 and len(lines) == 1, stderr
    assert "process died (exit code -9" in lines[0]
    assert list(tmp_path.iterdir()) == []  # the temp dir is gone too

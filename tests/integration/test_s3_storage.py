"""Datasets on an object store, for real: the session's local s3proxy (a JVM over a temporary
folder), datasets generated there, verified there and read back event for event and
byte for byte as the same dataset generated on local disk; the bad inputs as one line each
through a real `python -m nexmark`; the server gone after stop, SIGTERM or its parent's death."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator

import psutil
import pytest

from cli_process import nexmark
from nexmark.errors import DatasetError
from nexmark.storage import files
from nexmark.storage.s3 import S3Url, StorageError
from nexmark.storage.s3proxy import S3Proxy
from nexmark.workload import reader
from nexmark.workload.dataset import MANIFEST, Dataset, DatasetParams
from nexmark.workload.writer import ensure_dataset

pytestmark = pytest.mark.slow

BUCKET = "nexmark-test"
EVENTS = 20_000


@pytest.fixture(scope="module")
def s3(s3_server: S3Proxy) -> Iterator[S3Proxy]:
    """The session's server (its end checked by the fixture), this module's bucket on it, and
    the AWS variables of this process set to reach it (spawned writer processes inherit them)
    for the module's duration."""
    s3_server.make_bucket(BUCKET)
    saved = dict(os.environ)
    os.environ.update(s3_server.env())
    try:
        yield s3_server
    finally:
        os.environ.clear()
        os.environ.update(saved)


def _running(pid: int | None) -> bool:
    try:
        return pid is not None and psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def params(**kw) -> DatasetParams:
    return DatasetParams(events=EVENTS, files=2, **kw)


@pytest.fixture(scope="module")
def local_twin(tmp_path_factory) -> Dataset:
    out = tmp_path_factory.mktemp("local") / "ds"
    return ensure_dataset(params(), out, workers=1, show_progress=False)


@pytest.fixture(scope="module")
def on_store(s3: S3Proxy) -> Dataset:
    """Written by two processes (this one and a spawned one), as a large dataset would be."""
    return ensure_dataset(params(), f"s3://{BUCKET}/ds", workers=2, show_progress=False)


def test_a_dataset_on_the_store_is_the_local_one_byte_for_byte(on_store, local_twin, s3):
    assert isinstance(on_store.path, S3Url) and not on_store.reused
    assert on_store.id == local_twin.id
    stored, local = on_store.files(), local_twin.files()
    assert [f.path.name for f in stored] == [f.path.name for f in local]
    assert [(f.bytes, f.checksum) for f in stored] == [(f.bytes, f.checksum) for f in local]
    # The objects are where the manifest says, under the bucket's folder of the blobstore.
    blob = s3.blobs / BUCKET / "ds" / "warmup" / local[0].path.name
    assert blob.read_bytes() == local[0].path.read_bytes()
    on_store.verify()  # re-reads every object: sizes, checksums, counts


def test_the_reader_returns_the_same_events_from_the_store(on_store, local_twin):
    for part in ("warmup", "benchmark"):
        a = reader.read_table(f"s3://{BUCKET}/ds", part)
        b = reader.read_table(local_twin.path, part)
        assert a.num_rows == b.num_rows > 0 and a.equals(b)
    middle = reader.read_table(on_store, start=14_990, stop=15_010)  # across the parts
    assert middle.column("event_number").to_pylist() == list(range(14_990, 15_010))


def test_the_manifest_comes_last_and_holds_no_credentials(on_store, s3):
    manifest = (s3.blobs / BUCKET / "ds" / MANIFEST).read_text()
    assert json.loads(manifest)["dataset_id"] == on_store.id
    for secret in (s3.settings.secret_key, s3.settings.access_key, s3.endpoint):
        assert secret not in manifest
    # Every data object is older than (or as old as) the manifest: written before it.
    data = [p for p in (s3.blobs / BUCKET / "ds").rglob("*.parquet")]
    latest = max(p.stat().st_mtime_ns for p in data)
    assert latest <= (s3.blobs / BUCKET / "ds" / MANIFEST).stat().st_mtime_ns


def test_an_identical_dataset_on_the_store_is_reused(on_store):
    again = ensure_dataset(params(), f"s3://{BUCKET}/ds", show_progress=False)
    assert again.reused and again.id == on_store.id


def test_a_half_written_dataset_is_refused_then_overwritten(s3, local_twin):
    url = S3Url(BUCKET, "half")
    ensure_dataset(params(), url, workers=1, show_progress=False)
    files.delete(url / MANIFEST)  # as if the generation had stopped before its last step
    (s3.blobs / BUCKET / "half" / "warmup" / "part-00007-000.parquet").write_bytes(b"junk")
    with pytest.raises(DatasetError, match="objects but no manifest.json"):
        Dataset(url)
    # A new generation takes its place (the stray file of another layout removed).
    again = ensure_dataset(params(), url, workers=1, show_progress=False)
    assert not again.reused
    again.verify()
    assert [f.checksum for f in again.files()] == [f.checksum for f in local_twin.files()]


def test_a_damaged_object_fails_verification_in_one_line(s3):
    url = S3Url(BUCKET, "damaged")
    ds = ensure_dataset(params(), url, workers=1, show_progress=False)
    victim = s3.blobs / BUCKET / "damaged" / "benchmark" / ds.files("benchmark")[0].path.name
    victim.write_bytes(victim.read_bytes()[:-10])
    with pytest.raises(DatasetError, match="bytes, the manifest says") as err:
        Dataset(url).verify()
    assert "\n" not in str(err.value)
    with pytest.raises(DatasetError, match="is damaged"):  # and it is not reused
        ensure_dataset(params(), url, show_progress=False)


def test_a_prefix_holding_other_objects_is_refused(s3):
    (s3.blobs / BUCKET / "other").mkdir()
    (s3.blobs / BUCKET / "other" / "notes.txt").write_text("not a dataset")
    with pytest.raises(DatasetError, match="not a dataset"):
        ensure_dataset(params(), f"s3://{BUCKET}/other", show_progress=False)


def test_a_csv_dataset_round_trips_too(local_twin):
    ds = ensure_dataset(params(format="csv"), f"s3://{BUCKET}/csv", show_progress=False)
    ds.verify()
    assert reader.read_table(ds).equals(reader.read_table(local_twin))


# -- the command line, and the bad inputs: one line each, before any work ------------------


def one_error_line(result: subprocess.CompletedProcess, words: str) -> str:
    assert result.returncode == 3, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error:") and words in lines[0], result.stderr
    return lines[0]


def test_generate_and_verify_on_the_command_line(on_store, tmp_path):
    url = f"s3://{BUCKET}/cli"
    done = nexmark("generate", "-n", "20K", "--files", "2", "--data", url)
    assert done.returncode == 0, done.stderr
    assert f"dataset   {url}" in done.stdout
    checked = nexmark("dataset", "verify", url)
    assert checked.returncode == 0, checked.stderr
    assert f"ok        {url}: 4 files, 20K events" in checked.stdout


def test_bad_stores_are_one_line_each(s3, tmp_path):
    started = time.monotonic()
    line = one_error_line(
        nexmark("generate", "-n", "20K", "--data", "s3://no-such-bucket/ds"), "no bucket"
    )
    assert "'no-such-bucket'" in line
    line = one_error_line(
        nexmark("dataset", "verify", f"s3://{BUCKET}/ds", AWS_SECRET_ACCESS_KEY="wrong-secret"),
        "refused the credentials",
    )
    assert "wrong-secret" not in line and s3.settings.secret_key not in line
    dead = nexmark(
        "generate", "-n", "20K", "--data", f"s3://{BUCKET}/x", AWS_ENDPOINT_URL="http://127.0.0.1:9"
    )
    one_error_line(dead, "does not answer")
    ensure_dataset(params(), f"s3://{BUCKET}/unfinished", workers=1, show_progress=False)
    files.delete(S3Url(BUCKET, "unfinished") / MANIFEST)
    one_error_line(nexmark("dataset", "verify", f"s3://{BUCKET}/unfinished"), "no manifest.json")
    # Checked before any work: nothing was generated into the staging folder or the store.
    assert not (s3.blobs / BUCKET / "x").exists()
    assert time.monotonic() - started < 60


# -- the server's life ---------------------------------------------------------------------

_CHILD = textwrap.dedent(
    """
    import sys, time
    from nexmark import interrupts
    from nexmark.storage.s3proxy import S3Proxy
    interrupts.handle_terminate()
    with S3Proxy(sys.argv[1]) as s3:
        print(s3.pid(), flush=True)
        time.sleep(120)
    """
)


@pytest.mark.parametrize("how", [signal.SIGTERM, signal.SIGKILL])
def test_no_jvm_outlives_its_runner(tmp_path, how):
    """SIGTERM: the runner stops the server on its way out; SIGKILL: the JVM dies with it."""
    child = subprocess.Popen(
        [sys.executable, "-c", _CHILD, str(tmp_path / "srv")],
        stdout=subprocess.PIPE,
        text=True,
        env=dict(os.environ),
    )
    try:
        jvm = int(child.stdout.readline())
        assert _running(jvm)
        child.send_signal(how)
        child.wait(30)
        deadline = time.monotonic() + 15
        while _running(jvm) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert not _running(jvm)
    finally:
        child.kill()
        child.wait()


def test_a_server_that_cannot_start_is_one_line(tmp_path, monkeypatch):
    server = S3Proxy(tmp_path / "srv")
    monkeypatch.setattr(server, "_properties", lambda: "s3proxy.endpoint=http://127.0.0.1:1\n")
    with pytest.raises(Exception, match="s3proxy exited with code") as err:
        server.start()
    assert "\n" not in str(err.value)
    assert server.process is None


def test_stop_leaves_no_process(tmp_path):
    server = S3Proxy(tmp_path / "srv").start()
    pid = server.pid()
    assert _running(pid)
    server.stop()
    server.stop()  # twice is fine
    assert not _running(pid)


def test_a_store_error_is_a_dataset_error():
    assert issubclass(StorageError, DatasetError)

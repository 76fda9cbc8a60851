"""A remote Flink cluster's probes (engines/flink/remote_checks.py) with the cluster faked: which
file the probe job is given, and the one line each failure becomes. The real probes run in
tests/engines/test_flink_remote.py and the S3 cluster tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from fake_engine import FakeEngine
from nexmark.engines.flink import remote_checks
from nexmark.errors import EngineError, UsageError
from nexmark.storage.s3 import S3Url

REST = "http://cluster:8081"
STORE = [S3Url("runs", "checkpoints/q5")]


@pytest.fixture
def store_calls(monkeypatch):
    """The store's uploads and removals, recorded instead of sent."""
    calls: dict[str, list] = {"uploaded": [], "removed": []}
    monkeypatch.setattr(
        remote_checks.storage_files,
        "upload",
        lambda local, url: calls["uploaded"].append((Path(local).name, url)),
    )
    monkeypatch.setattr(
        remote_checks.storage_files, "remove_tree", lambda url: calls["removed"].append(url)
    )
    return calls


def test_from_files_the_probe_is_read_from_the_work_directory(tmp_path, store_calls):
    seen: list = []
    remote_checks.check_reads(REST, "parquet", tmp_path, lambda p, f, w: seen.append(p), [])
    (part,) = seen
    assert isinstance(part, Path) and part.parent == tmp_path
    assert not part.exists()  # removed after the check
    assert store_calls == {"uploaded": [], "removed": []}


def test_on_a_store_the_probe_is_read_from_the_store_only(tmp_path, store_calls):
    """No disk shared with the runner: the job is given the store's copy, and nothing of the
    probe is ever written into the (local) work directory."""
    seen: list = []
    remote_checks.check_reads(REST, "parquet", tmp_path, lambda p, f, w: seen.append(p), STORE)
    (part,) = seen
    assert isinstance(part, S3Url) and str(part).startswith("s3://runs/checkpoints/q5/")
    ((name, url),) = store_calls["uploaded"]
    assert name.endswith(".parquet") and str(url) == f"{part}/{name}"
    assert store_calls["removed"] == [part]
    assert list(tmp_path.iterdir()) == []


def _failing(message: str):
    def run_probe(part, file_format, work_dir):
        raise RuntimeError(message)

    return run_probe


def test_a_missing_format_class_on_the_store_names_the_jars(tmp_path, store_calls):
    probe = _failing("java.lang.ClassNotFoundException: org.apache.parquet.hadoop.ParquetReader")
    with pytest.raises(EngineError) as caught:
        remote_checks.check_reads(REST, "parquet", tmp_path, probe, STORE)
    message = str(caught.value)
    assert "\n" not in message and "cannot read parquet files" in message
    assert "flink-sql-parquet-2.3.0.jar" in message and len(store_calls["removed"]) == 1


def test_a_store_the_cluster_cannot_reach_names_its_plugin(tmp_path, store_calls):
    probe = _failing("Could not find a file system implementation for scheme 's3'")
    with pytest.raises(EngineError) as caught:
        remote_checks.check_reads(REST, "parquet", tmp_path, probe, STORE)
    message = str(caught.value)
    assert "\n" not in message and "from the store" in message and "plugins/" in message


def test_from_files_a_failure_names_the_jars(tmp_path, store_calls):
    with pytest.raises(EngineError, match="its lib/ on every JobManager"):
        remote_checks.check_reads(REST, "avro", tmp_path, _failing("NoClassDefFoundError"), [])


def test_an_engine_without_an_object_store_says_so_in_one_line():
    """The interface's default (`Engine.use_object_store`): what `--data s3://` meets on an
    engine that cannot read from or checkpoint to a store."""
    with pytest.raises(UsageError) as caught:
        FakeEngine().use_object_store(object(), ["s3://b/x"])  # type: ignore[arg-type]
    assert str(caught.value) == "fake cannot read from or checkpoint to an object store"

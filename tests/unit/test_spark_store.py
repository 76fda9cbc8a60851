"""Spark on an object store, the runner's own logic without a JVM or a store: which folder a
query watches, the store-order proof of a release, and the checkpoint operations on local
folders (the same calls serve `s3://` locations; tests/integration/test_s3_run.py runs them
on a real S3 API)."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest

from nexmark.engines.spark import restore, source
from nexmark.engines.spark import store as spark_store
from nexmark.engines.spark.job import dir_bytes, log_ids, source_log_files
from nexmark.engines.spec import JobSpec
from nexmark.errors import EngineError
from nexmark.storage import files
from nexmark.storage.s3 import S3Url


def _spec(tmp_path: Path, **extra) -> JobSpec:
    return JobSpec(query="q0", source=tmp_path / "data" / "warmup", work_dir=tmp_path / "job",
                   **extra)  # fmt: skip


def _log(checkpoint: Path, *paths: str) -> None:
    """A file source log (`sources/0/0`) naming `paths`, as Spark writes it."""
    log = checkpoint / "sources" / "0"
    log.mkdir(parents=True)
    lines = ["v1"] + [json.dumps({"path": p, "timestamp": 1, "batchId": 0}) for p in paths]
    (log / "0").write_text("\n".join(lines))


def test_local_part_and_checkpoint_watch_the_folder_beside_the_checkpoint(tmp_path):
    checkpoint = tmp_path / "job" / "checkpoint"
    assert spark_store.watch_dir(_spec(tmp_path), tmp_path, checkpoint, None) == (
        tmp_path / "job" / "source"
    )


def test_a_fresh_query_on_a_store_part_watches_its_feed_prefix(tmp_path):
    spec = _spec(tmp_path, feed_dir=S3Url.parse("s3://ckpt/run/q5/run-1/source"))
    part = S3Url.parse("s3://data/ds/warmup")
    watched = spark_store.watch_dir(spec, part, S3Url.parse("s3://ckpt/run/q5/run-1/c"), None)
    assert watched == S3Url.parse("s3://ckpt/run/q5/run-1/source")
    with pytest.raises(EngineError, match="needs a feed prefix"):
        spark_store.watch_dir(_spec(tmp_path), part, tmp_path / "c", None)


def test_a_restored_query_watches_the_folder_its_log_read_from(tmp_path):
    """A restore's private copy may sit anywhere: the log says where the warm-up read."""
    checkpoint = tmp_path / "checkpoint-restore-1"
    _log(checkpoint, "s3://ckpt/run/q5/run-1/source/warmup-part-00000-000.parquet")
    part = S3Url.parse("s3://data/ds/benchmark")
    assert spark_store.watch_dir(_spec(tmp_path), part, checkpoint, 3) == S3Url.parse(
        "s3://ckpt/run/q5/run-1/source"
    )
    local = tmp_path / "local-restore"
    _log(local, "file:///work/q5/source/warmup-part-00000-000.parquet")
    assert spark_store.logged_folder(local) == Path("/work/q5/source")  # a local part's


def test_a_checkpoint_that_logged_no_file_names_no_folder(tmp_path):
    (tmp_path / "c").mkdir()
    with pytest.raises(EngineError, match="logs no file read"):
        spark_store.logged_folder(tmp_path / "c")


def test_a_store_release_whose_clock_went_back_is_refused(monkeypatch):
    """Spark sorts a listing (key order on S3) by LastModified, stably: equal times keep key
    order, but a later key dated earlier would be read first."""
    into = S3Url.parse("s3://ckpt/source")
    paths = [into / f"warmup-part-0000{i}-000.parquet" for i in range(3)]
    feed = SimpleNamespace(dir=into, paths=paths)

    def listing(times):
        return lambda where: [(p, 10, t) for p, t in zip(paths, times, strict=True)]

    monkeypatch.setattr(files, "files_under", listing([5.0, 5.0, 6.0]))
    source.check_store_order(feed)  # one tick for two copies: key order holds
    monkeypatch.setattr(files, "files_under", listing([5.0, 7.0, 6.0]))
    with pytest.raises(EngineError, match="part-00002-000.parquet before .*part-00001"):
        source.check_store_order(feed)


def test_checkpoint_logs_and_sizes_read_through_the_storage_layer(tmp_path):
    checkpoint = tmp_path / "checkpoint"
    for log in ("offsets", "commits"):
        (checkpoint / log).mkdir(parents=True)
        for n in (0, 1, 10):
            (checkpoint / log / str(n)).write_text("v1\n{}")
        (checkpoint / log / ".10.tmp").write_text("")  # a write in progress is no batch
    _log(checkpoint, "file:///w/source/warmup-part-00000-000.parquet")
    assert log_ids(checkpoint / "offsets") == [0, 1, 10]
    assert log_ids(checkpoint / "missing") == []
    assert source_log_files(checkpoint) == {0: ["file:///w/source/warmup-part-00000-000.parquet"]}
    total = sum(p.stat().st_size for p in checkpoint.rglob("*") if p.is_file())
    assert dir_bytes(checkpoint) == total
    assert dir_bytes(checkpoint, since=files.mtime(checkpoint / "offsets" / "0") + 3600) == 0


def test_each_restore_gets_its_own_numbered_copy(tmp_path):
    checkpoint = tmp_path / "checkpoints"
    (checkpoint / "commits").mkdir(parents=True)
    (checkpoint / "commits" / "4").write_text("v1")
    first, second = restore.private_copy(checkpoint), restore.private_copy(checkpoint)
    assert (first.name, second.name) == ("checkpoints-restore-1", "checkpoints-restore-2")
    assert (second / "commits" / "4").read_text() == "v1"
    with pytest.raises(EngineError, match="no checkpoint directory"):
        restore.private_copy(tmp_path / "none")

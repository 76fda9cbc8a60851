"""`--data` and `--checkpoints` parsed once a command (protocol/preparation/options.py,
`RunOptions`): every layer from the flag to the engine takes the typed location (a `Path` or an
`S3Url`) and asks it, none parses the text again. `nexmark run` drives it in process on the fake
engine, its store a local folder under pyarrow's S3 paths (no server), the suite itself left
out; below it, each engine's store code is given a job's spec as the protocol builds it."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from fake_engine import FakeEngine
from nexmark.cli import run as run_command
from nexmark.engines import registry
from nexmark.engines.flink import options as flink_options
from nexmark.engines.flink import store as flink_store
from nexmark.engines.source import FileSource, file_part
from nexmark.engines.spark import restore as spark_restore
from nexmark.engines.spark import store as spark_store
from nexmark.errors import UsageError
from nexmark.protocol.preparation import checks, store
from nexmark.protocol.preparation.options import RunOptions
from nexmark.settings import Settings
from nexmark.storage import s3
from nexmark.storage.s3 import S3Url

DATA, CHECKPOINTS = "s3://bucket/prefix", "s3://bucket/ckpt"


@pytest.fixture
def parsed(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every text `S3Url.parse` is given from here on."""
    seen: list[str] = []
    parse = S3Url.parse

    def counted(cls, text: str) -> S3Url:
        seen.append(text)
        return parse(text)

    monkeypatch.setattr(S3Url, "parse", classmethod(counted))
    return seen


@pytest.fixture
def local_store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A store in a local folder: `s3://bucket/key` is `<folder>/bucket/key` for every
    `storage.files` call. A local file system writes no file into a missing folder (S3 has
    none), so the dataset's part folders are made first."""
    from pyarrow import fs as pafs

    root = tmp_path / "store"
    for part in ("warmup", "benchmark"):
        (root / "bucket" / "prefix" / part).mkdir(parents=True)
    local = pafs.SubTreeFileSystem(str(root), pafs.LocalFileSystem())
    monkeypatch.setattr(s3, "_filesystem", lambda settings: local)
    return root


def test_the_options_parse_the_flags_text_once_and_their_copies_keep_it(parsed):
    options = RunOptions(queries=("q0",), events=10, data=DATA, checkpoints=CHECKPOINTS)
    assert options.data == S3Url("bucket", "prefix")
    assert options.checkpoints == S3Url("bucket", "ckpt")
    copy = dataclasses.replace(options, events=20)  # a sitting's options: made again
    assert copy.data is options.data and copy.checkpoints is options.checkpoints
    assert parsed == [DATA, CHECKPOINTS]
    assert RunOptions(queries=("q0",), events=10, data="some/dir").data == Path("some/dir")
    assert RunOptions(queries=("q0",), events=10, data="").data is None  # the cache
    with pytest.raises(UsageError, match="--checkpoints /tmp/c: an s3://bucket/prefix is expected"):
        RunOptions(queries=("q0",), events=10, checkpoints="/tmp/c")


def test_the_run_prefix_and_what_the_engine_reaches_come_from_the_typed_locations():
    data, checkpoints = S3Url("data", "ds"), S3Url("ckpt", "runs")
    assert store.store_dir(data, None, "r1") == S3Url("data", "nexmark-work/r1")
    assert store.store_dir(data, checkpoints, "r1") == S3Url("ckpt", "runs/r1")
    assert store.reach_urls(data, checkpoints) == [S3Url("data", "ds/manifest.json"), checkpoints]
    assert store.reach_urls(Path("/local/ds"), None) == []
    assert not store.on_store(Path("/local/ds"), None) and store.on_store(None, checkpoints)
    job = Path("/work/q5/run-1")
    assert store.job_dirs(S3Url("ckpt", "runs/r1"), True, job) == (
        S3Url("ckpt", "runs/r1/q5/run-1/checkpoints"),
        S3Url("ckpt", "runs/r1/q5/run-1/source"),
    )
    assert store.job_dirs(S3Url("ckpt", "runs/r1"), False, job)[0] is None
    assert store.job_dirs(None, False, job) == (None, None)  # a run on local files


@pytest.mark.parametrize("checkpoints", [(), ("--checkpoints", CHECKPOINTS)], ids=["data", "both"])
def test_a_store_location_is_parsed_once_from_the_flag_to_the_engine(
    tmp_path, nexmark_main, monkeypatch, local_store, parsed, checkpoints
):
    """`nexmark run --data s3://...`: the options, --s3-local's buckets, the store's checks,
    the run's prefix, the plan, the writer and the engine's reach list, one parse a flag."""
    reached: list[list[str]] = []
    prepared: list[RunOptions] = []

    class StoreEngine(FakeEngine):
        def use_object_store(self, settings, reach):
            reached.append(list(reach))

    def no_queries(suite, make_engine):  # the prepared run, as the suite would get it
        prepared.append(suite.options)
        make_engine()
        return []

    monkeypatch.setattr(registry, "load", lambda name, **args: StoreEngine(**args))
    monkeypatch.setattr(run_command, "run_suite", no_queries)
    monkeypatch.setattr(run_command, "_show", lambda *args: None)  # no results to show
    done = nexmark_main(
        "run", "--engine", "fake", "-q", "q0", "-n", "2K", "--data", DATA, *checkpoints,
        "--results", str(tmp_path / "results"), "--no-report", data=tmp_path / "datasets",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert parsed == [DATA, *checkpoints[1:]]  # each flag's text once, nothing parsed again
    assert (local_store / "bucket" / "prefix" / "manifest.json").is_file()  # generated there
    (options,) = prepared
    assert options.data == S3Url("bucket", "prefix")
    assert isinstance(options.store_dir, S3Url)
    assert options.checkpoints_on_store == bool(checkpoints)
    reach = [S3Url("bucket", "prefix/manifest.json")]
    reach += [S3Url("bucket", "ckpt")] if checkpoints else []
    assert reached and all(r == reach for r in reached)


def test_the_engines_take_a_jobs_locations_as_the_protocol_made_them(tmp_path, local_store, parsed):
    """Below the options nothing parses: a job's spec carries its part and its checkpoint and
    feed prefixes typed, and each engine's store code (the part it reads, the prefix its feed
    goes to, its checkpoints, the reach check's probe) takes them as they are."""
    options = RunOptions(queries=("q5",), events=10, data=DATA, checkpoints=CHECKPOINTS)
    run_dir = store.store_dir(options.data, options.checkpoints, "r1")
    options = dataclasses.replace(options, store_dir=run_dir, checkpoints_on_store=True)
    part = options.data / "warmup"
    spec = checks.job_spec("q5", options, FileSource(part), tmp_path / "q5" / "run-1")
    job = S3Url("bucket", "ckpt/r1/q5/run-1")
    assert (spec.source.location, spec.checkpoint_dir, spec.feed_dir) == (
        part,
        job / "checkpoints",
        job / "source",
    )
    # Flink: the part, the prefix its feed is released into, its checkpoints, a probe's place.
    assert file_part(spec.source, "Flink", True) == part
    assert flink_store.feed_into(part, spec.feed_dir, spec.work_dir) == job / "source" / "warmup"
    flink_job = flink_options.job_options(Settings.defaults(), spec)
    assert flink_job["execution.checkpointing.dir"] == "s3://bucket/ckpt/r1/q5/run-1/checkpoints"
    reach = store.reach_urls(options.data, options.checkpoints)
    assert flink_store.reach_probe(reach).parent == options.checkpoints
    # Spark: the part, a fresh query's checkpoint (emptied first), the prefix it watches.
    left = local_store / "bucket" / "ckpt" / "r1" / "q5" / "run-1" / "checkpoints"
    left.mkdir(parents=True)  # an earlier job's, in the way
    assert spark_store.part_of(spec.source, True) == part
    checkpoint, restored = spark_restore.checkpoint_to_run_on(spec, False)
    assert (checkpoint, restored) == (job / "checkpoints", None)
    assert not left.exists()
    assert spark_store.watch_dir(spec, part, checkpoint, restored) == job / "source"
    assert parsed == [DATA, CHECKPOINTS]  # the flags' text, once each: nothing below parsed

"""`nexmark run` and `nexmark verify` on an object store, for real: the session's local s3proxy
(buckets of this module's own), the CLI in a process of its own (PyFlink holds one gateway a
process: the shared embedded Flink of a test session must not be disturbed), the dataset read
from `s3://`, the checkpoints and the phase snapshot written there; the bad inputs as one line
each, before the first query, with a non-zero exit."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cli_process import nexmark
from nexmark.storage.s3proxy import S3Proxy

pytestmark = pytest.mark.slow

DATA, CKPT = "nexmark-data", "nexmark-ckpt"
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def s3(s3_server: S3Proxy) -> S3Proxy:
    """The session's s3proxy, this module's buckets on it."""
    for bucket in (DATA, CKPT):
        s3_server.make_bucket(bucket)
    return s3_server


def run_cli(*args: str, env: dict[str, str], cwd: Path, timeout: float = 600) -> tuple[int, str]:
    """`nexmark ARGS` run from `cwd` with `env` over this process's variables: (exit code,
    output)."""
    extra = {"PYTHONPATH": str(ROOT / "src"), "COLUMNS": "200", **env}
    done = nexmark(*args, env=extra, cwd=cwd, timeout=timeout)
    return done.returncode, done.stdout + done.stderr


def objects(s3: S3Proxy, bucket: str) -> list[Path]:
    return [p for p in (s3.blobs / bucket).rglob("*") if p.is_file()]


def store_env(s3: S3Proxy, tmp_path: Path) -> dict[str, str]:
    return {**s3.env(), "NEXMARK_DATA_DIR": str(tmp_path / "datasets")}


def error_lines(output: str) -> list[str]:
    return [line for line in output.splitlines() if line.startswith("error:")]


# -- bad input: one line each, before any query (no engine started) ---------------------------


@pytest.mark.parametrize(
    "args, env, expected, code",
    [
        (["--data", "s3://no-such-bucket/ds"], {}, "no bucket 'no-such-bucket'", 3),
        (["--checkpoints", "s3://no-such-bucket/c"], {}, "no bucket 'no-such-bucket'", 3),
        (["--data", f"s3://{DATA}/x"], {"AWS_SECRET_ACCESS_KEY": "wrong"}, "refused the", 3),
        (["--data", f"s3://{DATA}/x"], {"AWS_ENDPOINT_URL": "http://127.0.0.1:9"}, "not answer", 3),
        (["--checkpoints", "/tmp/local"], {}, "an s3://bucket/prefix is expected", 2),
    ],
    ids=["bucket-data", "bucket-checkpoints", "credentials", "endpoint", "local"],
)
def test_bad_input_is_one_line_before_any_query(s3, tmp_path, args, env, expected, code):
    status, output = run_cli(
        "verify", "-q", "q0", "-n", "2K", *args, env={**store_env(s3, tmp_path), **env},
        cwd=tmp_path, timeout=180,
    )  # fmt: skip
    assert status == code, output
    lines = error_lines(output)
    assert len(lines) == 1 and expected in lines[0], output
    assert "Traceback" not in output and "q0 warmup" not in output
    assert s3.settings.secret_key not in output


def test_a_half_written_dataset_is_refused(s3, tmp_path):
    env = store_env(s3, tmp_path)
    url = f"s3://{DATA}/half"
    status, output = run_cli("generate", "-n", "2K", "--files", "1", "--data", url, env=env,
                             cwd=tmp_path)  # fmt: skip
    assert status == 0, output
    (s3.blobs / DATA / "half" / "manifest.json").unlink()  # as if cut before the manifest
    status, output = run_cli("verify", "-q", "q0", "-n", "2K", "--parallelism", "1",
                             "--data", url, env=env, cwd=tmp_path)  # fmt: skip
    assert status == 3, output
    assert "not a complete dataset: objects but no manifest.json" in error_lines(output)[0]


# -- the engines on the store -------------------------------------------------------------


@pytest.mark.flink
def test_verify_on_flink_reads_and_checkpoints_on_s3(s3, tmp_path):
    """q0 (stateless) and q5 (windows) match their reference, the dataset read from the store
    and both phases' checkpoints (the phase snapshot restored) written there; the run's own
    prefix is gone afterwards."""
    status, output = run_cli(
        "verify", "-q", "q0,q5", "-n", "20K", "--engine", "flink",
        "--data", f"s3://{DATA}/e20k", "--checkpoints", f"s3://{CKPT}/runs",
        env=store_env(s3, tmp_path), cwd=tmp_path,
    )  # fmt: skip
    assert status == 0, output
    assert output.count(" match ") >= 2, output
    assert objects(s3, DATA) and not objects(s3, CKPT)  # the run's prefix removed
    assert not list((tmp_path / "datasets").glob("*"))  # the dataset is on the store only


@pytest.mark.flink
def test_run_on_s3_restores_the_snapshot_twice_and_records_no_credential(s3, tmp_path):
    """Two benchmark phases restored from one phase checkpoint on the store (NO_CLAIM: the
    snapshot stays whole); checkpoints kept on request are the store's; no result file holds
    the access key or the secret."""
    results = tmp_path / "results"
    status, output = run_cli(
        "run", "-q", "q5", "-n", "20K", "--suite", "quick", "--repeat", "2",
        "--parallelism", "2", "--data", f"s3://{DATA}/run20k",
        "--checkpoints", f"s3://{CKPT}/kept", "--keep-checkpoints", "--results", str(results),
        "--no-report", env=store_env(s3, tmp_path), cwd=tmp_path,
    )  # fmt: skip
    assert status == 0, output
    found = json.loads((results / "results.json").read_text())
    assert "ok" in json.dumps(found)
    metadata = [p for p in objects(s3, CKPT) if p.name == "_metadata"]
    assert metadata, "no checkpoint on the store"
    assert not [p for p in objects(s3, CKPT) if "/source/" in str(p)]  # the feeds removed
    for path in results.rglob("*"):
        if path.is_file():
            text = path.read_text(errors="replace")
            assert s3.settings.secret_key not in text, path
            assert s3.settings.access_key not in text, path


@pytest.mark.flink
def test_the_engines_jvm_must_reach_the_store(s3, tmp_path):
    """Python reaches the store, Flink's own file system (wrong secret for it alone) does not:
    one line at the engine's start, before the first query."""
    status, output = run_cli(
        "verify", "-q", "q0", "-n", "2K", "--parallelism", "1", "--engine", "flink",
        "--data", f"s3://{DATA}/reach", "--set", "flink.s3.secret-key=wrong",
        env=store_env(s3, tmp_path), cwd=tmp_path,
    )  # fmt: skip
    assert status != 0, output
    lines = error_lines(output)
    assert len(lines) == 1 and "Flink's own file system cannot reach" in lines[0], output
    assert "q0 warmup" not in output and "Traceback" not in output


@pytest.mark.spark
def test_verify_on_spark_reads_and_checkpoints_on_s3(s3, tmp_path):
    """Spark's file source watches a prefix on the store (the parts released into it by
    server-side copies, read in event order) and checkpoints there: q0 and q5 (windows, the
    phase state restored from the store) match their reference; the run's prefix is gone."""
    status, output = run_cli(
        "verify", "-q", "q0,q5", "-n", "20K", "--engine", "spark",
        "--data", f"s3://{DATA}/e20k", "--checkpoints", f"s3://{CKPT}/spark-verify",
        env=store_env(s3, tmp_path), cwd=tmp_path,
    )  # fmt: skip
    assert status == 0, output
    assert output.count(" match ") >= 2, output
    assert not [p for p in objects(s3, CKPT) if "spark-verify" in str(p)]


@pytest.mark.spark
def test_spark_restores_the_phase_checkpoint_on_s3_twice(s3, tmp_path):
    """Each repeat restores its own copy of the phase checkpoint, made on the store
    (`checkpoints-restore-1`, `-2` beside it); the results hold no credential."""
    results = tmp_path / "results"
    status, output = run_cli(
        "run", "-q", "q5", "-n", "20K", "--suite", "quick", "--repeat", "2",
        "--parallelism", "2", "--engine", "spark", "--data", f"s3://{DATA}/run20k",
        "--checkpoints", f"s3://{CKPT}/spark-kept", "--keep-checkpoints",
        "--results", str(results), "--no-report", env=store_env(s3, tmp_path), cwd=tmp_path,
    )  # fmt: skip
    assert status == 0, output
    found = json.loads((results / "results.json").read_text())
    (query,) = found["results"]
    assert query["status"] == "ok", query
    assert [r["status"] for r in query["repeats"]] == ["ok", "ok"], query["repeats"]
    assert query["restored_from"].startswith(f"s3://{CKPT}/spark-kept/")
    kept = [p.relative_to(s3.blobs / CKPT).parts for p in objects(s3, CKPT)]
    copies = {part for parts in kept if parts[0] == "spark-kept" for part in parts
              if part.startswith("checkpoints-restore-")}  # fmt: skip
    assert copies == {"checkpoints-restore-1", "checkpoints-restore-2"}, kept
    for path in results.rglob("*"):
        if path.is_file():
            text = path.read_text(errors="replace")
            assert s3.settings.secret_key not in text, path


@pytest.mark.spark
def test_sparks_executors_must_reach_the_store(s3, tmp_path):
    """Python reaches the store, Spark's S3A (wrong secret for it alone) does not: one line
    at the session's start, before the first query."""
    status, output = run_cli(
        "verify", "-q", "q0", "-n", "2K", "--parallelism", "1", "--engine", "spark",
        "--data", f"s3://{DATA}/reach", "--set", "spark.spark.hadoop.fs.s3a.secret.key=wrong",
        env=store_env(s3, tmp_path), cwd=tmp_path,
    )  # fmt: skip
    assert status != 0, output
    lines = error_lines(output)
    assert len(lines) == 1 and "Spark's executors cannot reach" in lines[0], output
    assert "q0 warmup" not in output and "Traceback" not in output


def test_the_feed_on_a_store_releases_by_server_side_copies(s3, tmp_path, monkeypatch):
    """A part on the store fed into a prefix: nothing there but the folder marker until the
    release, then each object whole (the dataset's bytes), in event order; a fresh feed
    empties the prefix first."""
    from nexmark.storage import files
    from nexmark.storage.s3 import S3Url
    from nexmark.workload.feed import Feed, PartFeed

    env = store_env(s3, tmp_path)
    status, output = run_cli("generate", "-n", "2K", "--files", "2", "--data",
                             f"s3://{DATA}/feed", env=env, cwd=tmp_path)  # fmt: skip
    assert status == 0, output
    for key, value in s3.env().items():
        monkeypatch.setenv(key, value)
    part = PartFeed.of(S3Url.parse(f"s3://{DATA}/feed/warmup"))
    assert len(part.files) == 2 and part.events == 1500 and part.format == "parquet"
    into = S3Url.parse(f"s3://{CKPT}/feedtest/source/warmup")
    feed = Feed(part, into)
    assert files.objects(into) == [] and not feed.released
    first = feed.release(part.files[:1])
    assert first == [into / part.files[0].path.name] and files.objects(into) == first
    feed.release()
    assert feed.released and feed.released_events == 1500
    for f in part.files:
        assert files.size(into / f.path.name) == files.size(f.path)
    Feed(part, into)  # fresh: the prefix emptied
    assert files.objects(into) == []
    files.delete_under(S3Url.parse(f"s3://{CKPT}/feedtest"))

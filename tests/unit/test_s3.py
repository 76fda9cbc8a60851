"""The pure parts of the object-store support: s3:// URLs, settings, error lines, names."""

from __future__ import annotations

from pathlib import Path

import pytest

from nexmark.errors import UsageError
from nexmark.storage import files
from nexmark.storage.s3 import S3Settings, S3Url, explain, filesystem, is_s3
from nexmark.workload.writer import _dataset_file_name


def test_url_parses_bucket_and_key() -> None:
    url = S3Url.parse("s3://my-bucket/datasets/e20K/")
    assert (url.bucket, url.key) == ("my-bucket", "datasets/e20K")
    assert str(url) == "s3://my-bucket/datasets/e20K"
    assert url.fs_path == "my-bucket/datasets/e20K"
    assert str(S3Url.parse("s3://bucket")) == "s3://bucket"
    assert S3Url.parse("s3://bucket").fs_path == "bucket"


def test_url_joins_like_a_path() -> None:
    url = S3Url.parse("s3://b-1/ds") / "warmup" / "part-00000-000.parquet"
    assert str(url) == "s3://b-1/ds/warmup/part-00000-000.parquet"
    assert (url.name, url.suffix) == ("part-00000-000.parquet", ".parquet")
    assert url.parent == S3Url("b-1", "ds/warmup")
    assert S3Url("b-1", "") / "manifest.json" == S3Url("b-1", "manifest.json")


@pytest.mark.parametrize(
    "text",
    [
        "s3://",
        "s3://B/upper",
        "s3://a/x",  # too short a bucket
        "s3://bucket_underscore/x",
        "s3://bucket/a//b",
        "s3://bucket/a/../b",
        "s3://bucket/x?versionId=1",
        "/local/path",
    ],
)
def test_bad_urls_are_one_line_usage_errors(text: str) -> None:
    with pytest.raises(UsageError) as err:
        S3Url.parse(text)
    assert "\n" not in str(err.value)


def test_is_s3_and_location() -> None:
    assert is_s3("s3://b-1/x") and is_s3("S3://b-1/x") and is_s3(S3Url("b-1"))
    assert not is_s3("/tmp/s3://x") and not is_s3(Path("s3-data"))
    assert files.location("s3://b-1/x") == S3Url("b-1", "x")
    assert files.location("relative/dir") == Path("relative/dir")


def test_settings_from_the_standard_variables() -> None:
    env = {
        "AWS_ENDPOINT_URL": "http://127.0.0.1:9000/",
        "AWS_ACCESS_KEY_ID": "AKIDEXAMPLE",
        "AWS_SECRET_ACCESS_KEY": "very-secret-value",
        "AWS_DEFAULT_REGION": "eu-west-3",
    }
    s = S3Settings.from_env(env)
    assert s == S3Settings("http://127.0.0.1:9000", "eu-west-3", "AKIDEXAMPLE", "very-secret-value")
    # The S3-specific endpoint and AWS_REGION win over the general ones.
    s = S3Settings.from_env({**env, "AWS_ENDPOINT_URL_S3": "https://s3.x", "AWS_REGION": "r1"})
    assert (s.endpoint, s.region) == ("https://s3.x", "r1")
    assert S3Settings.from_env({}) == S3Settings(None, "us-east-1", None, None)
    assert S3Settings.from_env(env).env()["AWS_SECRET_ACCESS_KEY"] == "very-secret-value"


def test_the_secret_is_never_printed_nor_described() -> None:
    s = S3Settings("http://h:1", "r", "AKIDEXAMPLE", "very-secret-value")
    for text in (repr(s), str(s), str(s.describe()), s.where):
        assert "very-secret-value" not in text
    assert s.describe() == {"endpoint": "http://h:1", "region": "r"}
    assert "AKIDEXAMPLE" not in str(s.describe())  # who we are is not a fact of a result


def test_error_lines_name_the_cause_in_one_line() -> None:
    url, s = S3Url("data", "ds"), S3Settings("http://127.0.0.1:1", "r", "AK", "SK")
    down = OSError(
        "When getting information for bucket 'data': AWS Error NETWORK_CONNECTION during "
        "HeadBucket operation: curlCode: 7, Couldn't connect to server"
    )
    denied = OSError(
        "When getting information for bucket 'data': AWS Error ACCESS_DENIED during HeadBucket "
        "operation: No response body."
    )
    assert "does not answer" in explain(down, url, s)
    assert "refused the credentials (access key 'AK'" in explain(denied, url, s)
    assert "SK" not in explain(denied, url, s).replace("AK", "")
    other = explain(OSError("first line\nsecond line"), url, s)
    assert other == "s3://data/ds: first line"


def test_an_endpoint_that_is_no_url_is_a_usage_error() -> None:
    with pytest.raises(UsageError, match="not an http"):
        filesystem(S3Settings("127.0.0.1:9000", "r", "a", "b"))


def test_dataset_file_names_under_a_prefix() -> None:
    root = S3Url("b-1", "ds")
    assert _dataset_file_name(root, root / "warmup" / "part-00000-001.parquet")
    assert _dataset_file_name(root, root / "benchmark" / "part-00003-000.csv")
    assert not _dataset_file_name(root, root / "notes.txt")
    assert not _dataset_file_name(root, root / "warmup" / "x" / "part-00000-000.parquet")
    assert not _dataset_file_name(root, root / "other" / "part-00000-000.parquet")
    assert _dataset_file_name(S3Url("b-1", ""), S3Url("b-1", "warmup/part-00000-000.csv"))


def test_an_endpoint_that_is_no_s3_store_is_named_so() -> None:
    """Any web server answers 404 to S3's request for a bucket; pyarrow takes that for a
    missing bucket. The check tells it apart: no S3 error code in the reply."""
    import http.server
    import threading

    from nexmark.storage.s3 import StorageError, check_store

    class NotS3(http.server.BaseHTTPRequestHandler):
        def do_HEAD(self) -> None:  # noqa: N802 - the handler's API
            self.send_response(404)
            self.end_headers()

        do_GET = do_HEAD  # noqa: N815

        def log_message(self, *args) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), NotS3)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        endpoint = f"http://127.0.0.1:{server.server_address[1]}"
        with pytest.raises(StorageError, match="answers, but not as an S3 store") as err:
            check_store(S3Url("data", "ds"), S3Settings(endpoint, "us-east-1", "a", "b"))
        assert "\n" not in str(err.value)
    finally:
        server.shutdown()
        server.server_close()

"""S3 locations, the settings that reach a store, and pyarrow's S3 file system built from them.

A dataset (and later a checkpoint directory) may live at `s3://bucket/prefix` on any S3-compatible
store: AWS, MinIO, s3proxy. Where the store is and who we are come from the standard variables
(`AWS_ENDPOINT_URL`, `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`, `AWS_REGION`), or from an
`S3Settings` given in code. The secret key never leaves the settings: `repr`, `describe` and
every message name the endpoint, the region and the bucket only, so nothing written to results,
manifests or logs can hold it.

`check_store` asks the store once, before any work, and turns each way of failing (no such
bucket, credentials refused, an endpoint that does not answer) into one line.
"""

from __future__ import annotations

import functools
import os
import posixpath
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from nexmark.errors import DatasetError, UsageError

SCHEME = "s3://"
DEFAULT_REGION = "us-east-1"
ENDPOINT_ENV = ("AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL")  # the S3-specific one wins
REGION_ENV = ("AWS_REGION", "AWS_DEFAULT_REGION")
# A bucket name as S3 allows it (3-63 lower-case letters, digits, dots, hyphens).
_BUCKET = re.compile(r"^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$")
# How long a store that does not answer holds us up before the one-line error.
CONNECT_TIMEOUT_S = 5.0
REQUEST_TIMEOUT_S = 60.0


class StorageError(DatasetError):
    """An object store that cannot be reached, refuses us, or lacks the bucket (exit code 3, as
    for any dataset that cannot be read or written)."""


def is_s3(location: object) -> bool:
    """True for an `s3://` URL (a string or an S3Url); local paths are everything else."""
    return isinstance(location, S3Url) or (
        isinstance(location, str) and location.lower().startswith(SCHEME)
    )


@dataclass(frozen=True, order=True)
class S3Url:
    """`s3://bucket/key`: a bucket and a key (no leading or trailing slash; "" for the bucket's
    root). Joins like a Path (`url / "warmup" / "part-00000-000.parquet"`)."""

    bucket: str
    key: str = ""

    @classmethod
    def parse(cls, text: str) -> S3Url:
        """Raises UsageError (one line) for anything but `s3://<valid bucket>[/key]`."""
        if not is_s3(text):
            raise UsageError(f"{text!r} is not an s3:// URL")
        parts = urlsplit(text)
        bucket, key = parts.netloc, parts.path.strip("/")
        if parts.query or parts.fragment:
            raise UsageError(f"{text}: an s3:// URL takes no ?query or #fragment")
        if not _BUCKET.match(bucket) or ".." in bucket:
            raise UsageError(
                f"{text}: {bucket!r} is not a bucket name (3 to 63 lower-case letters, digits, "
                "dots and hyphens)"
            )
        if "//" in key or any(p in (".", "..") for p in key.split("/")):
            raise UsageError(f"{text}: the key holds an empty, '.' or '..' part")
        return cls(bucket, key)

    def __truediv__(self, name: str) -> S3Url:
        return S3Url(self.bucket, posixpath.join(self.key, str(name)).strip("/"))

    def __str__(self) -> str:
        return f"{SCHEME}{self.bucket}/{self.key}" if self.key else f"{SCHEME}{self.bucket}"

    @property
    def name(self) -> str:
        return posixpath.basename(self.key)

    @property
    def suffix(self) -> str:
        return posixpath.splitext(self.name)[1]

    @property
    def parent(self) -> S3Url:
        return S3Url(self.bucket, posixpath.dirname(self.key))

    @property
    def fs_path(self) -> str:
        """The path pyarrow's S3FileSystem takes: `bucket/key`."""
        return f"{self.bucket}/{self.key}" if self.key else self.bucket


@dataclass(frozen=True)
class S3Settings:
    """How to reach a store. `endpoint` None is AWS itself; `access_key` None lets the AWS SDK
    find credentials its own way (profile, instance role)."""

    endpoint: str | None = None  # "http://127.0.0.1:9000"
    region: str = DEFAULT_REGION
    access_key: str | None = None
    secret_key: str | None = field(default=None, repr=False)  # never printed

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> S3Settings:
        env = os.environ if env is None else env
        endpoint = next((env[k] for k in ENDPOINT_ENV if env.get(k)), None)
        region = next((env[k] for k in REGION_ENV if env.get(k)), DEFAULT_REGION)
        return cls(
            endpoint=endpoint.rstrip("/") if endpoint else None,
            region=region,
            access_key=env.get("AWS_ACCESS_KEY_ID") or None,
            secret_key=env.get("AWS_SECRET_ACCESS_KEY") or None,
        )

    def env(self) -> dict[str, str]:
        """The standard variables for these settings (for a child process: an engine, a test)."""
        out = {"AWS_REGION": self.region}
        if self.endpoint:
            out["AWS_ENDPOINT_URL"] = self.endpoint
        if self.access_key:
            out["AWS_ACCESS_KEY_ID"] = self.access_key
        if self.secret_key:
            out["AWS_SECRET_ACCESS_KEY"] = self.secret_key
        return out

    def describe(self) -> dict[str, str]:
        """What a result may record: where the store is, never who we are."""
        return {"endpoint": self.endpoint or "aws", "region": self.region}

    @property
    def where(self) -> str:
        return self.endpoint or f"AWS S3 ({self.region})"


def filesystem(settings: S3Settings | None = None):
    """pyarrow's S3FileSystem for `settings` (default: from the environment), one per settings
    and process (it holds a connection pool)."""
    return _filesystem(settings or S3Settings.from_env())


@functools.cache
def _filesystem(settings: S3Settings):
    from pyarrow import fs as pafs

    _ensure_initialized()
    scheme, endpoint = "https", None
    if settings.endpoint:
        parts = urlsplit(settings.endpoint)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise UsageError(f"S3 endpoint {settings.endpoint!r} is not an http:// or https:// URL")
        scheme, endpoint = parts.scheme, parts.netloc
    return pafs.S3FileSystem(
        access_key=settings.access_key,
        secret_key=settings.secret_key,
        region=settings.region,
        endpoint_override=endpoint,
        scheme=scheme,
        connect_timeout=CONNECT_TIMEOUT_S,
        request_timeout=REQUEST_TIMEOUT_S,
        # Path-style requests (host/bucket/key): what a local store answers; AWS takes them too.
        force_virtual_addressing=False,
        # A bucket is the user's to make: we never create or delete one.
        allow_bucket_creation=False,
        allow_bucket_deletion=False,
        retry_strategy=pafs.AwsStandardS3RetryStrategy(max_attempts=3),
    )


@functools.cache
def _ensure_initialized() -> None:
    from pyarrow import fs as pafs

    pafs.initialize_s3()


def check_store(url: S3Url, settings: S3Settings | None = None) -> None:
    """Ask the store for `url`'s bucket once: StorageError (one line) if the endpoint does not
    answer, the credentials are refused, or the bucket does not exist."""
    from pyarrow import fs as pafs

    settings = settings or S3Settings.from_env()
    s3 = filesystem(settings)
    try:
        info = s3.get_file_info(url.bucket)
    except OSError as exc:
        raise StorageError(explain(exc, url, settings)) from None
    if info.type == pafs.FileType.NotFound:
        if settings.endpoint and not _speaks_s3(settings.endpoint, url.bucket):
            raise StorageError(
                f"{url}: {settings.endpoint} answers, but not as an S3 store (no S3 error in "
                "its reply: another server at that address?)"
            )
        raise StorageError(f"{url}: no bucket {url.bucket!r} at {settings.where}")


def _speaks_s3(endpoint: str, bucket: str) -> bool:
    """Whether an unsigned request for the bucket gets S3's XML reply (an error naming a code:
    NoSuchBucket, AccessDenied...). Any HTTP server answers a HEAD with 404, and pyarrow takes
    that for a missing bucket (measured: this sandbox's network answers 404 for every address)."""
    import urllib.error
    import urllib.request

    try:
        with urllib.request.urlopen(f"{endpoint}/{bucket}", timeout=CONNECT_TIMEOUT_S) as reply:
            body = reply.read(4096)
    except urllib.error.HTTPError as exc:
        body = exc.read(4096)
    except OSError:
        return False
    return b"<Code>" in body or b"<ListBucketResult" in body


def explain(exc: BaseException, url: S3Url, settings: S3Settings) -> str:
    """One line for an S3 error pyarrow raised (its message is several lines of AWS SDK text)."""
    text = str(exc)
    lower = text.lower()
    where = settings.where
    if any(s in lower for s in ("network_connection", "couldn't connect", "curlcode", "timeout")):
        return f"{url}: the S3 endpoint {where} does not answer (is the store running?)"
    if any(
        s in lower
        for s in ("access_denied", "accessdenied", "invalidaccesskeyid", "signaturedoesnotmatch")
    ) or re.search(r"\b403\b", text):
        who = f"access key {settings.access_key!r}" if settings.access_key else "no access key"
        return (
            f"{url}: {where} refused the credentials ({who}; check AWS_ACCESS_KEY_ID and "
            "AWS_SECRET_ACCESS_KEY)"
        )
    if "nosuchbucket" in lower or "bucket does not exist" in lower:
        return f"{url}: no bucket {url.bucket!r} at {where}"
    first = next((line.strip() for line in text.splitlines() if line.strip()), type(exc).__name__)
    return f"{url}: {first[:300]}"

"""What Spark needs to read from and checkpoint to an S3 store, as the probes
(tests/engines/test_s3_probes.py) found it working against s3proxy; docs/object-store.md.

The engine takes it when a run is on a store (`Engine.use_object_store`): hadoop-aws at the
Hadoop client's version, the AWS SDK bundle and the analytics accelerator on `spark.jars`;
`spark.hadoop.fs.s3a.*` options; `fs.s3.impl` set to S3A so that `s3://` URLs (not only
`s3a://`) work. The options hold the secret key: they go into the SparkConf, never into a
result (`engines.support.redacted` masks it).
"""

from __future__ import annotations

from pathlib import Path

from nexmark.storage.jars import JARS
from nexmark.storage.s3 import S3Settings


def jars(fetch: bool = True) -> list[Path]:
    """hadoop-aws, the AWS SDK bundle, the analytics accelerator (for `spark.jars`)."""
    return JARS.ensure(["spark-s3"], fetch=fetch)


def conf(settings: S3Settings) -> dict[str, str]:
    """Spark options reaching the store through S3A, for `s3://` and `s3a://` URLs."""
    options = {
        "spark.hadoop.fs.s3.impl": "org.apache.hadoop.fs.s3a.S3AFileSystem",
        "spark.hadoop.fs.s3a.path.style.access": "true",
        "spark.hadoop.fs.s3a.endpoint.region": settings.region,
    }
    if settings.endpoint:
        options["spark.hadoop.fs.s3a.endpoint"] = settings.endpoint
        options["spark.hadoop.fs.s3a.connection.ssl.enabled"] = str(
            settings.endpoint.startswith("https://")
        ).lower()
    if settings.access_key:
        options["spark.hadoop.fs.s3a.access.key"] = settings.access_key
    if settings.secret_key:
        options["spark.hadoop.fs.s3a.secret.key"] = settings.secret_key
    return options

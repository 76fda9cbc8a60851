"""The engines' shared helpers that need no engine: secrets never reach a result."""

from __future__ import annotations

from nexmark.engines.support import MASK, redacted


def test_every_secret_option_is_masked_and_nothing_else() -> None:
    options = {
        "s3.secret-key": "flink-secret",
        "spark.hadoop.fs.s3a.secret.key": "spark-secret",
        "fs.s3a.Secret.Key": "given-with-set",
        "s3.access-key": "AKIA-visible",
        "parallelism.default": "2",
    }
    shown = redacted(options)
    assert shown["s3.secret-key"] == MASK
    assert shown["spark.hadoop.fs.s3a.secret.key"] == MASK
    assert shown["fs.s3a.Secret.Key"] == MASK
    assert shown["s3.access-key"] == "AKIA-visible"
    assert shown["parallelism.default"] == "2"
    assert "secret" not in "".join(shown.values())
    assert options["s3.secret-key"] == "flink-secret"  # the job's own options untouched

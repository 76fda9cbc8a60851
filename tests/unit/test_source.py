"""The job's source, described engine-neutrally (engines/source.py)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from nexmark.engines.source import FileSource, as_source, local_folder
from nexmark.engines.spec import JobSpec
from nexmark.errors import EngineError
from nexmark.storage.s3 import S3Url


def test_a_part_folder_is_a_local_file_source(tmp_path: Path) -> None:
    source = FileSource.of(tmp_path / "benchmark", "csv")
    assert source.kind == "files" and source.is_local and source.format == "csv"
    assert source.path == tmp_path / "benchmark" and source.part == "benchmark"
    assert local_folder(source, "Flink") == tmp_path / "benchmark"


def test_an_object_store_prefix_fits_the_same_description() -> None:
    source = FileSource("s3://bucket/ds-1/warmup/")
    assert not source.is_local and source.part == "warmup" and str(source).startswith("s3://")
    # An engine that reads local folders only says so in one line, naming itself.
    with pytest.raises(EngineError, match=r"^Spark reads dataset parts from local folders only"):
        local_folder(source, "Spark")
    with pytest.raises(EngineError, match="not a local folder"):
        _ = source.path


def test_a_job_spec_takes_a_part_path_as_its_file_source(tmp_path: Path) -> None:
    spec = JobSpec("q0", tmp_path / "warmup", tmp_path)
    assert spec.source == FileSource.of(tmp_path / "warmup")
    old = JobSpec(query="q0", source=tmp_path / "benchmark", work_dir=tmp_path)
    assert old.source == FileSource.of(tmp_path / "benchmark")
    moved = dataclasses.replace(old, source=FileSource(S3Url("b", "ds/benchmark")))
    assert moved.source.location == S3Url("b", "ds/benchmark") and moved.query == "q0"


def test_anything_else_is_no_source() -> None:
    assert as_source(FileSource("x")) == FileSource("x")
    with pytest.raises(TypeError, match="not a job source"):
        as_source(42)  # type: ignore[arg-type]

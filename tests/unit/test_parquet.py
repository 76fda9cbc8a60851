"""Parquet datasets: the same events as CSV, the manifest's format facts, verification."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from nexmark.errors import DatasetError
from nexmark.verify.reference import load_events
from nexmark.workload import generator as gen
from nexmark.workload import writer
from nexmark.workload.dataset import PARQUET_COMPRESSION, Dataset, DatasetParams
from nexmark.workload.feed import PartFeed, count_events
from nexmark.workload.reader import read_table

EVENTS = 40_000


def build(root: Path, name: str, workers: int = 1, **kw) -> Dataset:
    params = DatasetParams(**{"events": EVENTS, "files": 2, **kw})
    return writer.ensure_dataset(params, root / name, workers=workers, show_progress=False)


@pytest.fixture(scope="module")
def root(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("parquet")


@pytest.fixture(scope="module")
def ds(root) -> Dataset:
    return build(root, "base")


def test_parquet_is_the_default_and_the_manifest_says_how(ds):
    assert ds.format == "parquet"
    facts = ds.manifest["file_format"]
    assert facts["name"] == "parquet" and facts["compression"] == PARQUET_COMPRESSION
    for f in ds.files():
        meta = pq.ParquetFile(f.path).metadata
        assert f.path.suffix == ".parquet" and meta.num_rows == f.events
        groups = [meta.row_group(i).num_rows for i in range(meta.num_row_groups)]
        size = facts["row_group_events"][f.part]
        assert all(g == size for g in groups[:-1]) and 0 < groups[-1] <= size
        codec = meta.row_group(0).column(0).compression
        assert codec.lower() == PARQUET_COMPRESSION
        assert pq.ParquetFile(f.path).schema_arrow == gen.file_arrow_schema()


@pytest.mark.parametrize("layout", [{}, {"files": 3, "slices": 2}, {"files": 1}])
def test_same_events_as_the_csv_dataset(root, ds, layout):
    """Every event equal, whatever the format and the layout (read back in event order)."""
    csv = build(root, f"csv-{len(layout)}-{layout.get('files')}", format="csv", **layout)
    parquet = ds if not layout else build(root, f"pq-{layout.get('files')}", **layout)
    assert csv.params.events_id == parquet.params.events_id
    assert read_table(parquet).equals(read_table(csv))
    assert read_table(parquet).equals(gen.generate_events(gen.GeneratorConfig(), 0, EVENTS))


def test_reference_reads_parquet_with_duckdb_as_it_reads_csv(root, ds):
    csv = build(root, "csv-ref", format="csv")
    a, b = load_events(ds.path), load_events(csv.path)
    assert a.table.equals(b.table)
    assert a.reader_last_times == b.reader_last_times and a.table.num_rows == EVENTS


def test_bytes_do_not_depend_on_the_worker_count(root, ds):
    two = build(root, "w2", workers=2)
    assert [f.checksum for f in two.files()] == [f.checksum for f in ds.files()]


def test_feed_facts_from_the_manifest_and_from_bare_files(ds, tmp_path):
    feed = PartFeed.of(ds.part_dir("benchmark"))
    assert feed.format == "parquet"
    assert [f.events for f in feed.files] == [f.events for f in ds.files("benchmark")]
    assert all(f.first_date_time and f.last_date_time for f in feed.files)
    bare = tmp_path / "bare"
    shutil.copytree(ds.part_dir("benchmark"), bare)  # no manifest beside it
    assert [f.events for f in PartFeed.of(bare).files] == [f.events for f in feed.files]
    assert count_events(feed.files[0].path) == feed.files[0].events


def damaged_copy(ds: Dataset, tmp_path: Path, damage) -> Path:
    copy = tmp_path / "copy"
    shutil.copytree(ds.path, copy)
    victim = sorted((copy / "benchmark").glob("*.parquet"))[0]
    damage(victim)
    return copy


def test_verify_finds_an_altered_byte(ds, tmp_path):
    def flip(path: Path) -> None:
        data = bytearray(path.read_bytes())
        data[len(data) // 3] ^= 0xFF
        path.write_bytes(bytes(data))

    with pytest.raises(DatasetError, match="checksum"):
        Dataset(damaged_copy(ds, tmp_path, flip)).verify()


def test_a_truncated_file_is_refused_before_a_run(ds, tmp_path):
    """Reuse (what a run does before its first query) checks sizes and Parquet footers."""

    def cut(path: Path) -> None:
        path.write_bytes(path.read_bytes()[:-64])

    copy = damaged_copy(ds, tmp_path, cut)
    with pytest.raises(DatasetError, match="damaged"):
        writer.ensure_dataset(ds.params, copy, show_progress=False)


def test_a_rewritten_file_of_the_same_size_with_a_bad_footer(ds, tmp_path):
    def footer(path: Path) -> None:
        data = bytearray(path.read_bytes())
        data[-8:-4] = b"\x00\x00\x00\x00"  # the footer length: unreadable metadata
        path.write_bytes(bytes(data))

    copy = damaged_copy(ds, tmp_path, footer)
    with pytest.raises(DatasetError, match="damaged"):
        writer.ensure_dataset(ds.params, copy, show_progress=False)
    manifest = json.loads((copy / "manifest.json").read_text())
    manifest["parts"]["benchmark"]["files"][0]["xxh3_128"] = "0" * 32
    with pytest.raises(DatasetError, match="checksum"):
        Dataset(copy).verify()


def test_counts_come_from_the_parquet_columns(ds, tmp_path):
    """verify compares the kinds in each file's event_type column with the manifest."""
    copy = tmp_path / "swap"
    shutil.copytree(ds.path, copy)
    manifest = json.loads((copy / "manifest.json").read_text())
    entry = manifest["parts"]["warmup"]["files"][0]
    entry["counts"]["bid"] += 1
    (copy / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(DatasetError, match="event counts"):
        Dataset(copy).verify()


def test_estimate_is_close_to_the_written_size(ds):
    estimate = writer.estimate_bytes(ds.params)
    assert 0.8 * ds.bytes < estimate < 1.3 * ds.bytes

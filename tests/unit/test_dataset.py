"""Datasets on disk: parameters, split, determinism across workers and files, manifest, safety."""

from __future__ import annotations

import csv
import dataclasses
import hashlib
import json
import os
import shutil
import signal
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.csv as pcsv
import pytest
import xxhash

from nexmark.errors import DatasetError, DiskSpaceError, UsageError
from nexmark.workload import csvtext, writer
from nexmark.workload import generator as gen
from nexmark.workload.dataset import (
    Dataset,
    DatasetParams,
    file_digest,
    kind_counts,
    scan_file,
)
from nexmark.workload.reader import read_batches, read_rows, read_table
from nexmark.workload.schema import COLUMN_NAMES, COLUMNS, file_name, file_type, is_time
from nexmark.workload.sizes import parse_count

EVENTS = 30_000


def build(root: Path, name: str, workers: int = 1, **kw) -> Dataset:
    """A CSV dataset: these tests read its lines (tests/unit/test_parquet.py: Parquet)."""
    params = DatasetParams(**{"events": EVENTS, "files": 2, "format": "csv", **kw})
    return writer.ensure_dataset(params, root / name, workers=workers, show_progress=False)


def content(ds: Dataset) -> bytes:
    return b"".join(f.path.read_bytes() for f in ds.files())


@pytest.fixture(scope="module")
def root(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("datasets")


@pytest.fixture(scope="module")
def ds(root) -> Dataset:
    return build(root, "base")


@pytest.mark.parametrize(
    "text, value",
    [("200M", 200_000_000), ("1.5K", 1500), ("1e6", 1_000_000), ("10_000", 10_000), ("7", 7)],
)
def test_parse_count(text, value):
    assert parse_count(text) == value


@pytest.mark.parametrize("text", ["abc", "", "1.0005K", "M", "1e-3", "--5"])
def test_parse_count_rejects(text):
    with pytest.raises(UsageError):
        parse_count(text)


@pytest.mark.parametrize(
    "kw", [{"events": 0}, {"events": -5}, {"warmup_fraction": 0}, {"warmup_fraction": 1.0}]
)
def test_bad_params(kw):
    with pytest.raises(UsageError):
        DatasetParams(**{"events": 100, **kw})
    with pytest.raises(UsageError):
        DatasetParams(events=1)  # one part would be empty
    with pytest.raises(UsageError):
        DatasetParams(events=100, files=0)


@pytest.mark.parametrize(
    "events, fraction, warmup", [(10, 0.75, 7), (1000, 0.7, 700), (3, 0.5, 1), (99, 0.29, 28)]
)
def test_warmup_split_is_floor_of_events_times_fraction(events, fraction, warmup):
    params = DatasetParams(events=events, warmup_fraction=fraction, files=3)
    assert params.part_range("warmup") == (0, warmup)
    assert params.part_range("benchmark") == (warmup, events)
    for part in ("warmup", "benchmark"):
        numbers = [f.numbers() for f in params.layout(part)]
        assert all((np.diff(n) > 0).all() for n in numbers)  # each file in event order
        assert sorted(np.concatenate(numbers).tolist()) == list(range(*params.part_range(part)))


def test_small_parts_still_interleave():
    """4,000 events, 2 files: the 1,000-event benchmark part is cut into blocks small enough
    that both files hold events from its whole range."""
    params = DatasetParams(events=4000, files=2)
    assert params.block_events("benchmark") == 1000 // (2 * 8)
    for f in params.layout("benchmark"):
        n = f.numbers()
        assert len(n) >= 8 * params.block_events("benchmark") and n[-1] - n[0] > 900


@pytest.mark.parametrize("files, slices", [(1, 1), (2, 1), (3, 1), (2, 3), (4, 2)])
def test_every_file_of_a_slice_spans_the_slice(files, slices):
    """Readers advance together: each stripe starts within one block of its slice's start and
    ends within `files` blocks of its end, so no reader holds only the early events."""
    params = DatasetParams(events=1_000_000, files=files, slices=slices)
    for part in ("warmup", "benchmark"):
        block = params.block_events(part)
        layouts = params.layout(part)
        assert len(layouts) == files * slices
        for f in layouts:
            n = f.numbers()
            assert n[0] - f.slice_start < block * files
            assert f.slice_stop - 1 - n[-1] < block * files
            assert abs(len(n) - (f.slice_stop - f.slice_start) / files) <= block
        starts = [f.slice_start for f in layouts[::files]]
        assert starts == sorted(starts) and starts[0] == params.part_range(part)[0]


def test_kind_counts_match_brute_force():
    config = gen.GeneratorConfig()
    for start, stop in ((0, 0), (0, 1), (3, 4), (17, 1234), (49, 151)):
        kinds = gen.kinds(np.arange(start, stop), config)
        expected = np.bincount(kinds, minlength=3).tolist()
        assert list(kind_counts(start, stop, config).values()) == expected


def lines_by_event(ds: Dataset) -> dict[int, bytes]:
    """Every line of a dataset keyed by its event number (from the file layout)."""
    found: dict[int, bytes] = {}
    for f in ds.files():
        lines = f.path.read_bytes().splitlines(keepends=True)
        numbers = f.layout.numbers().tolist()
        assert len(lines) == len(numbers) == f.events
        found.update(zip(numbers, lines, strict=True))
    assert sorted(found) == list(range(ds.events))
    return found


def test_same_lines_for_any_workers_files_and_slices(root, ds):
    """The same events, each line byte-identical, whatever the layout and the worker count."""
    two_workers = build(root, "w2", workers=2)
    assert content(two_workers) == content(ds)
    assert [f.checksum for f in two_workers.files()] == [f.checksum for f in ds.files()]
    lines = lines_by_event(ds)
    for layout in ({"files": 1}, {"files": 3}, {"files": 2, "slices": 3}, {"files": 5}):
        other = build(root, "-".join(f"{k}{v}" for k, v in layout.items()), workers=2, **layout)
        assert lines_by_event(other) == lines, layout
    assert b"".join(sorted(lines.values())) != b"".join(
        sorted(lines_by_event(build(root, "s1", seed=1)).values())
    )
    # and the line of event n is what the formatter writes for n alone
    assert lines[12_345] == bytes(csvtext.format_csv(ds.params.generator_config, 12_345, 12_346))


def test_files_hold_their_striped_events(ds):
    files = ds.files()
    assert [f.part for f in files] == ["warmup", "warmup", "benchmark", "benchmark"]
    assert files[2].layout.numbers()[0] == int(EVENTS * 0.75) == 22_500
    for f in files:
        lines = f.path.read_bytes().decode().splitlines()
        numbers = f.layout.numbers()
        assert len(lines) == f.events == len(numbers)
        expected = gen.generate_events(ds.params, int(numbers[-1]), int(numbers[-1]) + 1)
        last_ms = gen.to_file_columns(expected).column("date_time_ms")[0].as_py()  # epoch ms
        assert lines[-1].split(",")[20] == str(last_ms)


def test_manifest_records_params_counts_times_and_checksums(ds):
    m = json.loads((ds.path / "manifest.json").read_text())
    assert m["generator_version"] == gen.GENERATOR_VERSION and m["manifest_version"] == 2
    assert m["params"] == ds.params.to_dict() and m["params"]["seed"] == 0
    assert m["counts"] == {"person": 600, "auction": 1800, "bid": 27_600}
    assert m["event_time"] == {
        "first": "2024-01-01 00:00:00.000",
        "last": "2024-01-01 00:00:00.299",
    }
    for part in m["parts"].values():
        assert part["bytes"] == sum(f["bytes"] for f in part["files"])
        for f in part["files"]:
            data = (ds.path / f["path"]).read_bytes()
            assert xxhash.xxh3_128(data).hexdigest() == f["xxh3_128"] and len(data) == f["bytes"]
            assert f["first_event"] <= f["last_event"] and sum(f["counts"].values()) == f["events"]
            n = np.concatenate(
                [
                    g.numbers()
                    for g in ds.params.layout(f["path"].split("/")[0])
                    if f["path"].endswith(g.name)
                ]
            )
            assert f["counts"] == dict(
                zip(
                    ("person", "auction", "bid"),
                    np.bincount(gen.kinds(n, ds.params.generator_config), minlength=3).tolist(),
                    strict=True,
                )
            )
    assert m["bytes"] == sum(p["bytes"] for p in m["parts"].values())
    last = max(m["parts"]["benchmark"]["files"], key=lambda f: f["last_event"])
    assert last["last_event"] == EVENTS - 1 and last["last_date_time"] == m["event_time"]["last"]


def test_reuse_and_refusal(root, ds):
    mtime = (ds.path / "manifest.json").stat().st_mtime_ns
    again = build(root, "base")
    assert again.reused and (ds.path / "manifest.json").stat().st_mtime_ns == mtime
    with pytest.raises(DatasetError, match="holds another dataset"):
        build(root, "base", seed=5)
    (root / "junk").mkdir()
    (root / "junk" / "file.txt").write_text("x")
    with pytest.raises(DatasetError, match="not a dataset"):
        build(root, "junk")


def test_verify_finds_corruption(root):
    ds = build(root, "corrupt", events=5_000)
    ds.verify()
    victim = ds.files("benchmark")[1].path
    data = bytearray(victim.read_bytes())
    data[100] = ord("x") if data[100] != ord("x") else ord("y")
    victim.write_bytes(bytes(data))
    with pytest.raises(DatasetError, match="checksum"):
        Dataset(ds.path).verify()
    victim.write_bytes(bytes(data[:-10]))
    with pytest.raises(DatasetError, match="bytes"):
        Dataset(ds.path).verify()
    victim.unlink()
    with pytest.raises(DatasetError, match="missing"):
        Dataset(ds.path).verify()
    (ds.path / "warmup" / "part-00099.csv").write_text("")
    with pytest.raises(DatasetError, match="does not list"):
        Dataset(ds.path).verify()


def test_scan_counts_kinds_across_block_boundaries(ds):
    f = ds.files()[0]
    for block in (61, 4096):
        digest, counts = file_digest(f.path), scan_file(f.path, block=block)
        assert digest == f.checksum and counts == f.counts


def test_version_1_manifests_with_sha256_still_verify(ds, tmp_path):
    old = tmp_path / "v1"
    shutil.copytree(ds.path, old)
    manifest = json.loads((old / "manifest.json").read_text())
    manifest["manifest_version"] = 1
    for part in manifest["parts"].values():
        for f in part["files"]:
            del f["xxh3_128"]
            f["sha256"] = hashlib.sha256((old / f["path"]).read_bytes()).hexdigest()
    (old / "manifest.json").write_text(json.dumps(manifest))
    Dataset(old).verify()
    assert {f.checksum_algorithm for f in Dataset(old).files()} == {"sha256"}
    damaged = old / manifest["parts"]["warmup"]["files"][0]["path"]
    data = bytearray(damaged.read_bytes())
    data[100] ^= 1  # same size, same lines: only the checksum can tell
    damaged.write_bytes(bytes(data))
    with pytest.raises(DatasetError, match="checksum differs"):
        Dataset(old).verify()


def test_interrupted_run_leaves_nothing_that_passes(root, monkeypatch):
    calls = []

    def fail_on_second(*args, **kwargs):
        calls.append(1)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return original(*args, **kwargs)

    original = writer.write_file
    monkeypatch.setattr(writer, "write_file", fail_on_second)
    with pytest.raises(KeyboardInterrupt):
        build(root, "interrupted", events=5_000)
    assert not (root / "interrupted").exists()
    assert not list(root.glob(".interrupted.tmp-*"))
    with pytest.raises(DatasetError):
        Dataset(root / "interrupted")


def test_a_concurrent_run_that_finishes_first_wins(root, monkeypatch):
    original = writer._generate

    def race(params, tmp, workers, advance, parts):
        monkeypatch.setattr(writer, "_generate", original)
        first = writer.ensure_dataset(params, root / "race", workers=1, show_progress=False)
        assert not first.reused  # the other run published its dataset first
        return original(params, tmp, workers, advance, parts)

    monkeypatch.setattr(writer, "_generate", race)
    ds = build(root, "race", events=3_000)
    assert ds.reused and ds.path == root / "race"
    ds.verify()
    assert [p.name for p in root.glob(".race.tmp-*")] == []


def test_stale_temp_dirs_of_dead_runs_are_removed(root):
    stale = root / ".tidy.tmp-999999999-abcd1234"
    (stale / "warmup").mkdir(parents=True)
    build(root, "tidy", events=2_000)
    assert not stale.exists()


def test_too_little_disk_is_refused_before_writing(root, monkeypatch):
    monkeypatch.setenv(writer.FREE_BYTES_ENV, str(10 << 20))
    with pytest.raises(DiskSpaceError, match="not enough disk space"):
        build(root, "big", events=1_000_000)
    assert not (root / "big").exists()


def test_estimate_is_close_to_the_real_size(ds):
    assert abs(writer.estimate_bytes(ds.params) / ds.bytes - 1.02) < 0.03


def test_unwritable_output_is_a_dataset_error(root):
    blocker = root / "a-file"
    blocker.write_text("x")
    with pytest.raises(DatasetError, match="cannot write"):
        build(blocker, "sub", events=1_000)


def test_reader_returns_the_generated_events(ds):
    assert read_table(ds).equals(gen.generate_events(ds.params, 0, EVENTS))
    bench = read_table(ds.path, "benchmark", 22_400, 22_600)
    assert bench.equals(gen.generate_events(ds.params, 22_500, 22_600))
    across = read_table(ds, None, 11_000, 23_000)
    assert across.equals(gen.generate_events(ds.params, 11_000, 23_000))
    batches = list(read_batches(ds, "warmup"))
    assert all(b.schema == gen.arrow_schema() for b in batches)
    assert sum(b.num_rows for b in batches) == 22_500
    row = next(read_rows(ds, start=4, stop=5))
    assert row["event_number"] == 4 and row["event_type"] == 2 and row["p_id"] is None
    with pytest.raises(UsageError):
        next(read_batches(ds, "nope"))


def test_files_parse_with_standard_csv_readers(ds):
    f = ds.files()[0]
    with open(f.path, newline="") as fh:
        rows = list(csv.reader(fh))
    assert len(rows) == f.events and all(len(r) == len(COLUMN_NAMES) for r in rows)
    assert {r[0] for r in rows} == {"0", "1", "2"}
    assert rows[0][1] == "1000" and rows[0][7] == ""  # a person: its id, no auction id
    schema = gen.file_arrow_schema()  # times as epoch milliseconds
    table = pcsv.read_csv(
        f.path,
        pcsv.ReadOptions(column_names=schema.names),
        convert_options=pcsv.ConvertOptions(
            column_types={c.name: c.type for c in schema}, strings_can_be_null=True
        ),
    )
    assert table.schema == pa.schema([pa.field(c.name, c.type) for c in schema])
    assert table.num_rows == f.events
    expected = gen.generate_events(ds.params, 0, ds.events)
    first = int(f.layout.numbers()[0])
    config = ds.params.generator_config
    assert table.column("date_time_ms")[0].as_py() == gen.event_time_ms(first, config)
    assert gen.from_file_columns(table).column("date_time")[0] == expected["date_time"][first]


def test_more_files_than_events_gives_empty_files_that_read_and_verify(root):
    ds = build(root, "tiny", events=10, files=8)
    ds.verify()
    empty = [f for f in ds.files() if f.events == 0]
    assert empty and all(f.bytes == 0 and f.path.stat().st_size == 0 for f in empty)
    assert read_table(ds).equals(gen.generate_events(ds.params, 0, 10))


def test_duckdb_reads_the_files_as_documented(ds):
    import duckdb

    types = ", ".join(f"'{file_name(c)}': '{file_type(c)}'" for c in COLUMNS)
    times = ", ".join(
        f"make_timestamp({file_name(c)} * 1000) AS {c.name}" if is_time(c) else c.name
        for c in COLUMNS
    )
    sql = (
        f"SELECT {times} FROM read_csv('{ds.part_dir('warmup')}/*.csv', header = false, "
        f"delim = ',', quote = '', escape = '', nullstr = '', columns = {{{types}}})"
    )
    table = duckdb.sql(sql).to_arrow_table()
    expected = gen.generate_events(ds.params, 0, 22_500).drop_columns(["event_number"])
    order = [(c.name, "ascending") for c in COLUMNS]  # the files are stripes: compare as sets
    assert table.cast(expected.schema).sort_by(order).equals(expected.sort_by(order))


def test_short_writes_are_resumed(tmp_path, monkeypatch):
    real_write = writer.os.write

    def at_most_7_bytes(fd, data):
        return real_write(fd, bytes(data)[:7])

    monkeypatch.setattr(writer.os, "write", at_most_7_bytes)
    path = tmp_path / "out"
    fd = writer.os.open(path, writer.os.O_WRONLY | writer.os.O_CREAT)
    writer._write_all(fd, memoryview(b"abcdefghijklmnop\n"))
    writer.os.close(fd)
    assert path.read_bytes() == b"abcdefghijklmnop\n"


def test_the_events_id_ignores_the_layout_and_the_dataset_id_does_not():
    one = DatasetParams(events=10_000, files=1)
    sliced = DatasetParams(events=10_000, files=2, slices=4)
    assert one.events_id == sliced.events_id and one.dataset_id != sliced.dataset_id
    assert DatasetParams(events=10_000, files=1, seed=7).events_id != one.events_id
    assert DatasetParams(events=10_001, files=1).events_id != one.events_id


def test_benchmark_slices_cut_only_the_benchmark_part_and_keep_old_ids():
    plain = DatasetParams(events=10_000, files=2, slices=1)
    fine = DatasetParams(events=10_000, files=2, slices=1, benchmark_slices=5)
    assert "benchmark_slices" not in plain.to_dict()  # ids of existing datasets unchanged
    assert fine.dataset_id != plain.dataset_id and fine.events_id == plain.events_id
    assert len(fine.layout("warmup")) == 2 and len(fine.layout("benchmark")) == 10
    assert fine.slice_ranges("benchmark")[0] == (7_500, 8_000)
    assert DatasetParams.from_dict(fine.to_dict()) == fine
    with pytest.raises(UsageError, match="benchmark slices must be at least 1"):
        DatasetParams(events=10_000, benchmark_slices=0)


def test_a_dataset_of_the_benchmark_part_alone_holds_its_events_in_another_layout(root):
    """A rate search's trial reads the benchmark part generated for its rate: the part alone,
    in more time slices, with the very lines of the whole dataset's part."""
    whole = build(root, "whole-for-part")
    params = dataclasses.replace(whole.params, benchmark_slices=7)
    part = writer.ensure_dataset(
        params, root / "part-alone", workers=1, show_progress=False, parts=("benchmark",)
    )
    assert part.parts == ("benchmark",) and not (part.path / "warmup").exists()
    assert len(part.files()) == 7 * 2 and {f.part for f in part.files()} == {"benchmark"}
    part.verify()

    def lines(ds: Dataset) -> list[bytes]:
        return sorted(b"".join(f.path.read_bytes() for f in ds.files("benchmark")).splitlines())

    assert lines(part) == lines(whole)
    again = writer.ensure_dataset(
        params, root / "part-alone", workers=1, show_progress=False, parts=("benchmark",)
    )
    assert again.reused
    with pytest.raises(DatasetError, match="holds another dataset"):  # not the whole one
        writer.ensure_dataset(params, root / "part-alone", workers=1, show_progress=False)


@pytest.mark.parametrize("workers", [1, 2])
def test_a_ctrl_c_a_library_swallowed_still_stops_the_generation(tmp_path, monkeypatch, workers):
    """A KeyboardInterrupt raised inside pyarrow's ParquetWriter.write_table is dropped there;
    the generation once went on to write all its events (CI). The next chunk's report stops it."""
    write_parquet, swallowed = writer.write_parquet, []

    def write_swallowing_one_interrupt(params, layout, path, report=None, **kw):
        def report_after_a_lost_interrupt(events):
            if not swallowed:
                try:  # what pyarrow's write_table does with one raised inside it
                    os.kill(os.getpid(), signal.SIGINT)
                    pytest.fail("the signal did not interrupt the block")
                except KeyboardInterrupt:
                    swallowed.append(events)
            report(events)

        return write_parquet(params, layout, path, report_after_a_lost_interrupt, **kw)

    monkeypatch.setattr(writer, "write_parquet", write_swallowing_one_interrupt)
    params = DatasetParams(events=400_000, files=4)
    with pytest.raises(KeyboardInterrupt):
        writer.ensure_dataset(params, tmp_path / "ds", workers=workers, show_progress=False)
    assert swallowed  # the interrupt came, and was lost where it landed
    assert list(tmp_path.iterdir()) == []  # stopped: no dataset, no temp dir

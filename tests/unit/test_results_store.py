"""The results directory: atomic rewrites, replace-on-append, resume, CSV flattening."""

from __future__ import annotations

import csv
import json
import os
from pathlib import Path

import pytest

from nexmark.results.codec import ResultsError
from nexmark.results.query_result import QueryResult
from nexmark.results.store import (
    CSV_NAME,
    JSON_NAME,
    ResultStore,
    csv_columns,
    flatten,
    load_results,
    read_csv,
)

DATA = Path(__file__).parents[1] / "data"
RESULTS_FILES = sorted(DATA.rglob("results.json"))
IDS = [str(p.parent.relative_to(DATA)) for p in RESULTS_FILES]


def result(query: str, status: str = "ok", engine: str = "flink", **kw) -> QueryResult:
    return QueryResult(run_id="run-1", engine=engine, query=query, status=status, **kw)


def test_append_writes_both_files_as_each_query_ends(tmp_path: Path) -> None:
    store = ResultStore(tmp_path / "run")
    assert store.load() == [] and store.run_id() is None
    store.append(result("q0", time_s=1.5, throughput_eps=1000.0))
    assert [r.query for r in ResultStore(tmp_path / "run").load()] == ["q0"]
    store.append(result("q1", status="failed", reason="job failed: boom"))
    assert [r.query for r in store.load()] == ["q0", "q1"]
    rows = list(csv.DictReader((tmp_path / "run" / CSV_NAME).open()))
    assert [(r["query"], r["status"], r["reason"]) for r in rows] == [
        ("q0", "ok", ""),
        ("q1", "failed", "job failed: boom"),
    ]
    assert store.run_id() == "run-1"


def test_append_replaces_the_same_engine_and_query(tmp_path: Path) -> None:
    store = ResultStore(tmp_path)
    store.append(result("q0", status="timeout", reason="slow"))
    store.append(result("q1"))
    store.append(result("q0", time_s=2.0))
    got = store.load()
    assert [(r.query, r.status.value) for r in got] == [("q1", "ok"), ("q0", "ok")]
    store.append(result("q0", engine="other"))
    assert len(store.load()) == 3


def test_completed_queries_for_resume(tmp_path: Path) -> None:
    store = ResultStore(tmp_path)
    store.append(result("q0"))
    store.append(result("q1", status="failed", reason="x"))
    store.append(result("q2", status="timeout", reason="x"))
    store.append(result("q3", status="unsupported", reason="x"))
    store.append(result("q4", engine="spark"))
    assert store.completed_queries() == {"q0", "q1", "q2", "q3", "q4"}
    assert store.completed_queries(engine="flink") == {"q0", "q1", "q2", "q3"}
    assert store.completed_queries(engine="flink", retry_failed=True) == {"q0", "q3"}


def test_rewrite_is_atomic_and_leaves_no_temp_files(tmp_path: Path, monkeypatch) -> None:
    store = ResultStore(tmp_path)
    store.append(result("q0"))
    before = (tmp_path / JSON_NAME).read_text()

    def broken_replace(src, dst):
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", broken_replace)
    with pytest.raises(OSError, match="disk full"):
        store.append(result("q1"))
    assert (tmp_path / JSON_NAME).read_text() == before  # the old file is intact
    assert sorted(p.name for p in tmp_path.iterdir()) == [CSV_NAME, JSON_NAME]


def test_files_are_readable_by_others(tmp_path: Path) -> None:
    ResultStore(tmp_path).append(result("q0"))
    mode = (tmp_path / JSON_NAME).stat().st_mode & 0o777
    umask = os.umask(0)
    os.umask(umask)
    assert mode == 0o666 & ~umask


def test_load_a_results_json_path_directly(tmp_path: Path) -> None:
    ResultStore(tmp_path).append(result("q7"))
    assert [r.query for r in load_results(tmp_path / JSON_NAME)] == ["q7"]
    assert [r.query for r in load_results(tmp_path)] == ["q7"]


def test_load_errors_are_one_line_results_errors(tmp_path: Path) -> None:
    with pytest.raises(ResultsError, match="no results at"):
        load_results(tmp_path)
    (tmp_path / JSON_NAME).write_text("{not json")
    with pytest.raises(ResultsError, match="not valid JSON"):
        load_results(tmp_path)


def test_csv_columns_flatten_nested_objects_and_omit_series() -> None:
    names = [name for name, _ in csv_columns()]
    for expected in (
        "run_id", "query", "status", "throughput_eps", "phase_checkpoint.duration_s",
        "checkpoints.duration_median_s", "timestamps.t_submit", "setup.machine.cores",
        "setup.engine_target", "state_steady",
    ):  # fmt: skip
        assert expected in names
    assert not any(n.startswith(("timeseries", "checkpoint_events")) for n in names)
    assert len(names) == len(set(names))


@pytest.mark.parametrize("path", RESULTS_FILES, ids=IDS)
def test_csv_round_trips_every_scalar_field(path: Path, tmp_path: Path) -> None:
    """Write the CSV from the JSON records and read it back: the same typed values."""
    results = load_results(path)
    ResultStore(tmp_path).write(results)
    rows = read_csv(tmp_path / CSV_NAME)
    assert rows == [flatten(r) for r in results]
    doc = json.loads(path.read_text())
    for row, raw in zip(rows, doc["results"], strict=True):  # against the JSON, not the model
        assert row["phase_checkpoint.duration_s"] == raw["phase_checkpoint"]["duration_s"]
        assert row["setup.machine.memory_bytes"] == raw["setup"]["machine"]["memory_bytes"]
        assert row["throughput_eps"] == raw["throughput_eps"]
        assert row["state_steady"] == raw["state_steady"]


@pytest.mark.parametrize("path", RESULTS_FILES, ids=IDS)
def test_stored_csv_matches_stored_json(path: Path) -> None:
    """The CSV kept beside each results.json says the same as the JSON."""
    csv_path = path.parent / CSV_NAME
    if not csv_path.exists():
        pytest.skip("no results.csv beside this file")
    expected = [flatten(r) for r in load_results(path)]
    if json.loads(path.read_text())["schema_version"] < 9:
        # A CSV is written once, at its JSON's version; the upgrade to 9 fills these two in
        # the JSON as it loads (its growth was the checkpoints' ratio), not in the CSV.
        for row in expected:
            assert row.pop("state_measure") in ("checkpoint size", None)
            assert row.pop("checkpoint_growth") == row["state_growth"]
        rows = read_csv(csv_path)
        assert {r.pop("state_measure") for r in rows} == {None}
        assert {r.pop("checkpoint_growth") for r in rows} == {None}
        assert rows == expected
        return
    assert read_csv(csv_path) == expected


def test_csv_quotes_awkward_reasons(tmp_path: Path) -> None:
    reason = 'failed: "a, b"\nsecond line'
    ResultStore(tmp_path).append(result("q0", status="failed", reason=reason))
    assert read_csv(tmp_path / CSV_NAME)[0]["reason"] == reason


def test_non_finite_numbers_are_written_as_null(tmp_path: Path) -> None:
    store = ResultStore(tmp_path)
    store.append(result("q0", throughput_eps=float("inf"), cores=float("nan"), time_s=0.0))
    back = store.load()[0]
    assert back.throughput_eps is None and back.cores is None and back.time_s == 0.0
    assert "NaN" not in (tmp_path / JSON_NAME).read_text()
    assert read_csv(tmp_path / CSV_NAME)[0]["throughput_eps"] is None

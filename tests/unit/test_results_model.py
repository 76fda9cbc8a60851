"""The results model: round trips, strict parsing, schema versions (rejection and upgrades)."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from nexmark.results import document, figures, setup
from nexmark.results.codec import ResultsError
from nexmark.results.document import SCHEMA_VERSION, dump_document, load_document
from nexmark.results.query_result import QueryResult, Status
from nexmark.results.store import load_results

DATA = Path(__file__).parents[1] / "data"
# The published results (docs/results/) are kept readable by every later schema as well.
PUBLISHED = Path(__file__).parents[2] / "docs" / "results"
RESULTS_FILES = sorted(DATA.rglob("results.json")) + sorted(PUBLISHED.rglob("results.json"))
IDS = [
    str(p.parent.relative_to(DATA if p.is_relative_to(DATA) else PUBLISHED.parent))
    for p in RESULTS_FILES
]


def sample_doc() -> dict:
    return json.loads((DATA / "constructed" / "quick-base" / "results.json").read_text())


def test_there_is_test_data() -> None:
    assert len(RESULTS_FILES) >= 2


@pytest.mark.parametrize("path", RESULTS_FILES, ids=IDS)
def test_round_trip_is_lossless(path: Path) -> None:
    doc = json.loads(path.read_text())
    results = load_document(copy.deepcopy(doc))
    if doc["schema_version"] == SCHEMA_VERSION:
        assert dump_document(results) == doc
    else:  # an older file comes back upgraded, and stays the same from then on
        assert dump_document(results)["schema_version"] == SCHEMA_VERSION
        assert load_document(dump_document(results)) == results


@pytest.mark.parametrize("path", RESULTS_FILES, ids=IDS)
def test_derived_metrics_follow_the_formulas(path: Path) -> None:
    """Every record's throughput, per core, cost, growth, recovery and time agree with inputs."""
    for r in load_results(path):
        assert r.problems() == [], r.query


@pytest.mark.parametrize("path", RESULTS_FILES, ids=IDS)
def test_every_record_is_complete_for_its_status(path: Path) -> None:
    for r in load_results(path):
        if r.ok:
            required = (r.time_s, r.throughput_eps, r.cores, r.recovery_time_s)
            assert None not in required, r.query
            # A growth, or why none was judged (two sizes at different points of a cycle).
            assert r.state_growth is not None or r.steady_reason, r.query
            assert r.phase_checkpoint.id is not None and r.restored_from
            phases = {s.phase for s in r.timeseries}
            assert {"warmup", "benchmark"} <= phases, r.query
        else:
            assert r.reason, r.query


def test_problems_finds_an_inconsistent_throughput() -> None:
    r = load_document(sample_doc())[0]
    assert r.problems() == []
    r.throughput_eps *= 1.01
    assert any("throughput_eps" in p for p in r.problems())
    r = load_document(sample_doc())[0]
    r.state_steady = not r.state_steady
    assert any("state_steady" in p for p in r.problems())


def test_failed_result_needs_only_identity() -> None:
    r = QueryResult(run_id="r", engine="flink", query="q3", status="failed", reason="boom")
    back = load_document(json.loads(json.dumps(dump_document([r]))))[0]
    assert back == r
    assert back.status is Status.FAILED and back.time_s is None and back.timeseries == []


def test_null_nested_objects_read_as_empty() -> None:
    doc = sample_doc()
    doc["results"][0]["phase_checkpoint"] = None
    r = load_document(doc)[0]
    assert r.phase_checkpoint == figures.PhaseCheckpoint()


def test_unknown_field_is_rejected_with_its_name() -> None:
    doc = sample_doc()
    doc["results"][0]["throughput_mbps"] = 1.0
    with pytest.raises(ResultsError, match="throughput_mbps"):
        load_document(doc)
    doc = sample_doc()
    doc["results"][0]["phase_checkpoint"]["bytes"] = 1
    with pytest.raises(ResultsError, match=r"phase_checkpoint.*bytes"):
        load_document(doc)


def test_missing_identity_and_bad_status_are_rejected() -> None:
    doc = sample_doc()
    del doc["results"][0]["query"]
    with pytest.raises(ResultsError, match="query"):
        load_document(doc)
    doc = sample_doc()
    doc["results"][0]["status"] = "crashed"
    with pytest.raises(ResultsError, match="crashed"):
        load_document(doc)


def test_newer_schema_version_is_rejected_clearly() -> None:
    doc = sample_doc()
    doc["schema_version"] = SCHEMA_VERSION + 1
    with pytest.raises(ResultsError, match=r"newer than this nexmark.*upgrade nexmark"):
        load_document(doc, source="x/results.json")


@pytest.mark.parametrize("version", [0, -1, "1", None, 1.0, True])
def test_invalid_schema_version_is_rejected(version: object) -> None:
    doc = sample_doc()
    doc["schema_version"] = version
    with pytest.raises(ResultsError, match="schema_version"):
        load_document(doc)


def test_not_a_results_document() -> None:
    with pytest.raises(ResultsError, match="not a nexmark results file"):
        load_document({"results": []})
    with pytest.raises(ResultsError, match="not a nexmark results file"):
        load_document([1, 2])


def test_older_versions_are_upgraded_step_by_step(monkeypatch: pytest.MonkeyPatch) -> None:
    """Pretend the code is at version 3: a version-1 file goes through upgrade_to_2, then _3."""
    calls: list[int] = []

    def upgrade_to_2(doc: dict) -> dict:
        # version 1 (in this pretend history) called the reason "error"
        calls.append(2)
        for rec in doc["results"]:
            rec["reason"] = rec.pop("error")
        return doc

    def upgrade_to_3(doc: dict) -> dict:
        # version 2 kept the state size in KiB
        calls.append(3)
        for rec in doc["results"]:
            rec["state_bytes_end"] = rec.pop("state_kib_end") * 1024
        return doc

    monkeypatch.setattr(document, "SCHEMA_VERSION", 3)
    monkeypatch.setattr(document, "UPGRADES", {2: upgrade_to_2, 3: upgrade_to_3})
    current = QueryResult(
        run_id="r", engine="flink", query="q5", status="failed", reason="boom",
        state_bytes_end=4096,
    )  # fmt: skip
    old = copy.deepcopy(current.to_dict())
    old["error"] = old.pop("reason")
    old["state_kib_end"] = old.pop("state_bytes_end") // 1024
    results = load_document({"schema_version": 1, "results": [old]})
    assert calls == [2, 3]
    assert results == [current]
    calls.clear()
    assert document.load_document({"schema_version": 2, "results": [_v2(current)]}) == [current]
    assert calls == [3]


def _v2(r: QueryResult) -> dict:
    rec = r.to_dict()
    rec["state_kib_end"] = rec.pop("state_bytes_end") // 1024
    return rec


def test_missing_upgrade_step_is_an_error(monkeypatch: pytest.MonkeyPatch) -> None:
    doc = sample_doc()
    version = doc["schema_version"]
    monkeypatch.setattr(document, "SCHEMA_VERSION", version + 1)
    monkeypatch.setattr(document, "UPGRADES", {})
    with pytest.raises(ResultsError, match=f"no upgrade from schema version {version} to"):
        load_document(doc)


def test_a_version_8_growth_becomes_the_checkpoint_growth_it_was() -> None:
    doc = sample_doc()
    doc["schema_version"] = 8
    for rec in doc["results"]:
        for key in ("checkpoint_growth", "state_measure"):
            rec.pop(key, None)
    grown = [r for r in doc["results"] if r.get("state_growth") is not None]
    assert grown, "the sample must have a growth to upgrade"
    for r in load_document(doc):
        if r.state_growth is None:
            assert r.state_measure is None and r.checkpoint_growth is None
        else:
            assert r.state_measure == "checkpoint size" and r.checkpoint_growth == r.state_growth
            assert r.problems() == []


def test_stored_files_are_not_from_the_future() -> None:
    for path in RESULTS_FILES:
        assert 1 <= json.loads(path.read_text())["schema_version"] <= SCHEMA_VERSION


def test_a_version_2_document_reads_without_a_source_ceiling_and_round_trips_one() -> None:
    doc = sample_doc()
    assert doc["schema_version"] == 2
    results = load_document(doc)
    assert all(r.source.status is None and r.source_ratio is None for r in results)
    r = copy.deepcopy(next(r for r in results if r.ok))
    r.source = figures.SourceCalibration("ok", None, 1000, 2, 0.01, 100_000.0, 1.5, 66_666.7)
    r.source_ratio = r.throughput_eps / 100_000.0
    assert r.problems() == []
    assert load_document(json.loads(json.dumps(dump_document([r])))) == [r]
    r.source_ratio *= 2
    assert any("source_ratio" in p for p in r.problems())


def _system_check(other_cores: float | None) -> setup.SystemCheck:
    return setup.SystemCheck(
        at=1_700_000_000.0,
        load_avg=[0.5, 0.4, 0.3],
        cpus=2,
        governor="unreadable",
        boost="on",
        window_s=1.0,
        other_cores=other_cores,
        other_processes=[setup.OtherProcess(42, "python3", other_cores)],
        warn_cores=0.25,
    )


def test_a_document_without_system_checks_loads_with_empty_ones() -> None:
    # A file written before the system check existed: current version, no such fields.
    doc = sample_doc()
    doc = document.upgrade(doc)
    for record in doc["results"]:
        assert "system_check" not in record and "system_check" not in record["setup"]
    results = load_document(doc)
    assert all(r.system_check == setup.SystemCheck() for r in results)
    assert all(r.setup.system_check.other_cores is None for r in results)
    assert all(r.setup.system_check.other_processes == [] for r in results)


def test_system_checks_round_trip_and_are_strict() -> None:
    r = copy.deepcopy(next(r for r in load_document(sample_doc()) if r.ok))
    r.setup.system_check = _system_check(0.05)
    r.system_check = _system_check(0.9)
    doc = json.loads(json.dumps(dump_document([r])))
    assert doc["results"][0]["system_check"]["other_processes"][0]["pid"] == 42
    assert load_document(doc) == [r]
    doc["results"][0]["setup"]["system_check"]["other_processes"][0]["cpu"] = 1
    with pytest.raises(ResultsError, match=r"setup\.system_check\.other_processes\[0\].*cpu"):
        load_document(doc)

"""The profile in the results file and the report: it survives the file's round trip, the
report links its flame graph and lists its kinds of work, or says why there is none."""

from __future__ import annotations

from pathlib import Path

from nexmark.report.html import render_html
from nexmark.report.profile import profile_section
from nexmark.results.profile import Profile
from nexmark.results.query_result import QueryResult
from nexmark.results.store import ResultStore, load_results

PROFILE = Profile(
    flame_graph="profiles/q5.html",
    event="itimer",
    interval_ms=10,
    samples=4_210,
    kinds={"state backend": 0.41, "serialization": 0.22, "other": 0.37},
    top_frames={"rocksdb::DBImpl::Get": 0.12, "LongSerializer.deserialize": 0.05},
)


def _result(profile: Profile | None) -> QueryResult:
    r = QueryResult(run_id="r", engine="flink", query="q5", status="ok", events_benchmark=1000)
    r.time_s, r.throughput_eps, r.profile = 2.0, 500.0, profile
    return r


def test_the_profile_survives_the_results_file(tmp_path: Path) -> None:
    ResultStore(tmp_path).write([_result(PROFILE), _result(None)])
    profiled, plain = load_results(tmp_path)
    assert profiled.profile == PROFILE
    assert list(profiled.profile.kinds) == ["state backend", "serialization", "other"]
    assert plain.profile is None


def test_the_report_links_the_flame_graph_and_names_the_kinds() -> None:
    section = profile_section(_result(PROFILE))
    assert '<a href="profiles/q5.html">' in section
    assert "4,210 samples" in section and "itimer" in section
    assert "state backend 41%" in section and "serialization 22%" in section
    assert "<code>rocksdb::DBImpl::Get</code> 12.0%" in section
    assert section in render_html([_result(PROFILE)], {})


def test_a_run_that_could_not_profile_says_why_and_one_not_asked_says_nothing() -> None:
    section = profile_section(_result(Profile(not_profiled="a remote cluster's TaskManagers")))
    assert "Not profiled: a remote cluster&#x27;s TaskManagers" in section
    assert "href" not in section
    assert profile_section(_result(None)) == ""

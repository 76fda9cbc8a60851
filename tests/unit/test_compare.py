"""compare: delta arithmetic, the threshold, verdict direction, setups, the CLI exit code."""

from __future__ import annotations

import json
import os
from html.parser import HTMLParser
from pathlib import Path

import pytest

from nexmark.report.compare import (
    METRICS,
    Verdict,
    compare,
    delta,
    render_compare_html,
    setup_differences,
)
from nexmark.results.codec import ResultsError
from nexmark.results.query_result import QueryResult
from nexmark.results.setup import SystemCheck
from nexmark.results.store import ResultStore, load_results

DATA = Path(__file__).parents[1] / "data"
BASE = DATA / "constructed" / "quick-base"
NEW = DATA / "constructed" / "quick-new"
METRIC = {m.key: m for m in METRICS}


def ok(query: str = "q5", **kw) -> QueryResult:
    values = dict(
        run_id="r", engine="flink", query=query, status="ok", throughput_eps=100_000.0,
        throughput_per_core=50_000.0, recovery_time_s=4.0, state_bytes_end=1_000_000,
    )  # fmt: skip
    values.update(kw)
    r = QueryResult(**values)
    r.phase_checkpoint.duration_s = 1.0
    return r


def test_delta_arithmetic() -> None:
    d = delta(METRIC["throughput_eps"], 200_000.0, 230_000.0, 5.0)
    assert d.change == 30_000.0
    assert d.percent == pytest.approx(15.0)
    assert d.verdict is Verdict.IMPROVED
    d = delta(METRIC["throughput_eps"], 200_000.0, 170_000.0, 5.0)
    assert d.percent == pytest.approx(-15.0) and d.verdict is Verdict.REGRESSED


@pytest.mark.parametrize(
    "key", ["recovery_time_s", "phase_checkpoint.duration_s", "state_bytes_end"]
)
def test_lower_is_better_for_time_and_size(key: str) -> None:
    metric = METRIC[key]
    assert not metric.higher_is_better
    assert delta(metric, 10.0, 8.0, 5.0).verdict is Verdict.IMPROVED  # -20%: less is better
    assert delta(metric, 10.0, 12.0, 5.0).verdict is Verdict.REGRESSED


@pytest.mark.parametrize("key", ["throughput_eps", "throughput_per_core"])
def test_higher_is_better_for_throughput(key: str) -> None:
    assert delta(METRIC[key], 10.0, 12.0, 5.0).verdict is Verdict.IMPROVED
    assert delta(METRIC[key], 10.0, 8.0, 5.0).verdict is Verdict.REGRESSED


def test_threshold_is_inclusive_and_settable() -> None:
    m = METRIC["throughput_eps"]
    assert delta(m, 100.0, 95.0, 5.0).verdict is Verdict.NOISE  # exactly 5%: noise
    assert delta(m, 100.0, 94.9, 5.0).verdict is Verdict.REGRESSED
    assert delta(m, 100.0, 105.0, 5.0).verdict is Verdict.NOISE
    assert delta(m, 100.0, 94.0, 10.0).verdict is Verdict.NOISE
    assert delta(m, 100.0, 99.0, 0.0).verdict is Verdict.REGRESSED
    assert delta(m, 100.0, 100.0, 0.0).verdict is Verdict.NOISE


def test_missing_or_zero_values() -> None:
    m = METRIC["recovery_time_s"]
    d = delta(m, None, 3.0, 5.0)
    assert d.verdict is Verdict.NA and d.change is None and d.percent is None
    d = delta(m, 0.0, 0.5, 5.0)  # no percentage from zero: judged by direction
    assert d.percent is None and d.change == 0.5 and d.verdict is Verdict.REGRESSED


def test_query_verdicts_and_status_changes() -> None:
    base = [ok("q0"), ok("q1"), ok("q2"), ok("q3"), ok("q7")]
    new = [
        ok("q0", throughput_eps=101_000.0),  # within noise everywhere
        ok("q1", recovery_time_s=5.0),  # +25% recovery time: regressed
        ok("q2", throughput_eps=120_000.0),  # improved
        QueryResult(run_id="n", engine="flink", query="q3", status="failed", reason="oom"),
        ok("q9"),
    ]
    c = compare(base, new, threshold_pct=5.0)
    verdicts = {q.query: q.verdict for q in c.queries}
    assert verdicts == {
        "q0": Verdict.NOISE, "q1": Verdict.REGRESSED, "q2": Verdict.IMPROVED,
        "q3": Verdict.REGRESSED, "q7": Verdict.NA, "q9": Verdict.NA,
    }  # fmt: skip
    assert [q.query for q in c.queries] == ["q0", "q1", "q2", "q3", "q7", "q9"]
    q3 = next(q for q in c.queries if q.query == "q3")
    assert "ok -> failed" in q3.note and "oom" in q3.note
    back = compare(new[3:4], base[3:4])
    assert back.queries[0].verdict is Verdict.IMPROVED
    assert [q.query for q in c.regressed] == ["q1", "q3"]


def test_constructed_runs_compare_as_designed() -> None:
    """quick-new was built with q5 slower, q8 faster, q16 smaller state, q10 fixed."""
    c = compare(load_results(BASE), load_results(NEW))
    by = {q.query: q for q in c.queries}
    d = {m.metric.key: m for m in by["q5"].deltas}
    assert d["throughput_eps"].verdict is Verdict.REGRESSED
    base, new = load_results(BASE), load_results(NEW)
    b5 = next(r for r in base if r.query == "q5")
    n5 = next(r for r in new if r.query == "q5")
    assert d["throughput_eps"].change == n5.throughput_eps - b5.throughput_eps
    assert d["throughput_eps"].percent == pytest.approx(
        (n5.throughput_eps / b5.throughput_eps - 1) * 100
    )
    assert {m.metric.key: m.verdict for m in by["q8"].deltas}["recovery_time_s"] is Verdict.IMPROVED
    assert {m.metric.key: m.verdict for m in by["q16"].deltas}[
        "state_bytes_end"
    ] is Verdict.IMPROVED
    assert by["q10"].verdict is Verdict.IMPROVED
    assert by["q6"].verdict is Verdict.NA  # unsupported in both
    assert c.setup_differences == [
        "setup.engine_config.taskmanager.memory.managed.fraction: 0.4 -> 0.6"
    ]


def test_setup_differences_name_machine_and_versions() -> None:
    a, b = ok(), ok(engine_version="2.3.0")
    a.engine_version = "2.2.0"
    b.setup.machine.cores = 8
    a.setup.machine.cores = 2
    diffs = setup_differences([a], [b])
    assert "engine_version: 2.2.0 -> 2.3.0" in diffs
    assert "setup.machine.cores: 2 -> 8" in diffs
    assert setup_differences([ok()], [ok()]) == []
    a, b = ok(), ok()
    a.setup.options = {"queries": "q5", "timeout_s": 60, "checkpoint_interval_s": 30}
    b.setup.options = {"queries": "all", "timeout_s": 600, "checkpoint_interval_s": 10}
    assert setup_differences([a], [b]) == ["setup.options.checkpoint_interval_s: 30 -> 10"]


def test_the_system_checks_are_context_not_setup_differences() -> None:
    a, b = ok(), ok()
    a.setup.system_check = SystemCheck(load_avg=[0.1, 0.1, 0.1], other_cores=0.01, window_s=2)
    b.setup.system_check = SystemCheck(load_avg=[3.0, 2.0, 1.0], other_cores=1.2, window_s=2)
    b.system_check = SystemCheck(other_cores=0.9, window_s=1.0)
    c = compare([a], [b])
    assert c.setup_differences == []
    assert c.context == [
        "system check before Base: load 0.10 0.10 0.10 on ? CPUs, governor ?, boost ?, "
        "other processes 0.01 cores over 2.0 s",
        "system check before New: load 3.00 2.00 1.00 on ? CPUs, governor ?, boost ?, "
        "other processes 1.20 cores over 2.0 s",
        "New q5: other processes used 0.90 cores in the 1.0 s before it",
    ]


def test_duplicate_queries_in_one_file_are_refused() -> None:
    with pytest.raises(ResultsError, match="q5 twice"):
        compare([ok(), ok()], [ok()])


def test_html_carries_the_deltas() -> None:
    c = compare(load_results(BASE), load_results(NEW), threshold_pct=5.0)
    page = render_compare_html(c, "base-dir", "new-dir")

    class Rows(HTMLParser):
        rows: list[dict] = []

        def handle_starttag(self, tag, attrs):
            if tag == "tr" and dict(attrs).get("data-key"):
                self.rows.append(dict(attrs))

    parser = Rows()
    parser.feed(page)
    expected = [(q.query, d) for q in c.queries for d in q.deltas]
    got = [r for r in parser.rows if r["data-key"] != "status"]
    assert len(got) == len(expected)
    for row, (query, d) in zip(got, expected, strict=True):
        assert row["data-query"] == query and row["data-key"] == d.metric.key
        assert json.loads(row["data-base"]) == d.base and json.loads(row["data-new"]) == d.new
        assert json.loads(row["data-percent"]) == d.percent
        assert row["data-verdict"] == d.verdict.value
    assert "taskmanager.memory.managed.fraction" in page and "The setups differ" in page


def test_cli_exit_code_on_regression(tmp_path: Path, nexmark_main) -> None:
    done = nexmark_main("compare", str(BASE), str(NEW))
    assert done.returncode == 0, done.stderr  # without the gate: only a report
    assert "regressed" in done.stdout and "threshold 5%" in done.stdout
    assert "setups differ" in done.stdout
    gated = nexmark_main(
        "compare", str(BASE), str(NEW), "--fail-on-regression", "--html", str(tmp_path / "c.html")
    )
    assert gated.returncode == 1
    assert "regression:" in gated.stderr and "q5" in gated.stderr
    assert (tmp_path / "c.html").read_text().startswith("<!DOCTYPE html>")


def test_cli_gate_passes_within_a_wide_threshold(tmp_path: Path, nexmark_main) -> None:
    """Same data, threshold 1000%: nothing regresses by metrics; q10 only improved."""
    same = nexmark_main("compare", str(BASE / "results.json"), str(BASE), "--fail-on-regression")
    assert same.returncode == 0, same.stdout
    wide = nexmark_main(
        "compare", str(BASE), str(NEW), "--threshold", "1000", "--fail-on-regression"
    )
    assert wide.returncode == 0, wide.stdout
    assert "threshold 1000%" in wide.stdout


def test_cli_rejects_bad_input(tmp_path: Path, nexmark_main) -> None:
    assert nexmark_main("compare", str(BASE), str(NEW), "--threshold", "-1").returncode == 2
    missing = nexmark_main("compare", str(BASE), str(tmp_path / "none"))
    assert missing.returncode == 1 and "no results at" in missing.stderr
    assert "Traceback" not in missing.stderr
    ResultStore(tmp_path / "two").write([ok("q5"), ok("q5", engine="spark")])
    twice = nexmark_main("compare", str(BASE), str(tmp_path / "two"))
    assert twice.returncode == 1 and "twice" in twice.stderr


def test_a_run_of_another_engine_is_compared_side_by_side() -> None:
    flink = [ok("q0", throughput_eps=500_000.0), ok("q5", throughput_eps=100_000.0)]
    spark = [ok("q0", engine="spark", throughput_eps=200_000.0, engine_version="4.3.0")]
    spark.append(ok("q5", engine="spark", throughput_eps=150_000.0, engine_version="4.3.0"))
    flink[0].engine_version = flink[1].engine_version = "2.3.0"
    for r in spark:
        r.setup.engine_config = {"spark.sql.shuffle.partitions": "2"}
    spark[0].setup.machine.cores = 8  # a real difference is still named
    for r, dataset in zip(flink + spark, ["d-1x2", "d-1x2", "d-5x2", "d-5x2"], strict=True):
        r.dataset_id, r.events_id = dataset, "e10000000-s42-abc"  # same events, other slices
    c = compare(flink, spark)
    assert (c.base_label, c.new_label) == ("flink", "spark") and c.across_engines
    verdicts = {q.query: c.says(q.verdict) for q in c.queries}
    assert verdicts == {"q0": "flink better", "q5": "spark better"}
    assert c.setup_differences == ["setup.machine.cores: (unset) -> 8"]  # not the engine facts
    page = render_compare_html(c, "runs/flink", "runs/spark")
    assert "<th>flink</th><th>spark</th>" in page and "flink better" in page
    same = compare(flink, flink)
    assert not same.across_engines and same.says(Verdict.IMPROVED) == "improved"


def _repeated(speeds: list[float], query: str = "q5", **kw) -> QueryResult:
    from nexmark.results.figures import RepeatSample

    r = ok(query, throughput_eps=sorted(speeds)[(len(speeds) - 1) // 2], **kw)
    r.repeats = [RepeatSample(i, throughput_eps=v) for i, v in enumerate(speeds)]
    return r


def test_repeats_are_judged_by_significance_not_by_the_threshold() -> None:
    base = [_repeated([100e3, 104e3, 96e3, 101e3, 99e3])]
    # 15% slower in the median, every repeat below every base repeat: significant, and the
    # interval wholly below the 5% threshold
    slower = compare(base, [_repeated([85e3, 86e3, 83e3, 84e3, 87e3])])
    (d, *_) = slower.queries[0].deltas
    assert d.verdict is Verdict.REGRESSED and d.significance.verdict == "slower"
    assert d.significance.p == pytest.approx(2 / 252)  # complete separation, 5 a side
    assert d.significance.ci[1] < 0.95 and slower.regressed
    # 8% apart in the medians but overlapping: beyond the 5% threshold, yet not significant
    noisy = compare(base, [_repeated([70e3, 92e3, 120e3, 85e3, 125e3])])
    d = noisy.queries[0].deltas[0]
    assert d.percent is not None and abs(d.percent) > 5
    assert d.verdict is Verdict.NOISE and d.significance.verdict == "no significant difference"
    assert not noisy.regressed  # --fail-on-regression: only a significant slowdown fails
    faster = compare(base, [_repeated([110e3, 111e3, 109e3, 112e3, 108e3])])
    assert faster.queries[0].verdict is Verdict.IMPROVED


def test_a_significant_difference_within_the_threshold_is_no_verdict() -> None:
    # Repeats from one warm-up vary less than runs do: 8% slower, completely separated (the
    # test alone says "slower"), but its interval [0.88, 0.96] reaches into the 5% threshold.
    base = [_repeated([100e3, 104e3, 96e3, 101e3, 99e3])]
    new = [_repeated([92e3, 93e3, 90e3, 91e3, 94e3])]
    d = compare(base, new).queries[0].deltas[0]
    assert d.significance.p < 0.05 and d.significance.ci[1] > 0.95
    assert d.verdict is Verdict.NOISE and d.significance.verdict == "no significant difference"
    assert d.significance.within_margin
    # A threshold of 0: the test alone decides.
    d = compare(base, new, threshold_pct=0).queries[0].deltas[0]
    assert d.verdict is Verdict.REGRESSED and not d.significance.within_margin


def test_single_values_say_so_and_fall_back_to_the_threshold() -> None:
    c = compare([ok(throughput_eps=100e3)], [_repeated([80e3, 81e3, 79e3])])
    d = c.queries[0].deltas[0]
    assert d.significance is None and d.verdict is Verdict.REGRESSED
    assert d.note == "1 and 3 values: too few to test, threshold"
    # three a side can never reach p < 0.05 with Mann-Whitney: the threshold again
    c = compare([_repeated([100e3, 101e3, 99e3])], [_repeated([80e3, 81e3, 79e3])])
    assert c.queries[0].deltas[0].note.startswith("3 and 3 values: too few")


def test_the_table_shows_the_ratio_its_interval_and_p(tmp_path: Path) -> None:
    from rich.console import Console

    from nexmark.report.compare import comparison_table

    c = compare([_repeated([100e3, 104e3, 96e3, 101e3, 99e3])],
                [_repeated([85e3, 86e3, 83e3, 84e3, 87e3])])  # fmt: skip
    console = Console(width=120, record=True, file=open(os.devnull, "w"))  # noqa: SIM115
    console.print(comparison_table(c))
    text = console.export_text()
    assert "x0.850 [0.82, 0.89]" in text and "slower (p=0.008)" in text
    c = compare([_repeated([100e3, 104e3, 96e3, 101e3, 99e3])],
                [_repeated([92e3, 93e3, 90e3, 91e3, 94e3])])  # fmt: skip
    console = Console(width=200, record=True, file=open(os.devnull, "w"))  # noqa: SIM115
    console.print(comparison_table(c))
    assert "no significant difference (p=0.008, but within the 5% threshold)" in (
        console.export_text()
    )
    assert "Mann-Whitney at 5% over the repeats, beyond the threshold 5%" in text

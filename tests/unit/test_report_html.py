"""The HTML report: every query has its charts, and the numbers shown are the JSON's numbers."""

from __future__ import annotations

import base64
import dataclasses
import io
import json
import re
import shutil
from pathlib import Path

import pytest
from matplotlib import image as mpimg

from nexmark.report.charts import chart_names, timeline_figure
from nexmark.report.html import write_report
from nexmark.results.codec import ResultsError
from nexmark.results.figures import PhaseCheckpoint
from nexmark.results.query_result import QueryResult
from nexmark.results.store import ResultStore, load_results
from nexmark.results.table import COLUMNS
from nexmark.results.timeline import CheckpointEvent, LivePoint, Sample, Timestamps
from report_page import Page

DATA = Path(__file__).parents[1] / "data"
RESULTS_FILES = sorted(DATA.rglob("results.json"))
IDS = [str(p.parent.relative_to(DATA)) for p in RESULTS_FILES]


def raw_value(record: dict, path: str):
    """A field of a raw JSON record, read without the model (a field newer than the record's
    schema version is null)."""
    for part in path.split("."):
        record = record.get(part) if record is not None else None
    return record


_UNITS = {"K/s": 1e3, "M/s": 1e6, "G/s": 1e9, "/s": 1, "B": 1, "KiB": 2**10, "MiB": 2**20,
          "GiB": 2**30}  # fmt: skip


def read_number(text: str) -> tuple[float, float] | None:
    """Parse a shown number ('2,500,000', '501.61 K/s', '10.2 KiB', '1.31 not steady').

    Returns:
        (value, half a unit of the last digit shown, in the value's unit), or None for '-'.
    """
    if text.strip() == "-":
        return None
    m = re.fullmatch(
        r"\s*([-\d,.]+)\s*(K/s|M/s|G/s|/s|B|KiB|MiB|GiB)?(?: not steady)?(?: \(ckpt\))?\s*", text
    )
    assert m, f"not a number: {text!r}"
    digits = m.group(1).replace(",", "")
    decimals = len(digits.partition(".")[2])
    scale = _UNITS.get(m.group(2) or "", 1)
    return float(digits) * scale, 0.5 * 10**-decimals * scale


def assert_shown(value, text: str) -> None:
    """The shown text is the value rounded to the digits shown."""
    shown = read_number(text)
    if value is None:
        assert shown is None, text
    else:
        assert shown is not None, (value, text)
        number, half_digit = shown
        assert abs(number - value) <= half_digit * (1 + 1e-9), (value, text)


@pytest.fixture(scope="module", params=RESULTS_FILES, ids=IDS)
def report(request, tmp_path_factory) -> tuple[Path, dict, Page]:
    """Each stored results file rendered once: (results dir copy, raw JSON, parsed page)."""
    work = tmp_path_factory.mktemp("report") / "results"
    shutil.copytree(request.param.parent, work)
    html_path = write_report(work)
    page = Page()
    page.feed(html_path.read_text(encoding="utf-8"))
    return work, json.loads(request.param.read_text()), page


def test_report_is_written_beside_the_results(report) -> None:
    work, doc, _ = report
    assert (work / "report.html").is_file()
    drawn = sorted(p.name for p in (work / "charts").iterdir())
    expected = {n for r in load_results(work) for n in chart_names(r).values()}
    assert set(drawn) == expected | {"summary-throughput.png"}


def test_summary_numbers_equal_the_json(report) -> None:
    _, doc, page = report
    ok = [r for r in doc["results"] if r["status"] == "ok"]
    rows = [r for r in page.rows["summary-table"] if r["query"] not in (None, "Total")]
    assert [r["query"] for r in rows] == [r["query"] for r in ok]
    for row, rec in zip(rows, ok, strict=True):
        assert set(row["cells"]) == {c.key for c in COLUMNS}
        for col in COLUMNS:
            value_json, text = row["cells"][col.key]
            assert json.loads(value_json) == raw_value(rec, col.key), (rec["query"], col.key)
            expected = col.fmt(raw_value(rec, col.key))
            if col.key == "state_growth" and rec.get("state_growth") is not None:
                # Results before live state (version 8 and older): the growth was the two
                # checkpoints' ratio, and the table says so.
                measure = rec.get("state_measure", "checkpoint size")
                expected += " (ckpt)" if measure == "checkpoint size" else ""
            assert text == expected
            assert_shown(raw_value(rec, col.key), text)


def test_total_row_is_computed_from_the_json(report) -> None:
    _, doc, page = report
    ok = [r for r in doc["results"] if r["status"] == "ok"]
    total = next(r for r in page.rows["summary-table"] if r["query"] == "Total")["cells"]
    events = sum(r["events_benchmark"] for r in ok)
    time_s = sum(r["time_s"] for r in ok)
    assert json.loads(total["events_benchmark"][0]) == events
    assert json.loads(total["time_s"][0]) == pytest.approx(time_s)
    assert json.loads(total["throughput_eps"][0]) == pytest.approx(events / time_s)
    core_s = sum(r["cores"] * r["time_s"] for r in ok)
    assert json.loads(total["cores"][0]) == pytest.approx(core_s / time_s)
    assert_shown(events / time_s, total["throughput_eps"][1])


def test_failed_queries_are_listed_with_their_reason(report) -> None:
    _, doc, page = report
    failed = [r for r in doc["results"] if r["status"] != "ok"]
    rows = page.rows.get("not-scored", [])[1:]  # after the header row
    assert [(r["query"], r["texts"][1], r["texts"][2]) for r in rows] == [
        (r["query"], r["status"], r["reason"]) for r in failed
    ]


def test_every_query_has_its_charts_and_details(report) -> None:
    work, doc, page = report
    for rec in doc["results"]:
        section = f"{rec['engine']}:{rec['query']}"
        charts = dict(page.images.get(section, []))
        if rec["timeseries"]:
            assert "timeline" in charts, section
        if rec["checkpoint_events"]:
            assert "checkpoints" in charts, section
        if rec["status"] == "ok":
            assert set(charts) == {"timeline", "checkpoints"}, section
        for chart, src in charts.items():
            png = base64.b64decode(src.removeprefix("data:image/png;base64,"))
            name = f"{rec['engine']}-{rec['query']}-{chart}.png"
            assert png == (work / "charts" / name).read_bytes()
            height, width = mpimg.imread(io.BytesIO(png), format="png").shape[:2]
            assert width >= 600 and height >= 300
        for key, (value_json, text) in page.values.get(section, {}).items():
            raw = raw_value(rec, key)
            if key in ("checkpoint_growth", "state_measure") and key not in rec:
                # Filled as the file loads (the upgrade to 9): the growth it had was this.
                growth = rec.get("state_growth")
                measure = None if growth is None else "checkpoint size"
                raw = growth if key == "checkpoint_growth" else measure
            assert json.loads(value_json) == raw, (section, key)
            if key == "state_measure":
                assert text == (raw or "-")
            elif key != "phase_checkpoint.id":
                assert_shown(raw, text)
    assert len(page.images["summary"]) == (1 if any(
        r["status"] == "ok" for r in doc["results"]) else 0)  # fmt: skip


def test_page_is_self_contained(report) -> None:
    _, _, page = report
    assert page.scripts == 0
    assert page.urls and all(u.startswith("data:image/png;base64,") for u in page.urls)


def test_setup_and_machine_are_shown(report) -> None:
    _, doc, page = report
    machine = doc["results"][0]["setup"]["machine"]
    rows = {r["texts"][0]: r["texts"][1] for r in page.rows["machine-0"]}
    assert rows["cores"] == str(machine["cores"])
    assert rows["CPU"] == (machine["cpu_model"] or "-")
    config = {r["texts"][0]: r["texts"][1] for r in page.rows["config-0"]}
    assert config == {k: str(v) for k, v in doc["results"][0]["setup"]["engine_config"].items()}


def test_report_of_an_empty_or_all_failed_run(tmp_path: Path) -> None:
    store = ResultStore(tmp_path)
    store.write([])
    assert "No results recorded" in write_report(tmp_path).read_text()
    store.append(QueryResult(run_id="r", engine="flink", query="q3", status="failed",
                             reason="engine died"))  # fmt: skip
    page = write_report(tmp_path, tmp_path / "elsewhere" / "r.html")
    text = page.read_text()
    assert "engine died" in text and "Nothing was measured for this query" in text
    assert (tmp_path / "elsewhere" / "charts").is_dir()


def test_cli_report(tmp_path: Path, nexmark_main) -> None:
    """`nexmark report DIR --out FILE` through the real entry point, on a two-query run."""
    src = load_results(DATA / "constructed" / "quick-base")
    ResultStore(tmp_path / "run").write([r for r in src if r.query in ("q0", "q10")])
    out = tmp_path / "out" / "page.html"
    done = nexmark_main("report", str(tmp_path / "run"), "--out", str(out))
    assert done.returncode == 0, done.stderr
    assert out.is_file() and (out.parent / "charts" / "flink-q0-timeline.png").is_file()
    assert "Total" in done.stdout and "No space left on device" in done.stdout
    assert str(out) in done.stderr
    missing = nexmark_main("report", str(tmp_path / "nothing"))
    assert missing.returncode == 1 and "no results at" in missing.stderr
    assert "Traceback" not in missing.stderr


def test_one_report_of_two_engines_runs(tmp_path) -> None:
    from nexmark.report.html import write_runs_report

    # A few queries of each run (every query draws its own charts, the slow part).
    flink = load_results(DATA / "constructed" / "quick-base")[:4]
    spark = load_results(DATA / "constructed" / "quick-base")[:4]
    assert any(r.ok for r in flink)
    ResultStore(tmp_path / "flink").write(flink)
    for r in spark:
        r.engine = "spark"
        if r.throughput_eps:
            r.throughput_eps /= 2
    ResultStore(tmp_path / "spark").write(spark)
    out = write_runs_report([tmp_path / "flink", tmp_path / "spark"], tmp_path / "both.html")
    page = Page()
    page.feed(out.read_text(encoding="utf-8"))
    labels = [r["query"] for r in page.rows["summary-table"]]
    assert "flink:Total" in labels and "spark:Total" in labels and "Total" not in labels
    html = out.read_text(encoding="utf-8")
    table = html[
        html.index('id="summary-table"') : html.index("</table>", html.index('id="summary-table"'))
    ]
    scored = sum(r.ok for r in flink)
    assert (
        table.count('<tr data-engine="spark"') == table.count('<tr data-engine="flink"') == scored
    )
    assert len(page.images["summary"]) == 1
    with pytest.raises(ResultsError, match="give one run per engine"):
        write_runs_report([DATA / "constructed" / "quick-base"] * 2, tmp_path / "twice.html")


def _state_result(**fields) -> QueryResult:
    """A scored q5 whose checkpoints report their state: two of the warm-up's (the phase
    checkpoint last), two of the benchmark's (the end checkpoint last)."""
    events = [
        CheckpointEvent("warmup", 1, 2.0, state_bytes=1_000, checkpointed_bytes=1_000),
        CheckpointEvent(
            "warmup", 2, 5.0, state_bytes=3_000, checkpointed_bytes=2_500, kind="phase"
        ),
        CheckpointEvent("benchmark", 3, 9.0, state_bytes=3_400, checkpointed_bytes=700),
        CheckpointEvent("benchmark", 4, 11.0, status="failed"),
        CheckpointEvent(
            "benchmark", 5, 12.0, state_bytes=3_900, checkpointed_bytes=800, kind="end"
        ),
    ]
    r = QueryResult("run-1", "fake", "q5", "ok", checkpoint_events=events, **fields)
    r.timeseries = [Sample(0.5, "warmup", 0), Sample(1.5, "warmup", 100, 100.0, 1.0)]
    r.timestamps = Timestamps(query_start=1000.0, t_submit=1006.0, t_running=1007.5)
    r.restored_from = "/chk-2"
    r.phase_checkpoint = PhaseCheckpoint(2, 0.1, 2_500, 3_000)
    return r


def _state_lines(result: QueryResult) -> dict[str, list[tuple[float, float]]]:
    fig = timeline_figure(result)
    lines = [
        ln for ax in fig.axes for ln in ax.get_lines() if (ln.get_gid() or "").startswith("state-")
    ]
    return {ln.get_gid(): list(zip(ln.get_xdata(), ln.get_ydata(), strict=True)) for ln in lines}


def test_the_timeline_draws_the_live_state_its_entries_and_the_trend_judged(tmp_path) -> None:
    r = _state_result()
    r.live_state = [
        LivePoint(1.0, "warmup", 500, 5),
        LivePoint(2.0, "warmup", 900, 9),
        LivePoint(7.6, "benchmark", 0, 0),  # before the gauges' first refresh: not drawn
        LivePoint(8.0, "benchmark", 2_000, 20),
        LivePoint(10.0, "benchmark", 2_200, 22),
        LivePoint(12.0, "benchmark", 2_400, 24),
        LivePoint(13.0, "benchmark", 2_400, 24),  # not refreshed since: no new point
    ]
    r.state_measure, r.state_growth = "live bytes", 1.2
    r.state_live_start, r.state_live_end = 2_000.0, 2_400.0
    fig = timeline_figure(r)
    lines = {ln.get_gid(): list(zip(ln.get_xdata(), ln.get_ydata(), strict=True))
             for ax in fig.axes for ln in ax.get_lines() if ln.get_gid()}  # fmt: skip
    assert lines["live-warmup"] == [(1.0, 500), (2.0, 900)]
    assert lines["live-benchmark"] == [(8.0, 2_000), (10.0, 2_200), (12.0, 2_400), (13.0, 2_400)]
    assert lines["keys-benchmark"] == [(8.0, 20), (10.0, 22), (12.0, 24), (13.0, 24)]
    assert lines["live-trend"] == [(8.0, 2_000.0), (12.0, 2_400.0)]
    # The checkpoints stay, as points beside the live line.
    assert lines["state-benchmark"] == [(7.5, 3_000), (9.0, 3_400), (12.0, 3_900)]


def test_the_timeline_draws_the_state_size_of_every_completed_checkpoint(tmp_path) -> None:
    lines = _state_lines(_state_result())
    assert lines["state-warmup"] == [(2.0, 1_000), (5.0, 3_000)]
    # The benchmark job starts with the state it restored, at t_running; the failed
    # checkpoint has no size.
    assert lines["state-benchmark"] == [(7.5, 3_000), (9.0, 3_400), (12.0, 3_900)]
    # Nothing reported a size: no series (the panel says so).
    r = _state_result()
    r.checkpoint_events = [dataclasses.replace(c, state_bytes=None) for c in r.checkpoint_events]
    assert _state_lines(r) == {}
    # The report embeds that timeline, and the state sizes survive the results file.
    store = ResultStore(tmp_path / "results")
    store.append(_state_result())
    page = Page()
    page.feed(write_report(tmp_path / "results").read_text(encoding="utf-8"))
    assert "timeline" in dict(page.images["fake:q5"])
    back = load_results(tmp_path / "results")[0]
    assert [c.state_bytes for c in back.checkpoint_events] == [1_000, 3_000, 3_400, None, 3_900]


def test_the_system_check_is_shown_beside_the_machine(tmp_path: Path) -> None:
    from nexmark.results.setup import OtherProcess, SystemCheck

    results = load_results(RESULTS_FILES[0])
    assert "system-0" not in _page_of(results, tmp_path / "old").rows  # older results: none
    check = SystemCheck(
        at=1.7e9, load_avg=[0.5, 0.25, 1.0], cpus=2, governor="performance", boost="off",
        window_s=2.0, other_cores=0.04, other_processes=[OtherProcess(7, "sshd", 0.04)],
    )  # fmt: skip
    for r in results:
        r.setup.system_check = check
    results[0].system_check = SystemCheck(window_s=1.0, other_cores=0.8, warn_cores=0.25)
    rows = {
        r["texts"][0]: r["texts"][1] for r in _page_of(results, tmp_path / "new").rows["system-0"]
    }
    assert rows["load average (1/5/15 min)"] == "0.50 0.25 1.00"
    assert rows["frequency governor"] == "performance" and rows["boost / turbo"] == "off"
    assert rows["other processes"] == "0.04 cores over 2.0 s"
    assert rows["busiest others"] == "sshd (pid 7) 0.04"
    assert rows["busy before queries"] == f"{results[0].query} (0.80 cores)"


def _page_of(results: list[QueryResult], directory: Path) -> Page:
    ResultStore(directory).write(results)
    page = Page()
    page.feed(write_report(directory).read_text(encoding="utf-8"))
    return page

"""The summary table: totals arithmetic, formatting, failures listed, 100 columns."""

from __future__ import annotations

import os
import platform
from pathlib import Path

import pytest
from rich.console import Console

from nexmark.java import java_version
from nexmark.metrics.machine import collect_machine
from nexmark.results.figures import SourceCalibration
from nexmark.results.query_result import QueryResult
from nexmark.results.store import load_results
from nexmark.results.table import (
    COLUMNS,
    field_value,
    fmt_bytes,
    fmt_growth,
    fmt_rate,
    results_renderable,
    source_line,
    totals,
)

DATA = Path(__file__).parents[1] / "data"
RESULTS_FILES = sorted(DATA.rglob("results.json"))
IDS = [str(p.parent.relative_to(DATA)) for p in RESULTS_FILES]


def ok(query: str, events: int, time_s: float, cores: float, **kw) -> QueryResult:
    return QueryResult(
        run_id="r", engine="flink", query=query, status="ok", events_benchmark=events,
        time_s=time_s, cores=cores, throughput_eps=events / time_s, **kw,
    )  # fmt: skip


def render(results: list[QueryResult], width: int = 100) -> str:
    console = Console(width=width, record=True, file=open(os.devnull, "w"))  # noqa: SIM115
    console.print(results_renderable(results))
    return console.export_text()


def test_totals_add_up_and_weight_cores_by_time() -> None:
    rows = [
        ok("q0", 1_000_000, 2.0, 1.0, recovery_time_s=3.0, state_bytes_end=100),
        ok("q1", 3_000_000, 6.0, 2.0, recovery_time_s=5.0, state_bytes_end=None),
        QueryResult(
            run_id="r",
            engine="flink",
            query="q2",
            status="failed",
            reason="x",
            time_s=99.0,
            events_benchmark=7,
        ),  # fmt: skip
    ]
    t = totals(rows)
    assert t["events_benchmark"] == 4_000_000  # the failed query is not counted
    assert t["time_s"] == 8.0
    assert t["throughput_eps"] == 500_000.0  # total events / total time, not a mean of rates
    assert t["cores"] == pytest.approx((1.0 * 2 + 2.0 * 6) / 8)
    assert t["throughput_per_core"] == pytest.approx(500_000 / 1.75)
    assert t["recovery_time_s"] == 8.0
    assert t["state_bytes_end"] == 100
    assert t["state_growth"] is None


def test_totals_of_nothing_are_empty() -> None:
    assert all(v is None for v in totals([]).values())


def test_formats() -> None:
    assert fmt_rate(1_170_000) == "1.17 M/s"
    assert fmt_rate(405_120) == "405.12 K/s"
    assert fmt_rate(None) == "-"
    assert fmt_bytes(3 * 2**20) == "3.0 MiB"
    assert fmt_growth(1.2) == "1.20"
    assert fmt_growth(1.21) == "1.21 not steady"


@pytest.mark.parametrize("path", RESULTS_FILES, ids=IDS)
def test_table_fits_100_columns_without_cutting_numbers(path: Path) -> None:
    results = load_results(path)
    text = render(results)
    assert max(len(line.rstrip()) for line in text.splitlines()) <= 100
    assert "…" not in text
    lines = text.splitlines()
    for r in results:
        if r.ok:
            line = next(x for x in lines if x.split() and x.split()[0] == r.query)
            for col in COLUMNS[:-1]:  # every number on the query's own line
                assert col.fmt(field_value(r, col.key)) in line, (r.query, col.key)
        else:
            assert any(r.query in x and r.status.value in x for x in lines)
    total = next(x for x in lines if x.strip().startswith("Total"))
    assert COLUMNS[0].fmt(totals(results)["events_benchmark"]) in total


def test_unsteady_state_is_flagged_and_failures_have_reasons() -> None:
    rows = [
        ok("q0", 1000, 1.0, 1.0, state_growth=1.5),
        ok("q1", 1000, 1.0, 1.0, state_growth=1.1),
        QueryResult(
            run_id="r",
            engine="flink",
            query="q9",
            status="timeout",
            reason="q9 did not finish within 600 s",
        ),  # fmt: skip
    ]
    text = render(rows, width=140)  # wide enough for the flag on one line
    lines = text.splitlines()
    q0 = next(x for x in lines if x.split() and x.split()[0] == "q0")
    q1 = next(x for x in lines if x.split() and x.split()[0] == "q1")
    assert "1.50 not steady" in q0
    assert "1.10" in q1 and "not steady" not in q1
    assert "q9 did not finish within 600 s" in text
    assert "timeout" in text


def test_machine_description_is_collected() -> None:
    m = collect_machine()
    assert m.cores == os.cpu_count()
    assert m.memory_bytes > 2**27
    assert m.python == platform.python_version()
    assert m.os and m.java is None
    assert m.cpu_model


def test_java_version_of_a_missing_executable_is_none(tmp_path: Path) -> None:
    assert java_version(tmp_path / "no-java") is None
    fake = tmp_path / "java"
    fake.write_text("#!/bin/sh\necho 'openjdk version \"17.0.12\" 2024-07-16' >&2\n")
    fake.chmod(0o755)
    assert java_version(fake) == "17.0.12"


def test_a_full_run_still_fits_100_columns() -> None:
    """23 queries of 50M benchmark events: totals of 1.15 billion events and ~11,500 s."""
    rows = [
        ok(
            f"q{i}",
            50_000_000,
            500.0 + i,
            1.95,
            recovery_time_s=12.345,
            state_bytes_end=1023 * 2**20,
            state_growth=1.25,
        )  # fmt: skip
        for i in range(23)
    ]
    for r in rows:
        r.throughput_per_core = r.throughput_eps / r.cores
        r.phase_checkpoint.duration_s = 12.5
    text = render(rows)
    assert max(len(line.rstrip()) for line in text.splitlines()) <= 100
    assert "…" not in text
    total = next(x for x in text.splitlines() if x.strip().startswith("Total"))
    assert "1,150,000,000" in total and "11753.000" in total
    q22 = next(x for x in text.splitlines() if x.split() and x.split()[0] == "q22")
    assert "50,000,000" in q22 and "1023.0 MiB" in q22 and "12.345" in q22


def test_the_source_ceiling_is_a_column_and_a_line_under_the_table():
    source = SourceCalibration("ok", None, 1_000_000, 2, 1.0, 1_000_000.0, 1.9, 1e6 / 1.9)
    a = ok("q0", 250_000, 0.5, 1.8, source=source)  # 500K/s: half the source's rate
    b = ok("q5", 250_000, 1.0, 1.9, source=source)
    for r in (a, b):
        r.source_ratio = r.throughput_eps / source.throughput_eps
    assert totals([a, b])["source_ratio"] == pytest.approx(500_000 / 1.5 / 1e6)
    text = " ".join(render([a, b], width=100).split())
    assert "50%" in text and "25%" in text and "33%" in text
    assert "Source ceiling: 1.00 M/s on 1.90 cores" in text
    assert "1,000,000 events read and discarded at parallelism 2" in text
    failed = ok("q0", 10, 1.0, 1.0, source=SourceCalibration("failed", "the JVM died"))
    assert "Source ceiling: failed (the JVM died)" in render([failed])
    assert source_line([ok("q0", 10, 1.0, 1.0)]) is None  # an older result: no calibration


def test_a_query_faster_than_the_ceiling_marks_it_invalid():
    """The cell says "invalid" instead of a ratio over 100%, and a line says why."""
    from nexmark.protocol.scoring.record import _source_ratio

    source = SourceCalibration("ok", None, 1_000_000, 2, 1.0, 400_000.0, 1.9, 4e5 / 1.9)
    fast = ok("q0", 250_000, 0.5, 1.8, source=source)  # 500K/s against a 400K/s ceiling
    slow = ok("q5", 250_000, 1.0, 1.9, source=source)
    for r in (fast, slow):
        _source_ratio(r)
    assert fast.source_invalid and "125% of the source-only job" in fast.source_invalid
    assert slow.source_invalid is None and slow.source_ratio == pytest.approx(0.625)
    text = " ".join(render([fast, slow], width=100).split())
    assert "invalid" in text and "125%" not in text.split("Source ceiling")[0]
    assert "Source ceiling invalid for q0" in text
    assert totals([fast, slow])["source_ratio"] is None


def _repeated(query: str, speeds: list[float], failed: int = 0) -> QueryResult:
    from nexmark.protocol.scoring.record import throughput_stats
    from nexmark.results.figures import RepeatSample

    median = sorted(speeds)[(len(speeds) - 1) // 2]
    r = ok(query, 50_000_000, 50_000_000 / median, 1.95, recovery_time_s=12.345,
           state_bytes_end=1023 * 2**20, state_growth=1.25)  # fmt: skip
    r.throughput_per_core = r.throughput_eps / r.cores
    r.phase_checkpoint.duration_s = 12.5
    r.repeats = [RepeatSample(i, throughput_eps=v) for i, v in enumerate(speeds)]
    r.repeats += [RepeatSample(len(speeds) + i, "failed", "job failed") for i in range(failed)]
    r.throughput_stats = throughput_stats(speeds, speeds.index(median))
    return r


def test_repeats_show_the_median_and_its_spread_within_100_columns() -> None:
    rows = [_repeated(f"q{i}", [741e3, 700e3, 790e3, 760e3, 735e3]) for i in range(22)]
    rows.append(_repeated("q22", [99_123.0, 131_000.0, 140_500.0], failed=1))
    text = render(rows)
    assert max(len(line.rstrip()) for line in text.splitlines()) <= 100
    assert "…" not in text
    q0 = next(x for x in text.splitlines() if x.startswith("q0 "))
    assert "741 K/s ±4%" in q0  # stdev 33.9 K/s / 741 K/s
    assert "131 K/s ±17%" in text
    flat = " ".join(text.split())
    assert "the median of 4/5 benchmark phases" in flat
    assert "q22: 1 of 4 repeats failed (job failed); statistics over 3" in flat


def test_one_value_keeps_the_plain_rate() -> None:
    text = render([ok("q0", 1_000_000, 2.0, 1.0)])
    assert "500.00 K/s" in text and "±" not in text


def test_repeats_from_several_warmups_say_so() -> None:
    import dataclasses

    rows = [_repeated("q0", [741e3, 700e3, 790e3, 760e3])]
    rows[0].throughput_stats = dataclasses.replace(rows[0].throughput_stats, runs=2)
    flat = " ".join(render(rows).split())
    assert "the median of 4 benchmark phases restored from 2 warm-ups (--runs)" in flat
    assert "one warm-up" not in flat


def test_the_system_check_line() -> None:
    from nexmark.results.setup import SystemCheck
    from nexmark.results.table import system_line

    results = load_results(RESULTS_FILES[0])
    assert system_line(results) is None  # nothing checked
    for r in results:
        r.setup.system_check = SystemCheck(
            at=1.7e9, load_avg=[1.0, 0.5, 0.25], cpus=2, governor="unreadable",
            boost="unreadable", window_s=2.0, other_cores=0.1,
        )  # fmt: skip
    results[-1].system_check = SystemCheck(window_s=1.0, other_cores=0.3, warn_cores=0.25)
    assert system_line(results) == (
        "System check before the run: load 1.00 0.50 0.25 on 2 CPUs, governor unreadable, "
        "boost unreadable, other processes 0.10 cores over 2.0 s\n"
        f"Other processes busy (cores) before: {results[-1].query} 0.30"
    )
    console = Console(width=200, record=True)
    console.print(results_renderable(results))
    assert "System check before the run: load 1.00" in console.export_text()


def test_a_state_not_judged_and_a_phase_too_short_say_so_with_why() -> None:
    why = "not judged: its state fills and empties with its windows every 10 s of event time"
    rows = [
        ok("q8", 2_500_000, 1.4, 1.9, steady_reason=why, phase_too_short="lasted 1.4 s"),
        ok("q5", 2_500_000, 10.0, 1.9, state_growth=1.05, state_steady=True),
    ]
    text = render(rows, width=140)
    q8 = next(x for x in text.splitlines() if x.split() and x.split()[0] == "q8")
    assert "1.400 short" in q8 and "not judged" in q8 and "not steady" not in q8
    assert "Too short to resolve" in text and "lasted 1.4 s" in text
    assert "Not steady, or not judged" in text and "every 10 s of event time" in text
    q5 = next(x for x in text.splitlines() if x.split() and x.split()[0] == "q5")
    assert "short" not in q5


def test_the_state_column_shows_the_logical_size_where_measured() -> None:
    """On an LSM store the live estimate counts the write buffers: q5 read 202 MiB live where
    its state written once was 8.6 MB. The column shows what the state holds."""
    mib = 2**20
    rows = [
        ok("q5", 2_000_000, 10.0, 1.9, state_live_bytes_end=202 * mib,
           state_logical_bytes_end=9 * mib),
        ok("q20", 2_000_000, 10.0, 1.9, state_live_bytes_end=1900 * mib),
        ok("q7", 2_000_000, 10.0, 1.9, state_live_keys_end=12_000),
    ]  # fmt: skip
    text = render(rows, width=140)
    line = {x.split()[0]: x for x in text.splitlines() if x.split()}
    assert "9.0 MiB" in line["q5"] and "202" not in line["q5"]
    assert "1.9 GiB" in line["q20"] and "12K rows" in line["q7"]
    assert totals(rows)["state_end_bytes"] == 1909 * mib


def test_phases_that_shared_the_machine_are_listed_with_the_busiest() -> None:
    busy = ok("q5", 2_500_000, 10.0, 1.8, other_cores=0.6, other_processes="python3 (pid 7) 0.58")
    warm = ok("q8", 2_500_000, 10.0, 1.9, other_cores=0.02, other_cores_warmup=0.9)
    quiet = ok("q0", 2_500_000, 10.0, 1.9, other_cores=0.01, other_cores_warmup=0.02)
    text = render([busy, warm, quiet], width=140)
    assert "Shared the machine" in text
    rows = [x.split() for x in text.split("Shared the machine", 1)[1].splitlines() if x.split()]
    assert ["q5", "scored", "0.60", "python3", "(pid", "7)", "0.58"] in rows
    assert ["q8", "warm-up", "0.90", "-"] in rows and not any(r[0] == "q0" for r in rows)
    assert "Shared the machine" not in render([quiet], width=140)


def test_a_shared_repeat_flags_its_query() -> None:
    from nexmark.results.figures import RepeatSample
    from nexmark.results.flag_tables import scored_other_cores

    r = ok("q5", 2_500_000, 10.0, 1.8, other_cores=0.01)
    r.repeats = [RepeatSample(index=0, other_cores=0.01), RepeatSample(index=1, other_cores=0.4)]
    assert scored_other_cores(r) == 0.4
    assert "Shared the machine" in render([r], width=140)

"""Changelog folding, exact multiset comparison, and verdicts against a reference."""

from __future__ import annotations

from datetime import datetime, timezone
from decimal import Decimal

import pytest

from nexmark.engines.semantics import Change, RowKind
from nexmark.verify.changelog import fold
from nexmark.verify.check import Status, check
from nexmark.verify.diff import DECIMAL, INTEGER, STRING, TIMESTAMP, coerce, coerce_row, diff_rows
from nexmark.verify.reference import Loose, Reference


def add(row: tuple) -> Change:
    return Change(RowKind.ADD, row)


def retract(row: tuple) -> Change:
    return Change(RowKind.RETRACT, row)


def upsert(key: tuple, row: tuple) -> Change:
    return Change(RowKind.UPSERT, row, key)


def test_fold_applies_updates_and_deletes_as_a_multiset():
    changes = [
        add(("a", 1)),
        retract(("a", 1)),
        add(("a", 2)),
        add(("b", 1)),
        add(("b", 1)),
        retract(("b", 1)),
    ]
    table = fold(changes)
    assert table.rows == {("a", 2): 1, ("b", 1): 1}
    assert not table.orphans
    assert table.changes == 6


def test_fold_is_independent_of_order_across_writers():
    # A retraction written by another sink task before its insertion still cancels it.
    table = fold([retract(("a", 1)), add(("a", 2)), add(("a", 1))])
    assert table.row_list() == [("a", 2)]


def test_fold_reports_retractions_without_insertion():
    table = fold([add(("a", 1)), retract(("a", 1)), retract(("a", 1))])
    assert table.rows == {}
    assert table.orphans == {("a", 1): 1}


def test_fold_rejects_unknown_kinds_and_keyless_upserts():
    with pytest.raises(ValueError, match="unknown change kind"):
        fold([Change("!", ("a",))])
    with pytest.raises(ValueError, match="without a key"):
        fold([Change(RowKind.UPSERT, ("a",))])


def test_fold_keeps_the_last_upsert_of_each_key_and_counts_appends():
    # Spark's update mode: each batch re-emits the current row of every key it changed.
    table = fold(
        [
            upsert(("day1",), ("day1", 3)),
            upsert(("day2",), ("day2", 1)),
            upsert(("day1",), ("day1", 5)),
            add(("appended", 0)),
            add(("appended", 0)),
        ]
    )
    assert table.rows == {("day1", 5): 1, ("day2", 1): 1, ("appended", 0): 2}
    assert not table.orphans and table.changes == 5


def test_diff_counts_duplicates_and_ignores_order():
    diff = diff_rows([(1,), (1,), (2,)], [(2,), (1,), (3,)])
    assert diff.missing == {(1,): 1}
    assert diff.unexpected == {(3,): 1}
    assert (diff.missing_count, diff.unexpected_count, diff.matches) == (1, 1, False)
    assert diff_rows([(1,), (2,)], [(2,), (1,)]).matches


def test_examples_are_sorted_and_limited_even_with_nulls():
    diff = diff_rows([(3, "c"), (1, None), (2, "b")], [])
    missing, unexpected = diff.examples(limit=2)
    assert len(missing) == 2 and unexpected == []


def test_decimals_are_compared_exactly():
    assert coerce("1362000.000", DECIMAL) == Decimal("1362000")
    assert coerce(Decimal("0.1"), DECIMAL) == Decimal("0.1")
    # A float keeps its binary value, so a DOUBLE result never passes for a DECIMAL.
    assert coerce(0.1, DECIMAL) != Decimal("0.1")
    assert not diff_rows([(Decimal("4540.000"),)], [(Decimal("4540.001"),)]).matches


def test_timestamps_are_compared_to_the_microsecond():
    want = datetime(2024, 1, 1, 0, 0, 5, 20000)
    assert coerce("2024-01-01 00:00:05.02", TIMESTAMP) == want
    assert coerce("2024-01-01T00:00:05.020", TIMESTAMP) == want
    assert coerce(want.replace(tzinfo=timezone.utc), TIMESTAMP) == want
    assert coerce("2024-01-01 00:00:05.021", TIMESTAMP) != want


def test_coerce_row_reads_text_rows_by_type():
    row = coerce_row(
        ("7", "x", "1.500", "2024-01-01 00:00:00", None),
        (INTEGER, STRING, DECIMAL, TIMESTAMP, STRING),
    )
    assert row == (7, "x", Decimal("1.5"), datetime(2024, 1, 1), None)
    assert coerce_row(("7",), (INTEGER, STRING)) == ("7",)  # wrong width: left as is
    assert coerce_row(("seven",), (INTEGER,)) == ("seven",)  # unreadable: left as is


def _ref(rows, loose=None):
    return Reference("qX", ("k", "v", "extra"), (INTEGER, INTEGER, STRING), rows, loose=loose)


def test_check_folds_then_matches():
    ref = _ref([(1, 10, "a"), (2, 20, "b")])
    changes = [
        add((1, 5, "a")),
        retract((1, 5, "a")),
        add(("1", "10", "a")),
        add((2, 20, "b")),
    ]
    verdict = check(ref, changes)
    assert verdict.status is Status.MATCH
    assert verdict.changes == 4


def test_check_reports_missing_and_unexpected_rows():
    verdict = check(_ref([(1, 10, "a"), (2, 20, "b")]), [add((1, 10, "a")), add((3, 30, "c"))])
    assert verdict.status is Status.MISMATCH
    assert (verdict.diff.missing_count, verdict.diff.unexpected_count) == (1, 1)
    assert verdict.diff.examples()[0] == [(2, 20, "b")]


def test_check_fails_on_orphan_retractions_even_if_rows_match():
    verdict = check(_ref([(1, 10, "a")]), [add((1, 10, "a")), retract((9, 9, "z"))])
    assert verdict.status is Status.MISMATCH
    assert verdict.orphans == 1


def test_loose_groups_compare_only_their_projection():
    loose = Loose(key=(0,), keys=frozenset({(2,)}), project=(0, 1), rows=[(2, 20)], why="1 tie")
    ref = _ref([(1, 10, "a")], loose)
    ok = check(ref, [add((1, 10, "a")), add((2, 20, "either"))])
    assert ok.status is Status.MATCH
    assert any("ties compared" in n for n in ok.notes)
    wrong = check(ref, [add((1, 10, "a")), add((2, 21, "either"))])
    assert wrong.status is Status.MISMATCH
    assert wrong.diff.missing == {(2, 20): 1}


def test_partial_check_compares_the_derived_rows():
    ref = Reference(
        "qP", ("bidder", "n"), (INTEGER, INTEGER), [(7, 3)],
        derive=lambda rows: [(7, sum(r[1] for r in rows))], partial="totals only",
    )  # fmt: skip
    verdict = check(ref, [add((7, 1)), add((7, 2))])
    assert verdict.status is Status.MATCH
    assert verdict.partially_checked
    assert check(ref, [add((7, 1))]).status is Status.MISMATCH


def test_optional_rows_must_form_a_prefix_by_release_watermark():
    ref = Reference("qW", ("k",), (INTEGER,), [(1,)], optional=[(100, (2,)), (200, (3,))])
    assert check(ref, [add((1,))]).status is Status.MATCH  # last watermark held back
    assert check(ref, [add((1,)), add((2,))]).status is Status.MATCH
    assert check(ref, [add((1,)), add((2,)), add((3,))]).status is Status.MATCH
    gap = check(ref, [add((1,)), add((3,))])  # 3 released after 2, so 2 must be there
    assert gap.status is Status.MISMATCH
    assert gap.diff.missing == {(2,): 1}
    assert check(ref, [add((2,)), add((3,))]).diff.missing == {(1,): 1}
    assert any("optional" in note for note in gap.notes)


def test_rendered_verdicts_show_status_counts_and_examples():
    from rich.console import Console

    from nexmark.verify.check import Verdict
    from nexmark.verify.display import render

    mismatch = check(_ref([(1, 10, "a"), (2, 20, "b")]), [add((1, 10, "a")), add((3, 3, "c"))])
    partial = Verdict("q12", Status.MATCH, notes=["partially checked: totals per bidder"])
    unsupported = Verdict("q6", Status.UNSUPPORTED, "Non-time attribute sort is not supported")
    console = Console(width=160, record=True, file=None)
    with console.capture() as captured:
        console.print(render([mismatch, partial, unsupported]))
    text = captured.get()
    assert "mismatch" in text and "match (partially checked)" in text
    assert "Non-time attribute sort" in text
    assert "qX: examples" in text
    assert "missing     (2, 20, b)" in text and "unexpected  (3, 3, c)" in text

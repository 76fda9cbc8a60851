"""Compare what an engine committed with a query's reference result: one verdict per query."""

from __future__ import annotations

import enum
from collections.abc import Iterable
from dataclasses import dataclass, field

from nexmark.verify.changelog import fold
from nexmark.verify.diff import RowDiff, coerce_row, diff_rows
from nexmark.verify.reference import Reference


class Status(str, enum.Enum):
    MATCH = "match"
    MISMATCH = "mismatch"
    UNSUPPORTED = "unsupported"  # the engine cannot run the query (its reason)
    NOT_CHECKABLE = "not checkable"  # no reference exists (why)
    FAILED = "failed"  # the verification run itself failed (engine error, timeout)


@dataclass
class Verdict:
    """The outcome of verifying one query.

    Attributes:
        query: "q0".."q23".
        status: See `Status`.
        reason: Why unsupported / not checkable / failed; empty otherwise.
        diff: The row comparison, when rows were compared.
        orphans: Retractions without a matching insertion in the engine's changelog.
        notes: What was compared when it was not everything (partial checks, loose ties).
        changes: Changelog rows the engine committed.
    """

    query: str
    status: Status
    reason: str = ""
    diff: RowDiff | None = None
    orphans: int = 0
    notes: list[str] = field(default_factory=list)
    changes: int = 0

    @property
    def partially_checked(self) -> bool:
        return any(n.startswith("partially checked") for n in self.notes)


def check(ref: Reference, changes: Iterable[tuple[str, tuple]]) -> Verdict:
    """Fold the engine's changelog, read its rows by the reference's column types, compare.

    Args:
        ref: The query's reference result.
        changes: The committed changelog: (kind, row) with kind '+I', '-U', '+U' or '-D'.
    """
    table = fold(changes)
    actual = [coerce_row(row, ref.types) for row in table.row_list()]
    notes = [f"partially checked: {ref.partial}"] if ref.partial else []
    if ref.derive is not None:
        try:
            actual = ref.derive(actual)
        except (TypeError, IndexError, ValueError) as exc:
            return Verdict(ref.query, Status.MISMATCH, f"rows of an unexpected shape: {exc}")
    diff = _compare(ref, actual, notes)
    ok = diff.matches and not table.orphans
    return Verdict(
        ref.query,
        Status.MATCH if ok else Status.MISMATCH,
        diff=diff,
        orphans=sum(table.orphans.values()),
        notes=notes,
        changes=table.changes,
    )


def _compare(ref: Reference, actual: list[tuple], notes: list[str]) -> RowDiff:
    """Exact rows in full; rows of loosely tied groups on their projection only."""
    loose = ref.loose
    if loose is None:
        return diff_rows(ref.rows, actual)
    notes.append(f"ties compared on columns {_names(ref, loose.project)} only: {loose.why}")
    exact, projected = [], []
    for row in actual:
        key = tuple(row[i] for i in loose.key) if len(row) == len(ref.columns) else None
        if key in loose.keys:
            projected.append(tuple(row[i] for i in loose.project))
        else:
            exact.append(row)
    full = diff_rows(ref.rows, exact)
    part = diff_rows(loose.rows, projected)
    return RowDiff(
        full.expected_rows + part.expected_rows,
        full.actual_rows + part.actual_rows,
        full.missing + part.missing,
        full.unexpected + part.unexpected,
    )


def _names(ref: Reference, positions: tuple[int, ...]) -> str:
    return "(" + ", ".join(ref.columns[i] for i in positions) + ")"

"""Compare what an engine committed with a query's reference result: one verdict per query."""

from __future__ import annotations

import enum
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from nexmark.engines.semantics import Change
from nexmark.verify.changelog import fold
from nexmark.verify.diff import RowDiff, coerce_row, diff_rows
from nexmark.verify.reference import Reference

if TYPE_CHECKING:
    from nexmark.protocol.query.observe import Measured


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
        measured: What the protocol observed of the run whose rows were compared (the phase
            checkpoint, the restore the benchmark job reported, the events it read); None when
            no run was made.
    """

    query: str
    status: Status
    reason: str = ""
    diff: RowDiff | None = None
    orphans: int = 0
    notes: list[str] = field(default_factory=list)
    changes: int = 0
    measured: Measured | None = None

    @property
    def partially_checked(self) -> bool:
        return any(n.startswith("partially checked") for n in self.notes)


def check(ref: Reference, changes: Iterable[Change]) -> Verdict:
    """Fold the engine's changes, read its rows by the reference's column types, compare.

    Args:
        ref: The query's reference result.
        changes: The committed changes, as the engine's emission describes its result.
    """
    table = fold(changes)
    actual = [coerce_row(row, ref.types) for row in table.row_list()]
    notes = [f"partially checked: {ref.partial}"] if ref.partial else []
    if ref.derive is not None:
        try:
            actual = ref.derive(actual)
        except (TypeError, IndexError, ValueError) as exc:
            return Verdict(ref.query, Status.MISMATCH, f"rows of an unexpected shape: {exc}")
    diff = _optional(ref, _compare(ref, actual, notes), notes)
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


def _optional(ref: Reference, diff: RowDiff, notes: list[str]) -> RowDiff:
    """Accept optional rows found among the unexpected ones, as a prefix by release watermark.

    The engine's last watermark released every optional row up to some point, so if a row
    released at T is present, every optional row released at or before T must be too.
    """
    if not ref.optional:
        return diff
    unexpected = Counter(diff.unexpected)
    present: list[tuple[int, tuple]] = []
    for released, row in sorted(ref.optional, key=lambda item: item[0]):
        if unexpected[row] > 0:
            unexpected[row] -= 1
            present.append((released, row))
    cutoff = max((released for released, _ in present), default=None)
    due = Counter(r for t, r in ref.optional if cutoff is not None and t <= cutoff)
    gaps = due - Counter(r for _, r in present)
    notes.append(
        f"{len(ref.optional)} rows released by the last watermark slack are optional "
        f"({len(present)} present)"
    )
    return RowDiff(
        diff.expected_rows + sum(due.values()),
        diff.actual_rows,
        diff.missing + gaps,
        +unexpected,
    )


def _names(ref: Reference, positions: tuple[int, ...]) -> str:
    return "(" + ", ".join(ref.columns[i] for i in positions) + ")"

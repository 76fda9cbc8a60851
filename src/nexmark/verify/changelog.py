"""Fold a changelog (+I / -U / +U / -D rows) into the final table it describes.

An updating query (aggregation, join with retractions, top-N, deduplication) emits a stream
of changes, not a table: an update retracts the old row (-U) and inserts the new one (+U). The
final table is the multiset of inserted rows minus the retracted ones. Counting rather than
replaying keeps the fold independent of the order in which parallel sink tasks wrote their rows:
only a retraction that never meets its insertion is an error.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field

INSERT_KINDS = frozenset({"+I", "+U"})
RETRACT_KINDS = frozenset({"-U", "-D"})


@dataclass
class FoldedTable:
    """The final table of a changelog.

    Attributes:
        rows: Every row of the final table, as a multiset (row -> occurrences, all > 0).
        orphans: Rows retracted more often than inserted (row -> surplus retractions); a correct
            changelog has none.
        changes: How many changelog rows were folded.
    """

    rows: Counter = field(default_factory=Counter)
    orphans: Counter = field(default_factory=Counter)
    changes: int = 0

    def row_list(self) -> list[tuple]:
        """The final rows as a list, duplicates repeated."""
        return list(self.rows.elements())


def fold(changes: Iterable[tuple[str, tuple]]) -> FoldedTable:
    """Apply a changelog as a multiset and return the final table.

    Args:
        changes: (kind, row) pairs with kind one of '+I', '-U', '+U', '-D'.

    Raises:
        ValueError: For an unknown change kind.
    """
    counts: Counter = Counter()
    n = 0
    for kind, row in changes:
        n += 1
        if kind in INSERT_KINDS:
            counts[row] += 1
        elif kind in RETRACT_KINDS:
            counts[row] -= 1
        else:
            raise ValueError(f"unknown changelog kind {kind!r} (expected +I, -U, +U or -D)")
    table = FoldedTable(changes=n)
    for row, count in counts.items():
        if count > 0:
            table.rows[row] = count
        elif count < 0:
            table.orphans[row] = -count
    return table

"""Fold an engine's collected changes into the final table they describe.

How the rows describe the table is the engine's declared `ResultSemantics.emission`:

- a changelog (Flink): an updating query (aggregation, join with retractions, top-N,
  deduplication) emits changes, not a table: an update retracts the old row and adds the new
  one. The final table is the multiset of added rows minus the retracted ones. Counting rather
  than replaying keeps the fold independent of the order in which parallel sink tasks wrote
  their rows: only a retraction that never meets its addition is an error.
- upserts (Spark's update mode): each UPSERT row is the current row of its key; the last one
  per key is the key's final row. Append-only rows come as ADD changes and are counted.
  Upserts of one key must therefore be read in the order the engine committed them.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field

from nexmark.engines.semantics import Change, RowKind


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


def fold(changes: Iterable[Change]) -> FoldedTable:
    """Apply changes: ADD / RETRACT as a multiset, UPSERT as the last row of its key.

    Raises:
        ValueError: For an unknown change kind, or an UPSERT without a key.
    """
    counts: Counter = Counter()
    latest: dict[tuple, tuple] = {}
    n = 0
    for kind, row, key in changes:
        n += 1
        if kind is RowKind.ADD:
            counts[row] += 1
        elif kind is RowKind.RETRACT:
            counts[row] -= 1
        elif kind is RowKind.UPSERT:
            if key is None:
                raise ValueError(f"an upsert without a key: {row!r}")
            latest[key] = row
        else:
            raise ValueError(f"unknown change kind {kind!r} (expected a RowKind)")
    counts.update(latest.values())
    table = FoldedTable(changes=n)
    for row, count in counts.items():
        if count > 0:
            table.rows[row] = count
        elif count < 0:
            table.orphans[row] = -count
    return table

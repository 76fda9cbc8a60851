"""Reference results per query, computed without the engine under test.

The events are read straight from the dataset's CSV files (with pyarrow, by the column list of
`nexmark.workload.schema`), then each query's semantics (docs/verification.md) are evaluated by
DuckDB SQL written for this purpose in `reference_sql.py`. Nothing here runs the engine's SQL.

A reference is the final table a run must hold when its source stays alive after the last
event (no end-of-input): event-time windows fire only up to the *final watermark*. How that
watermark follows from the data, when a window fires and how AVG over integers rounds are the
engine's declared `ResultSemantics` (`EventData.for_engine`). On Flink the final watermark is
the minimum over the benchmark part's files (one per source reader) of their last event time
minus 4 s; the warm-up part's watermark does not matter because every benchmark event is later.
Each file is striped across its whole part (docs/dataset-format.md), so that minimum is the
part's last event time minus at most (files - 1) blocks of events, minus 4 s.
"""

from __future__ import annotations

from nexmark.verify import reference_sql  # the per-query definitions
from nexmark.verify.events import (
    PARTS,
    EventData,
    Loose,
    NotCheckable,
    Reference,
    connect,
    events_from_rows,
    final_watermark_of,
    load_events,
    part_files,
    side_table,
)

__all__ = [
    "PARTS",
    "EventData",
    "Loose",
    "NotCheckable",
    "Reference",
    "connect",
    "events_from_rows",
    "final_watermark_of",
    "load_events",
    "part_files",
    "side_table",
    "reference",
]


def reference(query: str, data: EventData) -> Reference:
    """The reference result of one query on `data`.

    Raises:
        NotCheckable: When the query's output has no engine-independent reference.
        KeyError: For an unknown query name.
        ValueError: Events read without an engine's rules (`EventData.check_rules`).
    """
    data.check_rules()
    build = reference_sql.BUILDERS[query]
    con = connect(data.table)
    try:
        return build(con, data)
    finally:
        con.close()

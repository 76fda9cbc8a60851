"""q13's static side table: 10,000 rows keyed by auction mod 10000, the same in every run.

Each row is `side_key, side_value, valid_from`. The value is a pure function of the key, so a
reference result can compute it without reading the file, and `valid_from` is the epoch so that
every row is valid for every bid (Flink joins it as a versioned table; see docs/queries.md).
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

ROWS = 10_000
FILE_NAME = "side-table.csv"
VALID_FROM = "1970-01-01 00:00:00.000"


def side_value(key: int) -> str:
    """The side table's value for one key: readable, unique and fixed forever.

    Args:
        key: An integer in [0, ROWS), i.e. `auction mod 10000`.
    """
    digest = hashlib.sha256(f"nexmark-side-{key}".encode()).hexdigest()
    return f"side-{key:04d}-{digest[:12]}"


def side_table_lines() -> list[str]:
    """Every row as a CSV line (no header), ordered by key."""
    return [f"{key},{side_value(key)},{VALID_FROM}" for key in range(ROWS)]


def write_side_table(directory: Path) -> Path:
    """Write the side table as the only file of `directory`; return the file's path.

    The file is written under a hidden name and renamed, so a reader never sees half of it
    (Flink's file source skips names starting with a dot).
    """
    directory.mkdir(parents=True, exist_ok=True)
    target = directory / FILE_NAME
    tmp = directory / f".{FILE_NAME}.tmp"
    tmp.write_text("\n".join(side_table_lines()) + "\n", encoding="ascii")
    os.replace(tmp, target)
    return target

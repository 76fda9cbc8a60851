"""Read back what a query wrote itself: q10's CSV files, partitioned by day and hour-minute.

Only committed files count: a file sink writes in-progress files under hidden names (leading
'.') and publishes them when a checkpoint completes; marker files start with '_'. The partition
values live in the directory names (`dt=2024-01-01/hm=00%3A05`, escaped), not in the rows.
"""

from __future__ import annotations

import csv
from pathlib import Path
from urllib.parse import unquote

from nexmark.workload import queries


def committed_files(root: Path) -> list[Path]:
    """Visible data files under `root`, sorted; hidden and marker files are skipped."""
    if not root.is_dir():
        return []
    return sorted(
        p
        for p in root.rglob("*")
        if p.is_file()
        and not any(part.startswith((".", "_")) for part in p.relative_to(root).parts)
    )


def partition_values(path: Path, root: Path) -> dict[str, str]:
    """The `key=value` directory names between `root` and the file, unescaped."""
    values = {}
    for part in path.relative_to(root).parts[:-1]:
        key, sep, value = part.partition("=")
        if sep:
            values[unquote(key)] = unquote(value)
    return values


def read_partitioned_csv(root: Path, partition_keys: tuple[str, ...]) -> list[tuple]:
    """Every row of every committed file, with the partition values appended in order.

    Fields come back as text ('' for an empty field); the comparison reads them by type.
    """
    rows: list[tuple] = []
    for path in committed_files(root):
        values = partition_values(path, root)
        suffix = tuple(values.get(k) for k in partition_keys)
        with path.open(newline="", encoding="utf-8") as handle:
            rows.extend(
                tuple(None if f == "" else f for f in rec) + suffix
                for rec in csv.reader(handle)
                if rec
            )
    return rows


def read_q10_files(work_dir: Path) -> list[tuple]:
    """q10's committed rows under a run's work directory (where the query wrote them)."""
    out_dir = Path(queries.prepare_query_dirs("q10", work_dir)["output_dir"])
    return read_partitioned_csv(out_dir, ("dt", "hm"))

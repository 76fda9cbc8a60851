"""What a reference is computed from and what it is: the events of a dataset read straight from
its files (`EventData`, `load_events`: pyarrow, by the column list of `nexmark.workload.schema`,
with the engine's declared rules), DuckDB's views over them (`connect`), and the result types
(`Reference`, `Loose`, `NotCheckable`). The per-query definitions are in reference_sql.py and
`reference.reference` ties the two (docs/verification.md).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pcsv

from nexmark.engines.semantics import (
    FinalWatermark,
    IntegerAverage,
    ResultSemantics,
    SideLookup,
    WindowFiring,
)
from nexmark.errors import DatasetError
from nexmark.storage.s3 import S3Url
from nexmark.workload.schema import (
    COLUMNS,
    WATERMARK_DELAY_MS,
    Kind,
    file_name,
    file_type,
    is_time,
    view_columns,
)
from nexmark.workload.side_table import side_table_lines

if TYPE_CHECKING:
    import duckdb

PARTS = ("warmup", "benchmark")

_ARROW_TYPES = {
    "INT": pa.int32(),
    "BIGINT": pa.int64(),
    "VARCHAR": pa.string(),
    "TIMESTAMP(3)": pa.timestamp("ms"),
}


@dataclass
class EventData:
    """Every event of a dataset, in event-number order, and what the run's end looks like.

    Attributes:
        table: The schema's columns plus `event_number` (global order) and `segment` (which
            file, i.e. which source reader, delivered it; events of one segment are processed
            in order, events of different segments in any interleaving).
        final_watermark: The last watermark of a run whose source stays alive; None means
            every window is closed (as if the input had ended).
        side_table: q13's side table (key -> value), when known.
        watermark_slack_ms: How far below `final_watermark` the engine's last watermark may
            stay (Flink's mini-batch forwards row-time watermarks only when they cross its
            interval, 2 s): rows released within the slack are optional.
        reader_last_times: The last event time of each benchmark file read last (one per
            source reader), from which `for_engine` derives the final watermark.
        window_firing: When an event-time window fires (the engine's rule).
        integer_average: What AVG over integers returns (the engine's rule).
        side_lookup: How q13's bids meet the side table (the engine's rule).

    The rules are None until the events are read with an engine's semantics (`for_engine`)
    or given: `reference` refuses data without them rather than assume one engine's.
    """

    table: pa.Table
    final_watermark: datetime | None
    side_table: dict[int, str] | None = None
    watermark_slack_ms: int = 0
    reader_last_times: tuple[datetime, ...] = ()
    window_firing: WindowFiring | None = None
    integer_average: IntegerAverage | None = None
    side_lookup: SideLookup | None = None

    def check_rules(self) -> None:
        """ValueError unless every rule a reference follows was stated."""
        rules = ("window_firing", "integer_average", "side_lookup")
        missing = [name for name in rules if getattr(self, name) is None]
        if missing:
            raise ValueError(
                f"events read without an engine's result semantics (no {', '.join(missing)}): "
                "read them with EventData.for_engine(engine.semantics())"
            )

    def for_engine(
        self, semantics: ResultSemantics, watermark_slack_ms: int | None = None
    ) -> EventData:
        """The same events, read with an engine's declared result semantics: its final
        watermark (from `reader_last_times`), window rule, average, and slack (the engine's
        unless given)."""
        slack = semantics.watermark_slack_ms if watermark_slack_ms is None else watermark_slack_ms
        final = self.final_watermark
        if self.reader_last_times:
            rule = semantics.final_watermark
            final = final_watermark_of(self.reader_last_times, rule)
            if rule is FinalWatermark.MIN_TO_MAX_OVER_READERS:  # all from the min up: optional
                spread = max(self.reader_last_times) - min(self.reader_last_times)
                slack += spread // timedelta(milliseconds=1)
        return replace(
            self,
            final_watermark=final,
            watermark_slack_ms=slack,
            window_firing=semantics.window_firing,
            integer_average=semantics.integer_average,
            side_lookup=semantics.side_lookup,
        )


@dataclass
class Loose:
    """Groups of rows where the engine may legitimately choose between tied rows.

    For those groups only the projected columns, which are the same whatever the choice, are
    compared; every other row is compared in full.

    Attributes:
        key: Column positions of the group key (e.g. the auction of a top-N).
        keys: The ambiguous key values.
        project: Column positions compared for rows of ambiguous groups.
        rows: The expected rows of ambiguous groups, already projected.
        why: One line for the output, e.g. "3 auctions tied at the 10th place".
    """

    key: tuple[int, ...]
    keys: frozenset
    project: tuple[int, ...]
    rows: list[tuple]
    why: str


@dataclass
class Reference:
    """The expected final table of one query, and how much of it can be compared.

    Attributes:
        query: "q0".."q23".
        columns: Output column names, in the engine's SQL order.
        types: Logical type per column (see `diff.coerce`), used to read the engine's rows.
        rows: Expected rows (for a partial check: the expected derived rows).
        loose: Tied groups compared on a projection only.
        derive: For a partial check, turns the engine's rows into what is compared.
        partial: Why only part of the output is compared ("" for a full check).
        optional: (release watermark in epoch ms, row) of rows released within the watermark
            slack: present or not, but if one is present so is every row released no later.
    """

    query: str
    columns: tuple[str, ...]
    types: tuple[str, ...]
    rows: list[tuple]
    loose: Loose | None = None
    derive: Callable[[list[tuple]], list[tuple]] | None = None
    partial: str = ""
    optional: list[tuple[int, tuple]] = field(default_factory=list)


class NotCheckable(Exception):  # noqa: N818 - a verdict, not an error
    """A query whose output has no engine-independent reference; the message says why."""


def _read_file(path: Path) -> pa.Table:
    """One data file, typed: Parquet read by DuckDB's own reader, CSV by pyarrow's."""
    return _read_parquet(path) if path.suffix == ".parquet" else _read_csv(path)


def _read_parquet(path: Path) -> pa.Table:
    """A Parquet file through DuckDB (independent of the pyarrow writer), in file order."""
    names = [file_name(c) for c in COLUMNS]
    schema = pa.schema([(c.name, _ARROW_TYPES[file_type(c)]) for c in COLUMNS])
    import duckdb

    con = duckdb.connect()
    try:
        select = ", ".join(f'"{n}"' for n in names)
        quoted = str(path).replace("'", "''")
        relation = con.sql(f"SELECT {select} FROM read_parquet('{quoted}')")
        table = getattr(relation, "to_arrow_table", relation.fetch_arrow_table)()
    except duckdb.Error as exc:
        raise DatasetError(f"{path}: cannot read ({exc})") from None
    finally:
        con.close()
    table = table.rename_columns(schema.names).cast(schema)
    return _times(table)


def _times(table: pa.Table) -> pa.Table:
    for i, c in enumerate(COLUMNS):
        if is_time(c):
            table = table.set_column(i, c.name, table.column(i).cast(pa.timestamp("ms")))
    return table


def _read_csv(path: Path) -> pa.Table:
    """One data file, typed; times are stored as epoch milliseconds (docs/dataset-format.md)."""
    names = [c.name for c in COLUMNS]
    table = pcsv.read_csv(
        path,
        read_options=pcsv.ReadOptions(column_names=names),
        parse_options=pcsv.ParseOptions(quote_char=False),  # no field is ever quoted
        convert_options=pcsv.ConvertOptions(
            column_types={c.name: _ARROW_TYPES[file_type(c)] for c in COLUMNS},
            null_values=[""],
            strings_can_be_null=True,
        ),
    )
    return _times(table)


def part_files(dataset_dir: Path, part: str) -> list[Path]:
    """The data files of one part, in event order (file names sort by their first event)."""
    folder = dataset_dir / part
    files = sorted(
        p
        for p in (folder.iterdir() if folder.is_dir() else ())
        if p.suffix in (".parquet", ".csv") and not p.name.startswith(".")
    )
    if not files:
        raise DatasetError(f"no data files in {dataset_dir / part}")
    return files


def load_events(dataset_dir: Path | S3Url) -> EventData:
    """Read every event of a dataset and derive the final watermark of a verification run.

    Args:
        dataset_dir: A dataset directory (DIR/warmup/*.parquet, DIR/benchmark/*.parquet, or
            the same as .csv), or a dataset on an object store (`s3://...`).

    Raises:
        DatasetError: When a part has no files, or the files disagree with the manifest.
    """
    if isinstance(dataset_dir, S3Url):
        return _load_from_store(dataset_dir)
    tables, last_times = [], []
    seen: dict[str, tuple[int, str | None]] = {}  # file -> (events, last date_time)
    numbers = _event_numbers(dataset_dir)
    final_files = _last_slice_files(dataset_dir)
    first = 0  # a hand-made dataset (no manifest): files are consecutive event ranges
    for part in PARTS:
        for path in part_files(dataset_dir, part):
            table = _read_file(path)
            segment = pa.array([len(tables)] * len(table), pa.int64())
            table = table.append_column("segment", segment)
            own = numbers.get(path.resolve())
            if own is None or len(own) != len(table):
                own = range(first, first + len(table))
            first += len(table)
            tables.append(table.append_column("event_number", pa.array(own, pa.int64())))
            last = pc.max(table["date_time"]).as_py() if len(table) else None
            seen[f"{part}/{path.name}"] = (len(table), _text(last))
            if part == "benchmark" and last is not None and path.resolve() in final_files:
                last_times.append(last)
    _check_manifest(dataset_dir, seen)
    events = pa.concat_tables(tables)
    events = events.take(pc.sort_indices(events["event_number"]))  # the one global order
    # The final watermark follows from the readers' last times by the engine's rule: known
    # once the events are read for an engine (`for_engine`).
    return EventData(events, None, side_table(), reader_last_times=tuple(last_times))


def _load_from_store(url: S3Url) -> EventData:
    """A dataset on a store, read by the same readers as a local one (DuckDB's own Parquet
    reader, independent of the engines' and of pyarrow's S3 path): its manifest checked first
    (a half-written dataset is refused), its objects copied to a temporary folder."""
    import tempfile

    from nexmark.storage import files
    from nexmark.workload.dataset import Dataset

    Dataset(url)  # whole, or one line
    with tempfile.TemporaryDirectory(prefix="nexmark-reference-") as tmp:
        for found in files.objects(url):
            files.download(found, Path(tmp) / found.key[len(url.key) :].lstrip("/"))
        return load_events(Path(tmp))


def _last_slice_files(dataset_dir: Path) -> set[Path]:
    """The benchmark files read last: those of its last time slice (every file without a
    manifest). Their readers' minimum is the final watermark."""
    files = {p.resolve() for p in part_files(dataset_dir, "benchmark")}
    if not (dataset_dir / "manifest.json").is_file():
        return files
    from nexmark.workload.dataset import Dataset

    bench = Dataset(dataset_dir).files("benchmark")
    last = max(f.layout.slice for f in bench)
    return {f.path for f in bench if f.layout.slice == last}


def _event_numbers(dataset_dir: Path) -> dict[Path, object]:
    """Each file's event numbers from the manifest's layout (a file holds striped blocks)."""
    if not (dataset_dir / "manifest.json").is_file():
        return {}
    from nexmark.workload.dataset import Dataset

    return {f.path: f.layout.numbers() for f in Dataset(dataset_dir).files()}


def _text(value: datetime | None) -> str | None:
    return None if value is None else value.strftime("%Y-%m-%d %H:%M:%S.%f")[:-3]


def _check_manifest(dataset_dir: Path, seen: dict[str, tuple[int, str | None]]) -> None:
    """The files read must be the manifest's, with its event counts and last event times."""
    path = dataset_dir / "manifest.json"
    if not path.is_file():
        return  # a hand-made dataset: nothing to check against
    manifest = json.loads(path.read_text())
    listed = {
        f["path"]: (f["events"], f.get("last_date_time"))
        for part in PARTS
        for f in manifest["parts"][part]["files"]
    }
    if listed != seen:
        wrong = sorted(k for k in listed.keys() | seen.keys() if listed.get(k) != seen.get(k))
        raise DatasetError(
            f"{dataset_dir}: files differ from the manifest ({', '.join(wrong[:3])}): "
            "regenerate the dataset"
        )


def side_table() -> dict[int, str]:
    """q13's side table as the engine reads it (its CSV lines: key, value, valid_from)."""
    rows = (line.split(",") for line in side_table_lines())
    return {int(key): value for key, value, _valid_from in rows}


def final_watermark_of(last_times: Sequence[datetime], rule: FinalWatermark) -> datetime | None:
    """The watermark a run ends with, from each source reader's last event time: the minimum
    (or the maximum: MAX_OVER_INPUT, and the top of MIN_TO_MAX_OVER_READERS, whose rows above
    the minimum `EventData.for_engine` makes optional) over readers of (last event time -
    delay)."""
    if not last_times:
        return None
    last = min(last_times) if rule is FinalWatermark.MIN_OVER_READERS else max(last_times)
    return last - timedelta(milliseconds=WATERMARK_DELAY_MS)


def events_from_rows(rows: Sequence[dict], segments: Sequence[int] | None = None) -> pa.Table:
    """An event table from dicts keyed by schema column name (missing keys are null).

    Used by tests and tools that make events by hand; `segments` defaults to one reader.
    """
    schema = pa.schema([(c.name, _ARROW_TYPES[c.type]) for c in COLUMNS])
    table = pa.Table.from_pylist([{c.name: r.get(c.name) for c in COLUMNS} for r in rows], schema)
    seg = list(segments) if segments is not None else [0] * len(rows)
    table = table.append_column("segment", pa.array(seg, pa.int64()))
    return table.append_column("event_number", pa.array(range(len(rows)), pa.int64()))


def connect(events: pa.Table) -> duckdb.DuckDBPyConnection:
    """A DuckDB connection with `events` and the `person`, `auction`, `bid` views."""
    import duckdb  # here, not at import: every command imports this module, few compute

    con = duckdb.connect()
    con.register("events_arrow", events)
    con.execute("CREATE VIEW events AS SELECT * FROM events_arrow")
    for kind in Kind:
        cols = ", ".join(_view_column(c.name, c.view_name, c.type) for c in view_columns(kind))
        con.execute(
            f"CREATE VIEW {kind.name.lower()} AS SELECT {cols}, event_number, segment "
            f"FROM events WHERE event_type = {int(kind)}"
        )
    return con


def _view_column(name: str, view_name: str, type_: str) -> str:
    # Microsecond TIMESTAMP in DuckDB; the values keep their millisecond precision.
    expr = f"CAST({name} AS TIMESTAMP)" if type_.startswith("TIMESTAMP") else name
    return f"{expr} AS {view_name}"

"""The Nexmark queries q0-q23 and the CEP queries cep0-cep3: what each computes, its state, and
how an engine's SQL for them is found and read.

A query's SQL is written once where the engines agree: `workload/sql/qN.sql` (`SHARED_SQL_DIR`).
An engine keeps a file of its own in its package (`Engine.sql_dir()`, e.g. `engines/spark/sql/`)
only for a query its dialect writes differently. The lookup order (`sql_file`): the engine's own
file, then the shared one. A file holds optional setup statements, then the final statement.
What an engine needs to know about a query beyond its SQL (Spark's output mode and keys) is data
in the engine's package, never read from the SQL's comments.
The final statement is a SELECT that the engine wraps into its own sink, except for queries with
`own_sink` (q10), whose final statement is an INSERT into a sink the file defines. Placeholders
are `string.Template` names (`${side_table_dir}`), filled from `prepare_query_dirs`.
"""

from __future__ import annotations

import string
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING

from nexmark.errors import UsageError
from nexmark.workload.side_table import write_side_table

if TYPE_CHECKING:
    from importlib.resources.abc import Traversable

# The SQL every engine runs as it is, one `qN.sql` per query on which the engines agree.
SHARED_SQL_DIR = resources.files(__package__) / "sql"


@dataclass(frozen=True)
class Query:
    """One Nexmark query.

    Args:
        name: "q0".."q23", or "cep0".."cep3" (the CEP suite, `CEP`).
        title: What it computes, in a few words (the `nexmark queries` table).
        description: What it computes, one or two sentences.
        state: The kind of state it keeps, as in the spec's table ("none", "windowed, bounded").
        columns: The output columns of the final statement, in order (compared by verification).
        deterministic: False when the output depends on processing time (q12, q13), so that
            only totals or row counts can be checked.
        own_sink: The SQL writes to a sink of its own (q10's files) instead of the engine's.
        emits_rows_on_small_data: Whether a short unbounded run on a small dataset (a few
            seconds of event time) is expected to produce rows. False where output waits for the
            watermark to pass a window end or for processing-time windows to fire.
        placeholders: The `${name}` placeholders its SQL needs (see `prepare_query_dirs`).
        stamp_column: A column the final statement carries after `columns` for the latency
            stamps alone: the time of the event each row depends on, which the output leaves
            out (q5's window end, `metrics.latency.RULES`). Every other sink drops it
            (`output_columns`), so what is verified and counted is `columns`.
    """

    name: str
    title: str
    description: str
    state: str
    columns: tuple[str, ...]
    deterministic: bool = True
    own_sink: bool = False
    emits_rows_on_small_data: bool = True
    placeholders: tuple[str, ...] = ()
    stamp_column: str | None = None
    # Event-time seconds over which a state bounded by windows fills and empties again (a
    # tumbling window's size, a hopping window's slide); None: no such cycle.
    window_cycle_s: float | None = None
    # The same in wall-clock seconds, for processing-time windows (None: none).
    processing_cycle_s: float | None = None

    def output_columns(self, names: list[str]) -> list[str] | None:
        """The columns a sink other than the stamps takes of a final statement with the
        columns `names`: `columns`, when the statement carries the stamp column too (None:
        all of them, as they are)."""
        if self.stamp_column is None or self.stamp_column not in names:
            return None
        return [n for n in names if n != self.stamp_column]

    @property
    def number(self) -> int:
        """The number in the name: 5 for q5, 2 for cep2."""
        return int(self.name.lstrip("qcep"))


def _cols(names: str) -> tuple[str, ...]:
    return tuple(names.split())


_BID = _cols("auction bidder price channel url date_time extra")
_BANDS = tuple(
    f"{band}_{what}"
    for what in ("bids", "bidders", "auctions")
    for band in _cols("total rank1 rank2 rank3")
)
_AUCTION = _cols(
    "id item_name description initial_bid reserve date_time expires seller category extra"
)

ALL: tuple[Query, ...] = (
    Query("q0", "pass-through", "Every bid, unchanged.", "none", _BID),
    Query(
        "q1",
        "currency conversion",
        "Every bid with its price in euros: price * 0.908 as an exact DECIMAL(24,3); "
        "without channel and url, as in the reference suite.",
        "none",
        _cols("auction bidder price date_time extra"),
    ),
    Query(
        "q2",
        "selection",
        "Bids whose auction id is a multiple of 123: (auction, price).",
        "none",
        ("auction", "price"),
    ),
    Query(
        "q3",
        "local item suggestion",
        "Auctions of category 10 joined with their seller, for sellers in OR, ID or CA: "
        "(name, city, state, auction id).",
        "regular join, grows",
        _cols("name city state id"),
    ),
    Query(
        "q4",
        "average price per category",
        "The winning (highest) bid of each auction placed between its start and expiry, "
        "then the average winning price per category (integer average).",
        "join + two aggregations, grows",
        ("category", "avg_price"),
    ),
    Query(
        "q5",
        "hot items",
        "Hopping windows of 10 s every 2 s: the auction(s) with the most bids in each window, "
        "ties included: (auction, count), without the window bounds.",
        "windowed, bounded",
        ("auction", "num"),
        emits_rows_on_small_data=False,
        stamp_column="window_end",
        window_cycle_s=2.0,
    ),
    Query(
        "q6",
        "average selling price by seller",
        "Per seller, the average winning price of their last 10 closed auctions (an OVER window "
        "of 10 rows ordered by expiry).",
        "grows",
        ("seller", "avg_price"),
    ),
    Query(
        "q7",
        "highest bid",
        "Tumbling windows of 10 s: the bid(s) with the highest price in each window.",
        "join on window max, grows",
        _cols("auction price bidder date_time extra"),
        emits_rows_on_small_data=False,
    ),
    Query(
        "q8",
        "monitor new users",
        "Tumbling windows of 10 s: persons who registered and also opened an auction as seller "
        "in the same window.",
        "window join, bounded",
        ("id", "name", "window_start"),
        emits_rows_on_small_data=False,
        window_cycle_s=10.0,
    ),
    Query(
        "q9",
        "winning bids",
        "The winning bid of each auction (highest price, earliest on ties, between start and "
        "expiry) with all auction columns and the bid's auction, bidder, price, time and extra.",
        "join + top-1, grows",
        (*_AUCTION, "auction", "bidder", "price", "bid_date_time", "bid_extra"),
    ),
    Query(
        "q10",
        "log to file system",
        "Every bid (without channel and url) with its day (yyyy-MM-dd) and hour-minute "
        "(HH:mm), written to CSV files partitioned by both.",
        "none (file sink)",
        _cols("auction bidder price date_time extra dt hm"),
        own_sink=True,
        placeholders=("output_dir",),
    ),
    Query(
        "q11",
        "user sessions",
        "Session windows with a 10 s gap per bidder: bids per session, session start and end.",
        "windowed, bounded",
        _cols("bidder bid_count window_start window_end"),
        emits_rows_on_small_data=False,
    ),
    Query(
        "q12",
        "processing-time windows",
        "Processing-time tumbling windows of 10 s: bids per bidder.",
        "windowed, bounded",
        _cols("bidder bid_count window_start window_end"),
        deterministic=False,
        emits_rows_on_small_data=False,
        processing_cycle_s=10.0,
    ),
    Query(
        "q13",
        "bounded side input join",
        "Every bid joined with a static side table of 10,000 rows on auction mod 10000: "
        "(auction, bidder, price, date_time, side value).",
        "lookup",
        _cols("auction bidder price date_time side_value"),
        deterministic=False,
        emits_rows_on_small_data=False,
        placeholders=("side_table_dir",),
    ),
    Query(
        "q14",
        "calculation",
        "Bids with 1,000,000 < price*0.908 < 50,000,000, labelled dayTime / nightTime / "
        "otherTime by hour, with the number of 'c' characters in extra.",
        "none",
        _cols("auction bidder price bid_time_type date_time extra c_counts"),
    ),
    Query(
        "q15",
        "bidding statistics per day",
        "Per day: bids, distinct bidders and distinct auctions, in total and in three price bands.",
        "distinct aggregation, grows",
        ("day", *_BANDS),
    ),
    Query(
        "q16",
        "channel statistics per day",
        "q15 per (channel, day), plus the latest HH:mm seen.",
        "distinct aggregation, grows",
        ("channel", "day", "minute", *_BANDS),
    ),
    Query(
        "q17",
        "auction statistics per day",
        "Per (auction, day): bids in total and per price band; min, max, average and sum of price.",
        "aggregation, grows",
        _cols(
            "auction day total_bids rank1_bids rank2_bids rank3_bids"
            " min_price max_price avg_price sum_price"
        ),
    ),
    Query(
        "q18",
        "last bid per bidder and auction",
        "The last bid of each (bidder, auction) pair by event time (deduplication).",
        "grows",
        _BID,
    ),
    Query(
        "q19",
        "top 10 bids per auction",
        "The 10 highest bids of each auction (top-N per key).",
        "grows",
        _BID,
    ),
    Query(
        "q20",
        "expand bids with auctions",
        "Bids joined with their auction, for auctions of category 10: all bid and auction columns.",
        "regular join, grows",
        _cols(
            "auction bidder price channel url bid_date_time bid_extra item_name description"
            " initial_bid reserve auction_date_time expires seller category auction_extra"
        ),
    ),
    Query(
        "q21",
        "channel id",
        "Bids with a channel id: '0'..'3' for Apple, Google, Facebook, Baidu, else the URL's "
        "channel_id parameter; bids with neither are dropped.",
        "none",
        _cols("auction bidder price channel channel_id"),
    ),
    Query(
        "q22",
        "URL directories",
        "Bids with the 3rd, 4th and 5th '/'-separated parts of their URL.",
        "none",
        _cols("auction bidder price channel dir1 dir2 dir3"),
    ),
    Query(
        "q23",
        "bids with bidder and bidder's auctions",
        "Bids joined with the person who bid and with every auction that person sells: the "
        "bid without auction and time, the person without time, the auction without id.",
        "three-way join, grows",
        _cols(
            "bidder price channel url bid_extra person_id name email_address credit_card city"
            " state person_extra item_name description initial_bid reserve auction_date_time"
            " expires seller category auction_extra"
        ),
    ),
)

_CEP_STATE = "pattern (NFA), grows"

# The CEP suite: MATCH_RECOGNIZE over bids, partitioned by (auction, bidder), in event time
# with equal times ordered by price (docs/queries.md, "The CEP queries").
CEP: tuple[Query, ...] = (
    Query(
        "cep0",
        "V-shaped price",
        "Per (auction, bidder): a bid, two or more falling bids, then one above the fall "
        "before the last (the reference's cep q0): start, bottom and end times; the next match "
        "may start at the rising bid.",
        _CEP_STATE,
        _cols("auction bidder start_time bottom_time end_time"),
        emits_rows_on_small_data=False,
    ),
    Query(
        "cep1",
        "cheap runs",
        "Per (auction, bidder): a run of bids whose running average price stays under 10,000, "
        "ended by the next bid: the run's first and last times and its average (truncated); "
        "the next match starts after the ending bid.",
        _CEP_STATE,
        _cols("auction bidder start_time end_time avg_price"),
        emits_rows_on_small_data=False,
    ),
    Query(
        "cep2",
        "cheap runs, overlapping",
        "cep1's pattern and columns, continuing from the row after each match's first row "
        "(overlapping matches).",
        _CEP_STATE,
        _cols("auction bidder start_time end_time avg_price"),
        emits_rows_on_small_data=False,
    ),
    Query(
        "cep3",
        "sudden drop",
        "Per (auction, bidder): a bid, any bids above its price - 50, then one below its "
        "price - 50, all within 5 s: the drop's time and size (first price - dropped price).",
        "pattern (NFA) within 5 s, bounded",
        _cols("auction bidder drop_time drop_size"),
        emits_rows_on_small_data=False,
    ),
)

REGISTERED: tuple[Query, ...] = ALL + CEP  # every query that has a name
SELECTIONS = {"all": ALL, "cep": CEP}  # names of query groups a selection accepts

_BY_NAME = {q.name: q for q in REGISTERED}


def get(name: str) -> Query:
    """The query called `name` ("q5", "cep1"); raise UsageError naming the known ones if there
    is none."""
    query = _BY_NAME.get(name.strip().lower())
    if query is None:
        raise UsageError(
            f"unknown query '{name}'; known: {ALL[0].name}..{ALL[-1].name}, "
            f"{CEP[0].name}..{CEP[-1].name}"
        )
    return query


def select(spec: str) -> list[Query]:
    """Parse a selection: "all" (q0..q23), "cep" (cep0..cep3), or names separated by commas
    ("q0,q5,cep2"), in the given order.

    Repeated names count once. Raises UsageError for an empty selection or an unknown name.
    """
    group = SELECTIONS.get(spec.strip().lower())
    if group is not None:
        return list(group)
    names = [part.strip() for part in spec.split(",")]
    if not any(names):
        raise UsageError(
            f"no query selected in '{spec}'; use 'all', 'cep' or names like 'q0,q5,cep1'"
        )
    chosen: dict[str, Query] = {}
    for name in names:
        if not name:
            raise UsageError(f"empty query name in '{spec}'")
        query = get(name)
        chosen.setdefault(query.name, query)
    return list(chosen.values())


def sql_file(query: Query | str, sql_dir: Traversable | Path) -> Traversable | Path:
    """Where a query's SQL is for the engine whose SQL directory is `sql_dir`
    (`Engine.sql_dir()`): the engine's own `qN.sql` there, where its dialect differs, else the
    shared one in `SHARED_SQL_DIR`.

    Raises:
        UsageError: Neither has the query.
    """
    query = get(query) if isinstance(query, str) else query
    for folder in (sql_dir, SHARED_SQL_DIR):
        path = folder / f"{query.name}.sql"
        if path.is_file():
            return path
    raise UsageError(f"no SQL for {query.name} in {sql_dir} or {SHARED_SQL_DIR}")


def sql_text(query: Query | str, sql_dir: Traversable | Path) -> str:
    """The raw SQL of a query for the engine whose SQL directory is `sql_dir` (`sql_file`:
    its own file, else the shared one), placeholders unfilled."""
    return sql_file(query, sql_dir).read_text(encoding="utf-8")


def sql(query: Query | str, sql_dir: Traversable | Path, **placeholders: str) -> list[str]:
    """The query's statements for the engine whose SQL directory is `sql_dir` (`sql_text`),
    placeholders filled, split on ';' (the final one last).

    Whole-line `--` comments are dropped first, so a comment never becomes a statement; the SQL
    files keep ';' out of string literals.

    Raises:
        ValueError: a placeholder the SQL needs was not given.
    """
    query = get(query) if isinstance(query, str) else query
    missing = [p for p in query.placeholders if p not in placeholders]
    if missing:
        raise ValueError(f"{query.name} needs placeholder(s): {', '.join(missing)}")
    lines = [line for line in sql_text(query, sql_dir).splitlines() if not _is_comment(line)]
    text = string.Template("\n".join(lines)).substitute(placeholders)
    return [stmt.strip() for stmt in text.split(";") if stmt.strip()]


def _is_comment(line: str) -> bool:
    return line.lstrip().startswith("--")


def prepare_query_dirs(query: Query | str, work_dir: Path) -> dict[str, str]:
    """Create what the query needs under `work_dir` and return its SQL placeholders.

    q13 gets its side table (`work_dir/q13-side-table/`), q10 an empty output directory
    (`work_dir/q10-output/`); other queries need nothing. Calling it again is harmless.
    """
    query = get(query) if isinstance(query, str) else query
    placeholders: dict[str, str] = {}
    if "side_table_dir" in query.placeholders:
        side_dir = work_dir / "q13-side-table"
        write_side_table(side_dir)
        placeholders["side_table_dir"] = str(side_dir.resolve())
    if "output_dir" in query.placeholders:
        out_dir = work_dir / "q10-output"
        out_dir.mkdir(parents=True, exist_ok=True)
        placeholders["output_dir"] = str(out_dir.resolve())
    return placeholders

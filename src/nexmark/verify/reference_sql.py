"""Per-query reference definitions: DuckDB SQL over the `person`, `auction`, `bid` views.

Written from the semantics in docs/verification.md, not translated from the engine's SQL; only
the output columns follow the engine's queries so that rows can be compared. Window bounds are
computed on epoch milliseconds (`{wm}` is the final watermark in epoch ms): a window
[start, end) has fired iff wm >= end - {lead}, where `{lead}` is the engine's rule
(`WindowFiring.lead_ms`: 1 on Flink, whose windows fire once the watermark passes their last
millisecond). `{avg(...)}` is AVG over integers as the engine computes it.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from nexmark.engines.semantics import IntegerAverage, SideLookup
from nexmark.verify.diff import ANY, DECIMAL, FLOAT, INTEGER, STRING, TIMESTAMP
from nexmark.verify.events import EventData, Loose, NotCheckable, Reference

if TYPE_CHECKING:  # DuckDB is imported when a reference is computed (`reference.connect`)
    import duckdb

Builder = Callable[["duckdb.DuckDBPyConnection", EventData], Reference]
BUILDERS: dict[str, Builder] = {}

EPOCH = datetime(1970, 1, 1)
ALL_CLOSED_MS = 2**62  # "every window closed": no final watermark limits the result
TYPE_LETTERS = {"B": INTEGER, "S": STRING, "D": DECIMAL, "T": TIMESTAMP, "A": ANY, "F": FLOAT}
_AVG = re.compile(r"\{avg\(([^)]*)\)\}")
EURO = "CAST(price AS DECIMAL(20, 0)) * CAST(0.908 AS DECIMAL(4, 3))"  # exact, 3 places
BIDS = "auction bidder price channel url date_time extra"
BID_SQL = "auction, bidder, price, channel, url, date_time, extra"


def _columns(names: str, letters: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Column names (space-separated) and their types, one letter each: B S D T A F."""
    columns = tuple(names.split())
    if len(columns) != len(letters):
        raise ValueError(f"{len(columns)} columns but {len(letters)} types: {names}")
    return columns, tuple(TYPE_LETTERS[c] for c in letters)


def final_watermark_ms(data: EventData) -> int:
    """The final watermark in epoch milliseconds (naive timestamps are UTC, like the data)."""
    if data.final_watermark is None:
        return ALL_CLOSED_MS
    return (data.final_watermark - EPOCH) // timedelta(milliseconds=1)


def _sql(sql: str, data: EventData) -> str:
    """The statement with the final watermark, the window rule's lead and the average filled in."""
    fractional = data.integer_average is IntegerAverage.FRACTIONAL
    avg = r"CAST(sum(\1) AS DOUBLE) / count(\1)" if fractional else r"sum(\1) // count(\1)"
    lead = str(data.window_firing.lead_ms)
    sql = sql.replace("{wm}", str(final_watermark_ms(data))).replace("{lead}", lead)
    return _AVG.sub(avg, sql)


def _avg_letters(letters: str, data: EventData) -> str:
    """'V' marks an average column: an integer, or a float where averages are fractional."""
    fractional = data.integer_average is IntegerAverage.FRACTIONAL
    return letters.replace("V", "F" if fractional else "B")


def _simple(query: str, names: str, letters: str, sql: str, released: bool = False) -> None:
    """Register a query whose reference is one SQL statement.

    With `released`, the statement's last column is the watermark (epoch ms) that releases the
    row (a window's end - lead, a bid's time): rows released within the watermark slack are
    optional, the rest required (see `_split_released`). A 'V' letter is an average column.
    """

    def build(con: duckdb.DuckDBPyConnection, data: EventData) -> Reference:
        columns, types = _columns(names, _avg_letters(letters, data))
        rows = con.execute(_sql(sql, data)).fetchall()
        if not released:
            return Reference(query, columns, types, rows)
        return _split_released(Reference(query, columns, types, []), rows, data)

    BUILDERS[query] = build


def _split_released(ref: Reference, rows: list[tuple], data: EventData) -> Reference:
    """Rows released by the last `watermark_slack_ms` of the final watermark are optional."""
    certain = final_watermark_ms(data) - data.watermark_slack_ms
    for row in rows:
        if row[-1] <= certain:
            ref.rows.append(row[:-1])
        else:
            ref.optional.append((row[-1], row[:-1]))
    return ref


_simple("q0", BIDS, "BBBSSTS", f"SELECT {BID_SQL} FROM bid")
_simple(
    "q1",
    "auction bidder price date_time extra",
    "BBDTS",
    f"SELECT auction, bidder, {EURO}, date_time, extra FROM bid",
)
_simple("q2", "auction price", "BB", "SELECT auction, price FROM bid WHERE auction % 123 = 0")
_simple(
    "q3",
    "name city state id",
    "SSSB",
    """SELECT p.name, p.city, p.state, a.id FROM auction a JOIN person p ON a.seller = p.id
       WHERE a.category = 10 AND p.state IN ('OR', 'ID', 'CA')""",
)

# The winning price of an auction: its highest bid placed in [start, expiry], both inclusive.
# AVG as the engine computes it (Flink: a BIGINT, the sum divided by the count, truncated).
_simple(
    "q4",
    "category avg_price",
    "BV",
    """SELECT category, {avg(final_price)} FROM (
         SELECT a.id, a.category, max(b.price) AS final_price
         FROM auction a JOIN bid b ON a.id = b.auction
         WHERE b.date_time BETWEEN a.date_time AND a.expires GROUP BY a.id, a.category)
       GROUP BY category""",
)

# Hopping windows (10 s every 2 s): an event at t lies in the 5 windows starting at
# floor(t / 2 s) * 2 s - k * 2 s, k = 0..4. RANK = 1 keeps every auction tied for the top count.
# The output has no window bounds: one (auction, num) row per window and top auction.
_simple(
    "q5",
    "auction num",
    "BB",
    """WITH hop AS (
         SELECT auction, (epoch_ms(date_time) // 2000) * 2000 - k * 2000 AS ws
         FROM bid CROSS JOIN range(5) AS r(k)),
       counts AS (
         SELECT auction, ws, count(*) AS num FROM hop
         WHERE ws + 10000 - {lead} <= {wm} GROUP BY auction, ws)
       SELECT auction, num, ws + 10000 - {lead} FROM counts
       QUALIFY rank() OVER (PARTITION BY ws ORDER BY num DESC) = 1""",
    released=True,
)

# Tumbling 10 s windows: the window maximum (fired windows only) joined back to every bid.
_simple(
    "q7",
    "auction price bidder date_time extra",
    "BBBTS",
    """WITH m AS (
         SELECT (epoch_ms(date_time) // 10000) * 10000 AS ws, max(price) AS max_price
         FROM bid GROUP BY ws HAVING ws + 10000 - {lead} <= {wm})
       SELECT b.auction, b.price, b.bidder, b.date_time, b.extra, m.ws + 10000 - {lead}
       FROM bid b JOIN m ON b.price = m.max_price
        AND epoch_ms(b.date_time) >= m.ws AND epoch_ms(b.date_time) < m.ws + 10000""",
    released=True,
)

_simple(
    "q8",
    "id name window_start",
    "BST",
    """WITH p AS (SELECT id, name, (epoch_ms(date_time) // 10000) * 10000 AS ws FROM person),
       a AS (SELECT DISTINCT seller, (epoch_ms(date_time) // 10000) * 10000 AS ws FROM auction)
       SELECT p.id, p.name, epoch_ms(p.ws), p.ws + 10000 - {lead}
       FROM p JOIN a ON p.id = a.seller AND p.ws = a.ws
       WHERE p.ws + 10000 - {lead} <= {wm}""",
    released=True,
)

_simple(
    "q10",
    "auction bidder price date_time extra dt hm",
    "BBBTSSS",
    """SELECT auction, bidder, price, date_time, extra, strftime(date_time, '%Y-%m-%d'),
              strftime(date_time, '%H:%M') FROM bid""",
)

# Session windows: each bid opens [t, t + 10 s); windows that overlap or touch merge (Flink's
# TimeWindow.intersects), so a new session starts only after a gap of more than 10 s.
_simple(
    "q11",
    "bidder bid_count window_start window_end",
    "BBTT",
    """WITH o AS (
         SELECT bidder, epoch_ms(date_time) AS t, event_number,
           CASE WHEN epoch_ms(date_time) - lag(epoch_ms(date_time)) OVER w <= 10000
                THEN 0 ELSE 1 END AS starts
         FROM bid WINDOW w AS (PARTITION BY bidder ORDER BY date_time, event_number)),
       s AS (
         SELECT bidder, t, sum(starts) OVER (
           PARTITION BY bidder ORDER BY t, event_number ROWS UNBOUNDED PRECEDING) AS session
         FROM o)
       SELECT bidder, count(*), epoch_ms(min(t)), epoch_ms(max(t) + 10000),
              max(t) + 10000 - {lead}
       FROM s GROUP BY bidder, session HAVING max(t) + 10000 - {lead} <= {wm}""",
    released=True,
)

_simple(
    "q14",
    "auction bidder price bid_time_type date_time extra c_counts",
    "BBDSTSB",
    f"""SELECT auction, bidder, {EURO},
          CASE WHEN hour(date_time) BETWEEN 8 AND 18 THEN 'dayTime'
               WHEN hour(date_time) <= 6 OR hour(date_time) >= 20 THEN 'nightTime'
               ELSE 'otherTime' END,
          date_time, extra, length(extra) - length(replace(extra, 'c', ''))
        FROM bid WHERE {EURO} > 1000000 AND {EURO} < 50000000""",
)

# Price bands of q15..q17, in cents: < 10,000; 10,000 to < 1,000,000; >= 1,000,000.
BANDS = ("price < 10000", "price >= 10000 AND price < 1000000", "price >= 1000000")
DAY = "strftime(date_time, '%Y-%m-%d')"


def _bands(what: str) -> str:
    return ", ".join(f"count({what}) FILTER (WHERE {band})" for band in BANDS)


COUNTS = ", ".join(f"count({w}), {_bands(w)}" for w in ("*", "DISTINCT bidder", "DISTINCT auction"))
COUNT_NAMES = " ".join(
    f"{p}_{w}"
    for w in ("bids", "bidders", "auctions")
    for p in ("total", "rank1", "rank2", "rank3")
)

_simple("q15", "day " + COUNT_NAMES, "S" + "B" * 12, f"SELECT {DAY}, {COUNTS} FROM bid GROUP BY 1")
_simple(
    "q16",
    "channel day minute " + COUNT_NAMES,
    "SSS" + "B" * 12,
    f"""SELECT channel, {DAY}, max(strftime(date_time, '%H:%M')), {COUNTS}
        FROM bid GROUP BY channel, {DAY}""",
)
_simple(
    "q17",
    "auction day total_bids rank1_bids rank2_bids rank3_bids min_price max_price avg_price "
    "sum_price",
    "BS" + "B" * 6 + "VB",
    f"""SELECT auction, {DAY}, count(*), {_bands("*")},
          min(price), max(price), {{avg(price)}}, sum(price)
        FROM bid GROUP BY auction, {DAY}""",
)

_simple(
    "q20",
    "auction bidder price channel url bid_date_time bid_extra item_name description "
    "initial_bid reserve auction_date_time expires seller category auction_extra",
    "BBBSSTSSSBBTTBBS",
    """SELECT b.auction, b.bidder, b.price, b.channel, b.url, b.date_time, b.extra,
              a.item_name, a.description, a.initial_bid, a.reserve, a.date_time, a.expires,
              a.seller, a.category, a.extra
       FROM bid b JOIN auction a ON b.auction = a.id WHERE a.category = 10""",
)

CHANNEL_ID = "'[?&]channel_id=([^&]*)'"
_simple(
    "q21",
    "auction bidder price channel channel_id",
    "BBBSS",
    f"""SELECT * FROM (
          SELECT auction, bidder, price, channel,
            CASE lower(channel) WHEN 'apple' THEN '0' WHEN 'google' THEN '1'
              WHEN 'facebook' THEN '2' WHEN 'baidu' THEN '3'
              ELSE CASE WHEN regexp_matches(url, {CHANNEL_ID})
                        THEN regexp_extract(url, {CHANNEL_ID}, 1) END
            END AS channel_id
          FROM bid)
        WHERE channel_id IS NOT NULL AND channel_id <> ''""",
)

# Parts counted from 0 on '/', empty parts kept: https: / '' / host / dir1 / dir2 / dir3 / page.
_simple(
    "q22",
    "auction bidder price channel dir1 dir2 dir3",
    "BBBSSSS",
    """SELECT auction, bidder, price, channel, string_split(url, '/')[4],
              string_split(url, '/')[5], string_split(url, '/')[6] FROM bid""",
)

# Neither the bid's auction and time nor the auction's id are output, so distinct triples can
# give equal rows: the comparison counts them (a multiset).
_simple(
    "q23",
    "bidder price channel url bid_extra person_id name email_address credit_card city state "
    "person_extra item_name description initial_bid reserve auction_date_time expires seller "
    "category auction_extra",
    "BBSSSBSSSSSSSSBBTTBBS",
    """SELECT b.bidder, b.price, b.channel, b.url, b.extra,
              p.id, p.name, p.email_address, p.credit_card, p.city, p.state, p.extra,
              a.item_name, a.description, a.initial_bid, a.reserve, a.date_time, a.expires,
              a.seller, a.category, a.extra
       FROM bid b JOIN person p ON b.bidder = p.id JOIN auction a ON a.seller = b.bidder""",
)


def _q6(con: duckdb.DuckDBPyConnection, data: EventData) -> Reference:
    raise NotCheckable(
        "an OVER window over an updating input (winning prices change as bids arrive) has no "
        "engine-independent final table"
    )


def _q12(con: duckdb.DuckDBPyConnection, data: EventData) -> Reference:
    # Windows are cut by the wall clock, so only the total per bidder is reproducible (the
    # runner waits until every processing-time window has fired before the last checkpoint).
    rows = con.execute("SELECT bidder, count(*) FROM bid GROUP BY bidder").fetchall()

    def per_bidder(actual: list[tuple]) -> list[tuple]:
        totals: Counter = Counter()
        for row in actual:
            totals[row[0]] += row[1]
        return list(totals.items())

    columns, types = _columns("bidder bid_count window_start window_end", "BBAA")
    why = "processing-time windows: compared the bid count per bidder over all windows"
    return Reference("q12", columns, types, rows, derive=per_bidder, partial=why)


def _q13(con: duckdb.DuckDBPyConnection, data: EventData) -> Reference:
    # An event-time temporal join emits a bid once the watermark reaches its time (the last
    # slack of it optional); a lookup on arrival (stream-static join) emits every bid.
    columns, types = _columns("auction bidder price date_time side_value", "BBBTS")
    at_watermark = data.side_lookup is SideLookup.VERSIONED_AT_WATERMARK
    bound = f"WHERE epoch_ms(date_time) <= {final_watermark_ms(data)}" if at_watermark else ""
    bids = con.execute(
        f"""SELECT auction, bidder, price, date_time, auction % 10000, epoch_ms(date_time)
            FROM bid {bound}"""
    ).fetchall()
    derive, why = None, None
    if data.side_table is None:
        rows = [row[:-2] + row[-1:] for row in bids]
        derive, why = _drop_last, "side table unknown: compared the bid columns only"
    else:
        side = data.side_table
        rows = [row[:-2] + (side[row[-2]], row[-1]) for row in bids if row[-2] in side]
    ref = Reference("q13", columns, types, [], derive=derive, partial=why)
    if at_watermark:
        return _split_released(ref, rows, data)
    ref.rows.extend(row[:-1] for row in rows)
    return ref


Q9_NAMES = (
    "id item_name description initial_bid reserve date_time expires seller category extra "
    "auction bidder price bid_date_time bid_extra"
)


def _q9(con: duckdb.DuckDBPyConnection, data: EventData) -> Reference:
    # The winner: highest price, then earliest time, then lowest bidder, as the engine's SQL.
    # Bids tied on all three (and on the auction) can differ only in their extra, and which
    # of them the engine's top-1 keeps depends on arrival order: such auctions are compared on
    # every column but bid_extra. Every other auction is compared in full.
    columns, types = _columns(Q9_NAMES, "BSSBBTTBBSBBBTS")
    tied_first = con.execute(
        """SELECT a.id, a.item_name, a.description, a.initial_bid, a.reserve, a.date_time,
                  a.expires, a.seller, a.category, a.extra,
                  b.auction, b.bidder, b.price, b.date_time, b.extra
           FROM auction a JOIN bid b ON a.id = b.auction
           WHERE b.date_time BETWEEN a.date_time AND a.expires
           QUALIFY rank() OVER (
             PARTITION BY a.id ORDER BY b.price DESC, b.date_time ASC, b.bidder ASC) = 1"""
    ).fetchall()
    candidates: dict[int, set[tuple]] = {}
    for row in tied_first:
        candidates.setdefault(row[0], set()).add(row)
    extra = columns.index("bid_extra")
    project = tuple(i for i in range(len(columns)) if i != extra)
    exact, loose_rows, loose_keys = [], [], set()
    for auction_id, rows in candidates.items():
        if len(rows) == 1:
            exact.extend(rows)
            continue
        projected = {tuple(row[i] for i in project) for row in rows}
        if len(projected) != 1:  # only an auction id seen twice could do this
            raise ValueError(f"q9: auction {auction_id} has tied winners beyond bid_extra")
        loose_keys.add((auction_id,))
        loose_rows.extend(projected)
    if not loose_keys:
        return Reference("q9", columns, types, exact)
    why = (
        f"{len(loose_keys)} auctions whose winning bids tie on price, time and bidder but "
        "differ in extra (any of them may win)"
    )
    loose = Loose((0,), frozenset(loose_keys), project, loose_rows, why)
    return Reference("q9", columns, types, exact, loose=loose)


def _drop_last(rows: list[tuple]) -> list[tuple]:
    return [row[:-1] for row in rows]


def _q18(con: duckdb.DuckDBPyConnection, data: EventData) -> Reference:
    # Flink's row-time deduplication keeps the later-processed row on equal times; within one
    # source reader that is the later event. Ties spread over readers are compared loosely.
    rows = con.execute(
        f"""SELECT {BID_SQL} FROM bid QUALIFY row_number() OVER (
              PARTITION BY bidder, auction ORDER BY date_time DESC, event_number DESC) = 1"""
    ).fetchall()
    spread = con.execute(
        """WITH last AS (
             SELECT auction, bidder, segment FROM bid
             QUALIFY date_time = max(date_time) OVER (PARTITION BY bidder, auction))
           SELECT auction, bidder FROM last GROUP BY auction, bidder
           HAVING count(DISTINCT segment) > 1"""
    ).fetchall()
    what = "(bidder, auction) pairs whose last bids share a millisecond across readers"
    return _with_loose("q18", rows, set(spread), (0, 1), (0, 1, 5), what)


def _q19(con: duckdb.DuckDBPyConnection, data: EventData) -> Reference:
    # ROW_NUMBER puts the earlier-processed row first on a tie of the whole order key.
    order = "ORDER BY price DESC, date_time ASC, bidder ASC, event_number ASC"
    rows = con.execute(
        f"SELECT {BID_SQL} FROM bid QUALIFY row_number() OVER (PARTITION BY auction {order}) <= 10"
    ).fetchall()
    # The cut at 10 is ambiguous only when the 10th and 11th bids tie on the whole order key.
    cut = con.execute(
        f"""WITH ranked AS (
              SELECT auction, price, date_time, bidder,
                row_number() OVER (PARTITION BY auction {order}) AS place FROM bid)
            SELECT a.auction FROM ranked a JOIN ranked b ON a.auction = b.auction
            WHERE a.place = 10 AND b.place = 11 AND a.price = b.price
              AND a.date_time = b.date_time AND a.bidder = b.bidder"""
    ).fetchall()
    what = "auctions whose 10th and 11th bids tie on price, time and bidder"
    return _with_loose("q19", rows, set(cut), (0,), (0, 1, 2, 5), what)


def _with_loose(
    query: str,
    rows: list[tuple],
    keys: set[tuple],
    key: tuple[int, ...],
    project: tuple[int, ...],
    what: str,
) -> Reference:
    """A bid-shaped reference whose groups in `keys` are compared on `project` only."""
    columns, types = _columns(BIDS, "BBBSSTS")
    exact, loose_rows = [], []
    for row in rows:
        if tuple(row[i] for i in key) in keys:
            loose_rows.append(tuple(row[i] for i in project))
        else:
            exact.append(row)
    loose = Loose(key, frozenset(keys), project, loose_rows, f"{len(keys)} {what}")
    return Reference(query, columns, types, exact, loose=loose if keys else None)


BUILDERS.update({"q6": _q6, "q9": _q9, "q12": _q12, "q13": _q13, "q18": _q18, "q19": _q19})


# -- the CEP queries: matched in Python (patterns.py), DuckDB only reads the bids -----------------

CEP_COLUMNS = {
    "cep0": ("auction bidder start_time bottom_time end_time", "BBTTT"),
    "cep1": ("auction bidder start_time end_time avg_price", "BBTTV"),
    "cep2": ("auction bidder start_time end_time avg_price", "BBTTV"),
    "cep3": ("auction bidder drop_time drop_size", "BBTB"),
}


def _partitions(con: duckdb.DuckDBPyConnection) -> list[tuple[tuple, list[tuple[int, int]]]]:
    """The bids per (auction, bidder), each as (epoch ms, price), by time then price."""
    rows = con.execute(
        """SELECT auction, bidder, epoch_ms(date_time), price FROM bid
           ORDER BY auction, bidder, date_time, price"""
    ).fetchall()
    parts: list[tuple[tuple, list[tuple[int, int]]]] = []
    for auction, bidder, time_ms, price in rows:
        if not parts or parts[-1][0] != (auction, bidder):
            parts.append(((auction, bidder), []))
        parts[-1][1].append((time_ms, price))
    return parts


def _cep(query: str) -> Builder:
    def build(con: duckdb.DuckDBPyConnection, data: EventData) -> Reference:
        from nexmark.verify import patterns

        names, letters = CEP_COLUMNS[query]
        columns, types = _columns(names, _avg_letters(letters, data))
        fractional = data.integer_average is IntegerAverage.FRACTIONAL
        pattern = patterns.PATTERNS[query]
        found = patterns.match_all(pattern, _partitions(con), final_watermark_ms(data))
        rows = []
        for key, match in found:
            values = list(match.values)
            if "avg_price" in columns:  # the pattern gives (sum, count): AVG as the engine's
                total, count = values[-2:]
                values[-2:] = [total / count if fractional else total // count]
            for i, kind in enumerate(types[2:]):
                if kind == TIMESTAMP:
                    values[i] = EPOCH + timedelta(milliseconds=values[i])
            rows.append((*key, *values, match.released_ms))
        return _split_released(Reference(query, columns, types, []), rows, data)

    return build


BUILDERS.update({name: _cep(name) for name in CEP_COLUMNS})

"""The generator's exact rules: kinds, ids, times, ranges, formats, determinism."""

from __future__ import annotations

import io
import re

import numpy as np
import pyarrow as pa
import pyarrow.csv as pcsv
import pytest

from nexmark.workload import generator as gen
from nexmark.workload import pools as pl
from nexmark.workload import rng
from nexmark.workload.csvtext import format_csv
from nexmark.workload.schema import COLUMN_NAMES, COLUMNS, Kind

CONFIG = gen.GeneratorConfig()
EVENTS = 20_000


@pytest.fixture(scope="module")
def table() -> pa.Table:
    return gen.generate_events(CONFIG, 0, EVENTS)


def column(table: pa.Table, name: str) -> np.ndarray:
    """Non-null values of a column as numpy (timestamps as int64 ms)."""
    arr = table.column(name).drop_null()
    if pa.types.is_timestamp(arr.type):
        arr = arr.cast(pa.int64())
    return arr.to_numpy()


def of_kind(table: pa.Table, kind: Kind) -> pa.Table:
    mask = pa.array(column(table, "event_type") == int(kind))
    return table.filter(mask)


def test_hash_is_a_pure_function_of_seed_n_and_field():
    n = np.arange(1000, dtype=np.uint64)
    assert np.array_equal(rng.hash64(n, 7, 3), rng.hash64(n, 7, 3))
    assert np.array_equal(rng.hash64(n[500:], 7, 3), rng.hash64(n, 7, 3)[500:])
    assert not np.array_equal(rng.hash64(n, 7, 3), rng.hash64(n, 8, 3))
    assert not np.array_equal(rng.hash64(n, 7, 3), rng.hash64(n, 7, 4))
    first = int(rng.hash64(np.array([5], dtype=np.uint64), 7, 3)[0])
    key = rng.field_key(7, 3)
    assert first == rng.mix64_int(5 * rng.GOLDEN + key)


def test_below_is_in_range_and_covers_it():
    h = rng.hash64(np.arange(100_000, dtype=np.uint64), 1, 1)
    for low in (False, True):
        values = rng.below(h, 37, low=low)
        assert values.min() == 0 and values.max() == 36
    m = np.arange(1, 100_001)
    assert np.all(rng.below(h, m) < m)


def test_kind_is_decided_by_n_mod_50(table):
    kinds = column(table, "event_type")
    o = np.arange(EVENTS) % 50
    assert np.array_equal(kinds, np.where(o < 1, 0, np.where(o < 4, 1, 2)))
    assert np.bincount(kinds).tolist() == [EVENTS // 50, 3 * EVENTS // 50, 46 * EVENTS // 50]


def test_ids_are_counted_from_the_event_number(table):
    persons, auctions = of_kind(table, Kind.PERSON), of_kind(table, Kind.AUCTION)
    n = column(persons, "event_number")
    assert np.array_equal(column(persons, "p_id"), 1000 + n // 50)
    n = column(auctions, "event_number")
    assert np.array_equal(column(auctions, "a_id"), 1000 + 3 * (n // 50) + n % 50 - 1)


@pytest.mark.parametrize("rate", [100_000, 7, 1_000_000])
def test_event_time_formula(rate):
    config = gen.GeneratorConfig(rate=rate)
    start = 123_456_789
    t = gen.generate_events(config, start, start + 500)
    n = column(t, "event_number")
    base = 1704067200000  # 2024-01-01 00:00:00.000 UTC
    assert np.array_equal(column(t, "date_time"), base + (n * 1000) // rate)


def test_expires_is_after_date_time_within_twice_the_horizon(table):
    auctions = of_kind(table, Kind.AUCTION)
    n = column(auctions, "event_number")
    date_time, expires = column(auctions, "date_time"), column(auctions, "a_expires")
    horizon = gen.event_time_ms(n + 1667, CONFIG) - date_time
    assert np.all(expires > date_time)
    assert np.all(expires - date_time <= 2 * horizon)
    assert np.any(expires - date_time > horizon)  # uses the upper half too


def test_bids_name_auctions_up_to_last_plus_10(table):
    bids = of_kind(table, Kind.BID)
    n = column(bids, "event_number")
    last = 3 * (n // 50) + 2
    auction = column(bids, "b_auction") - 1000
    assert np.all(auction >= np.maximum(last - 100, 0))
    assert np.all(auction <= last + 10)
    assert np.any(auction > last)  # the 10 "leads" do occur


def test_bidders_and_sellers_are_recent_persons_or_leads(table):
    for kind, name in ((Kind.BID, "b_bidder"), (Kind.AUCTION, "a_seller")):
        part = of_kind(table, kind)
        people = column(part, "event_number") // 50 + 1
        person = column(part, name) - 1000
        assert np.all(person >= np.maximum(people - 1000, 0))
        assert np.all(person < people + 10)


def test_categories_prices_and_reserves(table):
    auctions, bids = of_kind(table, Kind.AUCTION), of_kind(table, Kind.BID)
    assert set(column(auctions, "a_category")) == {10, 11, 12, 13, 14}
    for prices in (column(auctions, "a_initial_bid"), column(bids, "b_price")):
        assert prices.min() >= 100 and prices.max() <= 100_000_000
    assert np.all(column(auctions, "a_reserve") > column(auctions, "a_initial_bid"))


def test_null_exactly_where_another_kind_owns_the_column(table):
    kinds = column(table, "event_type")
    for c in COLUMNS:
        valid = table.column(c.name).is_valid().to_numpy(zero_copy_only=False)
        expected = np.ones(EVENTS, bool) if c.kind is None else kinds == int(c.kind)
        assert np.array_equal(valid, expected), c.name


def strings(table: pa.Table, name: str) -> list[str]:
    return table.column(name).drop_null().to_pylist()


def test_string_formats(table):
    persons = of_kind(table, Kind.PERSON)
    names = {f"{f} {la}" for f in pl.FIRST_NAMES for la in pl.LAST_NAMES}
    assert set(strings(persons, "p_name")) <= names
    assert all(re.fullmatch(r"[a-z]{3,6}@[a-z]{3,4}\.com", e) for e in strings(persons, "p_email"))
    cards = strings(persons, "p_credit_card")
    assert all(re.fullmatch(r"\d{4} \d{4} \d{4} \d{4}", c) for c in cards)
    assert set(strings(persons, "p_city")) <= set(pl.CITIES)
    assert set(strings(persons, "p_state")) == set(pl.STATES)
    items = strings(table, "a_item_name")
    assert {len(s) for s in items} == set(range(3, 20))
    descriptions = strings(table, "a_description")
    assert min(map(len, descriptions)) == 3 and max(map(len, descriptions)) == 99
    assert all(re.fullmatch(r"[a-z][a-z ]*[a-z]", s) for s in items + descriptions)


def test_channels_and_urls(table):
    bids = of_kind(table, Kind.BID)
    url = re.compile(r"https://www\.nexmark\.com/[a-z]{5}/[a-z]{5}/[a-z]{5}/item\.htm\?query=1")
    by_channel: dict[str, set[str]] = {}
    for channel, u in zip(strings(bids, "b_channel"), strings(bids, "b_url"), strict=True):
        by_channel.setdefault(channel, set()).add(u)
        plain = channel in pl.HOT_CHANNELS
        assert plain or re.fullmatch(r"channel-\d{1,4}", channel)
        assert url.fullmatch(u) if plain else url.match(u)
    assert all(len(urls) == 1 for urls in by_channel.values())  # a fixed URL per channel
    with_id = sum("&channel_id=" in next(iter(u)) for u in by_channel.values())
    assert 0.8 < with_id / (len(by_channel) - 4) < 0.97


def test_no_value_is_empty_or_holds_csv_syntax(table):
    for c in COLUMNS:
        if c.type == "VARCHAR":
            values = strings(table, c.name)
            assert all(values), c.name
            assert not any(ch in v for v in values for ch in ',"\n\r'), c.name
            assert not any(v != v.strip() for v in values), c.name


def test_extra_length_varies_by_20_percent(table):
    bids = of_kind(table, Kind.BID)
    lengths = np.array([len(s) for s in strings(bids, "extra")])
    # Bids: T = 100 - 4 * 8 = 68, delta = round(68 / 5) = 14, length in [54, 82).
    assert lengths.min() == 54 and lengths.max() == 81


def test_any_range_gives_the_same_events(table):
    pieces = [gen.generate_events(CONFIG, a, b) for a, b in ((0, 7), (7, 9_999), (9_999, EVENTS))]
    assert pa.concat_tables(pieces).equals(table)
    single = gen.generate_events(CONFIG, 12_345, 12_346)
    assert single.equals(table.slice(12_345, 1))


def test_another_seed_gives_other_data(table):
    other = gen.generate_events(gen.GeneratorConfig(seed=1), 0, EVENTS)
    assert other.column("event_type").equals(table.column("event_type"))  # rules, not random
    assert not other.column("b_price").equals(table.column("b_price"))
    assert not other.column("extra").equals(table.column("extra"))


def test_schema_matches_schema_py(table):
    assert table.schema == gen.arrow_schema()
    assert table.column_names == [*COLUMN_NAMES, "event_number"]


def test_fast_csv_equals_pyarrow_csv_of_the_table(table):
    expected = io.BytesIO()
    options = pcsv.WriteOptions(include_header=False, quoting_style="none")
    pcsv.write_csv(gen.to_file_columns(table.drop_columns(["event_number"])), expected, options)
    assert format_csv(CONFIG, 0, EVENTS) == expected.getvalue()
    text = format_csv(CONFIG, 0, 5).decode()
    assert text.startswith("0,1000,") and text.endswith("\n") and text.count("\n") == 5
    assert format_csv(CONFIG, 10, 10) == b""


def test_bad_configs_are_usage_errors():
    from nexmark.errors import UsageError

    for bad in ({"rate": 0}, {"seed": -1}, {"proportions": (1, 0, 46)}):
        with pytest.raises(UsageError):
            gen.GeneratorConfig(**bad)
    with pytest.raises(UsageError):
        gen.generate_events(CONFIG, 10, 5)


def test_size_model_counts_numbers_as_8_bytes_and_strings_by_length(table):
    sizes = gen.event_sizes(table)
    bids = column(table, "event_type") == 2
    extra = np.array([len(s) for s in table.column("extra").to_pylist()])
    assert np.array_equal(sizes[bids], 32 + extra[bids])  # auction, bidder, price, date_time
    person = table.slice(0, 1).to_pylist()[0]
    strings = ("p_name", "p_email", "p_credit_card", "p_city", "p_state", "extra")
    assert sizes[0] == 16 + sum(len(person[k]) for k in strings)

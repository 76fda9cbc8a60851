"""Distributions over 1M events, each within a stated tolerance of its expected value.

Expected values include the chance that a "random" pick lands on the hot value anyway (the
random auction is one of 111 values, the random person one of 1010, both including the hot one).
Tolerances are about 10 standard deviations of a binomial share, so a failure means a bug.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from nexmark.workload import generator as gen
from nexmark.workload import pools as pl
from nexmark.workload.schema import Kind

EVENTS = 1_000_000


@pytest.fixture(scope="module")
def events() -> pa.Table:
    return gen.generate_events(gen.GeneratorConfig(seed=42), 0, EVENTS)


def part(table: pa.Table, kind: Kind) -> pa.Table:
    kinds = table.column("event_type").to_numpy()
    return table.filter(pa.array(kinds == int(kind)))


def values(table: pa.Table, name: str) -> np.ndarray:
    return table.column(name).to_numpy(zero_copy_only=False)


def share(mask: np.ndarray) -> float:
    return float(mask.mean())


def test_hot_auction_is_half_the_bids(events):
    bids = part(events, Kind.BID)
    last = 3 * (values(bids, "event_number") // 50) + 2
    hot = 1000 + last // 100 * 100
    on_hot = values(bids, "b_auction") == hot
    expected = 0.5 + 0.5 / 111  # after the first 100 auctions the random range has 111 ids
    assert abs(share(on_hot[last >= 100]) - expected) < 0.006


def test_hot_bidder_is_three_quarters_of_the_bids(events):
    bids = part(events, Kind.BID)
    last = values(bids, "event_number") // 50
    on_hot = values(bids, "b_bidder") == 1000 + last // 100 * 100 + 1
    expected = 0.75 + 0.25 / 1010
    assert abs(share(on_hot[last >= 1000]) - expected) < 0.006


def test_hot_seller_is_three_quarters_of_the_auctions(events):
    auctions = part(events, Kind.AUCTION)
    last = values(auctions, "event_number") // 50
    on_hot = values(auctions, "a_seller") == 1000 + last // 100 * 100
    expected = 0.75 + 0.25 / 1010
    assert abs(share(on_hot[last >= 1000]) - expected) < 0.02


def test_hot_channels_are_half_the_bids_and_uniform(events):
    channels = values(part(events, Kind.BID), "b_channel")
    hot = np.isin(channels, pl.HOT_CHANNELS)
    assert abs(share(hot) - 0.5) < 0.006
    for name in pl.HOT_CHANNELS:
        assert abs(share(channels == name) - 0.125) < 0.004
    assert len(set(channels[~hot])) > 9_900  # nearly all of the 10,000 plain channels


def test_categories_are_uniform(events):
    categories = values(part(events, Kind.AUCTION), "a_category")
    counts = np.bincount(categories - 10, minlength=5)
    assert len(counts) == 5
    assert np.all(np.abs(counts / counts.sum() - 0.2) < 0.015)


def test_prices_are_log_uniform(events):
    prices = values(part(events, Kind.BID), "b_price")
    decades = np.floor(np.log10(prices)).astype(int)  # 2..7: one sixth each
    counts = np.bincount(decades, minlength=9)[2:8]
    assert np.all(np.abs(counts / counts.sum() - 1 / 6) < 0.01)


@pytest.mark.parametrize("kind", list(Kind))
def test_average_sizes_are_200_500_100_within_5_percent(events, kind):
    target = gen.AVG_SIZE[kind]
    sizes = gen.event_sizes(part(events, kind))
    assert abs(sizes.mean() / target - 1) < 0.05
    # The mean is target - 0.5 by construction; far tighter than the 5% asked.
    assert abs(sizes.mean() - (target - 0.5)) < 0.01 * target


def test_kind_shares_are_2_6_92_percent(events):
    counts = np.bincount(values(events, "event_type"))
    assert counts.tolist() == [20_000, 60_000, 920_000]

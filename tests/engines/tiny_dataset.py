"""A tiny hand-made dataset in the layout of the real one, for engine tests.

It follows `nexmark.workload.schema` (column order, empty field = null, times as epoch
milliseconds)
and the decided directory layout (DIR/warmup/part-*.csv, DIR/benchmark/part-*.csv), so the engine
tests do not depend on the generator. Deterministic: same arguments, same bytes.
"""

from __future__ import annotations

import random
from datetime import datetime, timedelta
from pathlib import Path

from nexmark.workload.schema import COLUMNS, Kind

BASE_TIME = datetime(2024, 1, 1)
STATES = ("OR", "ID", "CA", "WA", "AZ")
CHANNELS = ("Apple", "Google", "Facebook", "Baidu", "channel-7")


def _ts(value: datetime) -> int:
    """A naive UTC time as the files store it: epoch milliseconds."""
    return (value - datetime(1970, 1, 1)) // timedelta(milliseconds=1)


def _event(n: int, rng: random.Random, counts: dict[Kind, int], ms_per_event: int) -> dict:
    when = BASE_TIME + timedelta(milliseconds=n * ms_per_event)
    slot = n % 50  # the usual Nexmark mix: 1 person, 3 auctions, 46 bids per 50 events
    kind = Kind.PERSON if slot == 0 else Kind.AUCTION if slot <= 3 else Kind.BID
    k = counts[kind]
    counts[kind] += 1
    row = {"event_type": int(kind), "date_time": _ts(when), "extra": f"x{n}c"}
    if kind == Kind.PERSON:
        row |= {
            "p_id": 1000 + k,
            "p_name": f"p{k}",
            "p_email": f"p{k}@x.com",
            "p_credit_card": f"{k:04d}",
            "p_city": f"city{k % 7}",
            "p_state": STATES[k % 5],
        }
    elif kind == Kind.AUCTION:
        row |= {
            "a_id": 1000 + k,
            "a_item_name": f"item{k}",
            "a_description": f"d{k}",
            "a_initial_bid": 100 + k,
            "a_reserve": 200 + k,
            "a_expires": _ts(when + timedelta(seconds=5 + k % 10)),
            "a_seller": 1000 + rng.randrange(max(1, counts[Kind.PERSON])),
            "a_category": 10 + k % 5,
        }
    else:
        auctions = max(1, counts[Kind.AUCTION])
        channel = CHANNELS[k % 5]
        row |= {
            "b_auction": 1000 + max(0, auctions - 1 - rng.randrange(min(auctions, 8))),
            "b_bidder": 1000 + rng.randrange(max(1, counts[Kind.PERSON])),
            "b_price": rng.choice((50, 5_000, 20_000, 2_000_000, 60_000_000)) + k,
            "b_channel": channel,
            "b_url": f"https://www.nexmark.com/a/b/c/item.htm?query=1&channel_id={k % 3}",
        }
    return row


def _line(row: dict) -> str:
    return ",".join("" if row.get(c.name) is None else str(row[c.name]) for c in COLUMNS)


def write_tiny_dataset(
    root: Path,
    events: int = 4000,
    warmup_fraction: float = 0.75,
    files: int = 2,
    ms_per_event: int = 20,
    seed: int = 7,
) -> Path:
    """Write `events` events split into warm-up and benchmark parts; return `root`.

    Args:
        root: The dataset directory to create.
        events: Total number of events.
        warmup_fraction: Share of events in the warm-up part.
        files: Files per part (one per source reader).
        ms_per_event: Event-time distance between consecutive events.
        seed: Random seed for bid targets and prices.
    """
    rng = random.Random(seed)
    counts = {k: 0 for k in Kind}
    lines = [_line(_event(n, rng, counts, ms_per_event)) for n in range(events)]
    split = int(events * warmup_fraction)
    for part, chunk in (("warmup", lines[:split]), ("benchmark", lines[split:])):
        part_dir = root / part
        part_dir.mkdir(parents=True, exist_ok=True)
        size = -(-len(chunk) // files)
        for i in range(files):
            text = "\n".join(chunk[i * size : (i + 1) * size])
            (part_dir / f"part-{i:05d}.csv").write_text(text + "\n" if text else "")
    return root

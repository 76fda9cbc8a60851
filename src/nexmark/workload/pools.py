"""Per-seed lookup tables the generator draws strings and prices from.

Building a string per event in Python would be far too slow, so every string field is a `take`
(a C++ gather) from a table built once per seed: random texts indexed by (length, variant),
lowercase words, 4-digit groups, names, cities, channels with their URLs, and a price table.
The tables themselves come from the counter-based hash (rng.py) with field ids of their own, so
they too are pure functions of the seed.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from nexmark.workload import rng

TEXT_VARIANTS = 256  # random texts per length: a text of length l is one of these
MAX_TEXT = 600  # longest text in the table; the longest drawn is ~530 (auction extra)
MAX_WORD = 8
PRICE_BITS = 20  # price = table[20 random bits]; 2**20 log-spaced prices from 100 to ~1e8

FIRST_NAMES = ("Peter", "Paul", "Luke", "John", "Saul", "Vicky", "Kate", "Julie", "Sarah")
FIRST_NAMES += ("Deiter", "Walter")
LAST_NAMES = ("Shultz", "Abrams", "Spencer", "White", "Bartels", "Walton", "Smith", "Jones")
LAST_NAMES += ("Noris",)
CITIES = ("Phoenix", "Los Angeles", "San Francisco", "Boise", "Portland", "Bend", "Redmond")
CITIES += ("Seattle", "Kent", "Cheyenne")
STATES = ("AZ", "CA", "ID", "OR", "WA", "WY")
HOT_CHANNELS = ("Google", "Facebook", "Baidu", "Apple")
CHANNELS = 10_000  # "channel-0" .. "channel-9999"

# Field ids of the tables (events use ids >= 100, see generator.Field).
_TEXT_CHARS, _TEXT_SPACES, _TEXT_STARTS, _WORD_CHARS, _WORD_STARTS, _URL_WORDS, _URL_ID = range(7)


@dataclass(frozen=True)
class Pools:
    """The tables of one seed. Strings are Arrow arrays; `*_len` are their lengths (int64)."""

    text: pa.StringArray  # index length * TEXT_VARIANTS + variant
    words: pa.StringArray  # same indexing, lowercase letters only
    digits4: pa.StringArray  # "0000" .. "9999"
    names: pa.StringArray  # first * len(LAST_NAMES) + last
    name_len: np.ndarray
    cities: pa.StringArray
    city_len: np.ndarray
    states: pa.StringArray
    channel_names: pa.StringArray  # 0..3 hot channels, 4 + i: "channel-i"
    channel_urls: pa.StringArray
    prices: np.ndarray  # int64 cents


def _strings(values: list[str]) -> pa.StringArray:
    """An Arrow string array of ASCII strings (built from buffers: pa.array on a list would
    import pandas, which costs seconds in every worker process)."""
    lengths = np.array([len(v) for v in values], dtype=np.int32)
    offsets = np.zeros(len(values) + 1, dtype=np.int32)
    np.cumsum(lengths, out=offsets[1:])
    data = "".join(values).encode("ascii")
    return pa.Array.from_buffers(
        pa.string(), len(values), [None, pa.py_buffer(offsets), pa.py_buffer(data)]
    )


def as_arrow(values: np.ndarray, type_: pa.DataType) -> pa.Array:
    """A numpy array of int64 (or int32 for INT) as an Arrow array without nulls, zero-copy.

    (pa.array(ndarray) works too but imports pandas, which costs seconds per worker process.)
    """
    values = np.ascontiguousarray(values, dtype=np.int32 if type_ == pa.int32() else np.int64)
    return pa.Array.from_buffers(type_, len(values), [None, pa.py_buffer(values)])


def take(table: pa.Array, index: np.ndarray | pa.Array) -> pa.Array:
    """`table[index]` (an Arrow gather), for a numpy or Arrow index."""
    if isinstance(index, np.ndarray):
        index = as_arrow(index, pa.int64())
    return pc.take(table, index)


def string_scalar(text: str) -> pa.StringScalar:
    """An Arrow string scalar (pa.scalar on a str, like pa.array, would import pandas)."""
    return _strings([text])[0]


def _string_array(values: list[str]) -> tuple[pa.StringArray, np.ndarray]:
    return _strings(values), np.array([len(v) for v in values], dtype=np.int64)


def _letters(seed: int, count: int, field: int) -> np.ndarray:
    """`count` random lowercase ASCII letters as uint8."""
    h = rng.hash64(np.arange(count, dtype=np.uint64), seed, field)
    return (ord("a") + rng.below(h, 26)).astype(np.uint8)


def _base_text(seed: int, size: int, spaces: bool) -> np.ndarray:
    chars = _letters(seed, size, _TEXT_CHARS if spaces else _WORD_CHARS)
    if spaces:  # about 1 character in 13 is a space, as in the original generator
        h = rng.hash64(np.arange(size, dtype=np.uint64), seed, _TEXT_SPACES)
        chars[rng.below(h, 13) == 0] = ord(" ")
    return chars


def _text_table(seed: int, max_len: int, spaces: bool) -> pa.StringArray:
    """Texts of every length 0..max_len, TEXT_VARIANTS each, cut from one random base text."""
    base = _base_text(seed, 1 << 20, spaces)
    field = _TEXT_STARTS if spaces else _WORD_STARTS
    windows = np.lib.stride_tricks.sliding_window_view(base, max_len)
    keys = np.arange((max_len + 1) * TEXT_VARIANTS, dtype=np.uint64)
    starts = rng.below(rng.hash64(keys, seed, field), len(windows)).reshape(max_len + 1, -1)
    pieces = [windows[starts[length], :length].ravel() for length in range(max_len + 1)]
    data = np.concatenate(pieces)
    lengths = np.repeat(np.arange(max_len + 1, dtype=np.int64), TEXT_VARIANTS)
    offsets = np.zeros(len(lengths) + 1, dtype=np.int32)
    np.cumsum(lengths, out=offsets[1:])
    # No text starts or ends with a space, so no CSV reader can trim it and none is blank.
    ends = np.concatenate([offsets[:-1], offsets[1:] - 1])[np.concatenate([lengths, lengths]) > 0]
    blank = ends[data[ends] == ord(" ")]
    data[blank] = ord("a") + (blank % 26).astype(np.uint8)
    return pa.Array.from_buffers(
        pa.string(), len(lengths), [None, pa.py_buffer(offsets), pa.py_buffer(data)]
    )


def _reverse32(i: int) -> int:
    return int(f"{i:032b}"[::-1], 2)


def _channels(seed: int) -> tuple[pa.StringArray, pa.StringArray]:
    """Channel names and their fixed URLs: hot channels 0..3, then "channel-i" at 4 + i."""
    names = list(HOT_CHANNELS) + [f"channel-{i}" for i in range(CHANNELS)]
    # Three 5-letter path words per URL; 9 in 10 plain channels also get a channel_id.
    letters = _letters(seed, len(names) * 15, _URL_WORDS).tobytes().decode("ascii")
    has_id = rng.below(rng.hash64(np.arange(len(names), dtype=np.uint64), seed, _URL_ID), 10) > 0
    hot = len(HOT_CHANNELS)
    urls = [
        f"https://www.nexmark.com/{w[:5]}/{w[5:10]}/{w[10:]}/item.htm?query=1"
        + (f"&channel_id={_reverse32(k - hot)}" if k >= hot and has_id[k] else "")
        for k, w in enumerate(letters[i : i + 15] for i in range(0, len(letters), 15))
    ]
    return _strings(names), _strings(urls)


def _price_table() -> np.ndarray:
    # Log-uniform: round(10 ** (6u) * 100) for u = k / 2**20, rounding halves up.
    u = np.arange(1 << PRICE_BITS, dtype=np.float64) / (1 << PRICE_BITS)
    return np.floor(np.power(10.0, 6.0 * u) * 100.0 + 0.5).astype(np.int64)


@functools.lru_cache(maxsize=2)
def pools(seed: int) -> Pools:
    """The tables of `seed`, built once per process (about half a second)."""
    names, name_len = _string_array([f"{f} {la}" for f in FIRST_NAMES for la in LAST_NAMES])
    cities, city_len = _string_array(list(CITIES))
    channel_names, channel_urls = _channels(seed)
    return Pools(
        text=_text_table(seed, MAX_TEXT, spaces=True),
        words=_text_table(seed, MAX_WORD, spaces=False),
        digits4=_strings([f"{i:04d}" for i in range(10_000)]),
        names=names,
        name_len=name_len,
        cities=cities,
        city_len=city_len,
        states=_strings(list(STATES)),
        channel_names=channel_names,
        channel_urls=channel_urls,
        prices=_price_table(),
    )

"""Counter-based random numbers: every value is a pure function of (seed, event number, field).

There is no random stream and no state. A value is `mix64(n * GOLDEN + key(seed, field))`, where
`mix64` is the SplitMix64 finalizer (a bijection on 64-bit integers with full avalanche) and
`key` mixes the seed and a per-field constant. All arithmetic is numpy uint64, which wraps modulo
2**64, so a whole chunk of events is hashed with a handful of vectorized operations and any event
can be regenerated on its own. See docs/generator.md for the construction, field by field.
"""

from __future__ import annotations

import numpy as np

_MASK = (1 << 64) - 1
GOLDEN = 0x9E3779B97F4A7C15  # 2**64 / golden ratio, odd: n -> n * GOLDEN is a bijection
_M1 = 0xBF58476D1CE4E5B9
_M2 = 0x94D049BB133111EB

_U64_GOLDEN = np.uint64(GOLDEN)
_U64_M1 = np.uint64(_M1)
_U64_M2 = np.uint64(_M2)
_U32 = np.uint64(32)
_S27, _S30, _S31 = np.uint64(27), np.uint64(30), np.uint64(31)
_LOW32 = np.uint64(0xFFFFFFFF)


def mix64_int(x: int) -> int:
    """The SplitMix64 finalizer on a Python int (used for keys and in tests)."""
    x &= _MASK
    x = ((x ^ (x >> 30)) * _M1) & _MASK
    x = ((x ^ (x >> 27)) * _M2) & _MASK
    return x ^ (x >> 31)


def field_key(seed: int, field: int) -> int:
    """The 64-bit key of one (seed, field) pair; two rounds so nearby seeds give unrelated keys."""
    return mix64_int(mix64_int(seed & _MASK) ^ ((field + 1) * _M2 & _MASK))


def hash64(n: np.ndarray, seed: int, field: int) -> np.ndarray:
    """The 64 random bits of `field` for every event number in `n` (an int64 or uint64 array)."""
    n = np.asarray(n)
    x = n.view(np.uint64) if n.dtype == np.int64 else n.astype(np.uint64)
    x = x * _U64_GOLDEN  # the only new array; the rest works in place
    x += np.uint64(field_key(seed, field))
    tmp = np.empty_like(x)
    for shift, multiplier in ((_S30, _U64_M1), (_S27, _U64_M2)):
        np.right_shift(x, shift, out=tmp)
        x ^= tmp
        x *= multiplier
    np.right_shift(x, _S31, out=tmp)
    x ^= tmp
    return x


def below(h: np.ndarray, m: np.ndarray | int, low: bool = False) -> np.ndarray:
    """Uniform integers in [0, m) from 32 bits of `h` (high half, or low half if `low`).

    Uses the multiply-shift reduction `(bits * m) >> 32`, exact in uint64 for m < 2**32.
    Returns int64.
    """
    bits = (h & _LOW32) if low else (h >> _U32)
    bits *= np.asarray(m).astype(np.uint64, copy=False)
    bits >>= _U32
    return bits.view(np.int64)  # < 2**32: the same value, without a copy

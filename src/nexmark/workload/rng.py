"""Counter-based random numbers: every value is a pure function of (seed, event number, field).

There is no random stream and no state. A value is `mix64(n * GOLDEN + key(seed, field))`, where
`mix64` is the SplitMix64 finalizer (a bijection on 64-bit integers with full avalanche) and
`key` mixes the seed and a per-field constant. All arithmetic is unsigned 64-bit, wrapping modulo
2**64; a whole chunk of events is hashed in one compiled loop (rngkernel.py) and any event can be
regenerated on its own. See docs/generator.md for the construction, field by field.
"""

from __future__ import annotations

import functools

import numpy as np

_MASK = (1 << 64) - 1
GOLDEN = 0x9E3779B97F4A7C15  # 2**64 / golden ratio, odd: n -> n * GOLDEN is a bijection
_M1 = 0xBF58476D1CE4E5B9
_M2 = 0x94D049BB133111EB


def mix64_int(x: int) -> int:
    """The SplitMix64 finalizer on a Python int (used for keys and in tests)."""
    x &= _MASK
    x = ((x ^ (x >> 30)) * _M1) & _MASK
    x = ((x ^ (x >> 27)) * _M2) & _MASK
    return x ^ (x >> 31)


def field_key(seed: int, field: int) -> int:
    """The 64-bit key of one (seed, field) pair; two rounds so nearby seeds give unrelated keys."""
    return mix64_int(mix64_int(seed & _MASK) ^ ((field + 1) * _M2 & _MASK))


@functools.cache
def _kernel():
    from nexmark.workload import rngkernel  # numba: imported and compiled on first use

    return rngkernel


def hash64(n: np.ndarray, seed: int, field: int) -> np.ndarray:
    """The 64 random bits of `field` for every event number in `n` (an int64 or uint64 array)."""
    n = np.asarray(n)
    if n.dtype not in (np.int64, np.uint64):
        n = n.astype(np.uint64)
    return _kernel().hash64(n, np.uint64(field_key(seed, field)))


def below(h: np.ndarray, m: np.ndarray | int, low: bool = False) -> np.ndarray:
    """Uniform integers in [0, m) from 32 bits of `h` (high half, or low half if `low`).

    Uses the multiply-shift reduction `(bits * m) >> 32`, exact in uint64 for m < 2**32.
    `m` is one bound or one per element of `h`. Returns int64.
    """
    bound = np.asarray(m, dtype=np.int64).reshape(-1)
    if bound.size not in (1, len(h)):
        raise ValueError(f"{bound.size} bounds for {len(h)} values")
    return _kernel().below(h, bound, low)

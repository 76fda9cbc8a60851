"""Compiled loops of rng.py: one pass per array where numpy needs about ten.

rng.py documents the construction and imports this module on first use (numba is imported
and these functions load from numba's on-disk cache only when events are generated).
"""

from __future__ import annotations

import numpy as np
from numba import njit

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_LOW32 = np.uint64(0xFFFFFFFF)
_S27, _S30, _S31, _S32 = np.uint64(27), np.uint64(30), np.uint64(31), np.uint64(32)


@njit(cache=True, nogil=True)
def hash64(n, key):
    """mix64(n * GOLDEN + key) for every n (int64 or uint64), wrapping modulo 2**64."""
    out = np.empty(len(n), np.uint64)
    for i in range(len(n)):
        x = np.uint64(n[i]) * _GOLDEN + key
        x = (x ^ (x >> _S30)) * _M1
        x = (x ^ (x >> _S27)) * _M2
        out[i] = x ^ (x >> _S31)
    return out


@njit(cache=True, nogil=True)
def below(h, m, low):
    """((32 bits of h) * m) >> 32 for every h; m is one bound or one per h."""
    out = np.empty(len(h), np.int64)
    for i in range(len(h)):
        bits = (h[i] & _LOW32) if low else (h[i] >> _S32)
        bound = np.uint64(m[i] if m.size > 1 else m[0])
        out[i] = np.int64((bits * bound) >> _S32)
    return out

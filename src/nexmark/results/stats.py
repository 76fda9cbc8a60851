"""Statistics over the repeats of a benchmark phase (`nexmark run --repeat N`), no SciPy.

- the **median** is the headline: the low median (for an even count, the lower of the two
  middle values), so that the headline figure is one measured repeat whose every other figure
  (time, cores, state) belongs with it;
- a **95% confidence interval of the median** by the percentile bootstrap: 10,000 resamples
  with a fixed seed (0), so the same values always give the same interval;
- **Mann-Whitney U** (two-sided, exact for up to 20 values a side, else the normal
  approximation with a tie correction) for "is NEW different from BASE", and the bootstrap
  interval of the ratio of medians NEW / BASE to say by how much.

Why not Student's t: throughput on a shared machine is skewed (a loaded second can only slow
a repeat down), and the headline is a median, not a mean. With 3 values a side Mann-Whitney
can never reach p < 0.05 (its smallest two-sided p is 0.10); with 4 it needs complete
separation (p = 0.029); 5 a side allow one crossing (p = 0.016).
"""

from __future__ import annotations

import math
import random
import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache

BOOTSTRAP_RESAMPLES = 10_000
BOOTSTRAP_SEED = 0
CONFIDENCE = 0.95
ALPHA = 0.05  # significance level of compare's verdicts
CI_METHOD = f"bootstrap percentile, {BOOTSTRAP_RESAMPLES:,} resamples, seed {BOOTSTRAP_SEED}"
EXACT_MAX = 20  # values a side up to which Mann-Whitney's p is computed exactly


def median(values: Sequence[float]) -> float:
    """The low median (a measured value)."""
    return statistics.median_low(values)


def relative_spread(values: Sequence[float]) -> float | None:
    """MAD / median (median absolute deviation, unscaled); None for fewer than 2 values."""
    if len(values) < 2:
        return None
    mid = statistics.median(values)
    mad = statistics.median(abs(v - mid) for v in values)
    return mad / mid if mid else None


def _percentiles(samples: list[float], confidence: float) -> tuple[float, float]:
    samples.sort()
    tail = (1 - confidence) / 2
    low = samples[int(math.floor(tail * (len(samples) - 1)))]
    high = samples[int(math.ceil((1 - tail) * (len(samples) - 1)))]
    return low, high


def bootstrap_ci(
    values: Sequence[float],
    stat: Callable[[Sequence[float]], float] = statistics.median,
    confidence: float = CONFIDENCE,
    resamples: int = BOOTSTRAP_RESAMPLES,
    seed: int = BOOTSTRAP_SEED,
) -> tuple[float, float] | None:
    """The percentile-bootstrap interval of `stat` (None for fewer than 2 values)."""
    if len(values) < 2:
        return None
    rng = random.Random(seed)
    n = len(values)
    draws = [stat(rng.choices(values, k=n)) for _ in range(resamples)]
    return _percentiles(draws, confidence)


def ratio_ci(
    base: Sequence[float],
    new: Sequence[float],
    confidence: float = CONFIDENCE,
    resamples: int = BOOTSTRAP_RESAMPLES,
    seed: int = BOOTSTRAP_SEED,
) -> tuple[float, float] | None:
    """The percentile-bootstrap interval of median(new) / median(base), both resampled."""
    if len(base) < 2 or len(new) < 2:
        return None
    rng = random.Random(seed)
    draws = []
    for _ in range(resamples):
        b = statistics.median(rng.choices(base, k=len(base)))
        if b:
            draws.append(statistics.median(rng.choices(new, k=len(new))) / b)
    return _percentiles(draws, confidence) if draws else None


@cache
def _u_counts(m: int, n: int) -> tuple[int, ...]:
    """How many of the C(m+n, m) orderings give each U = 0..m*n (no ties)."""
    if m == 0 or n == 0:
        return (1,)
    out = [0] * (m * n + 1)
    # the largest value is from the first sample (adds n to U) or from the second
    for u, c in enumerate(_u_counts(m - 1, n)):
        out[u + n] += c
    for u, c in enumerate(_u_counts(m, n - 1)):
        out[u] += c
    return tuple(out)


def mann_whitney(a: Sequence[float], b: Sequence[float]) -> tuple[float, float]:
    """(U of `a`, two-sided p) of the Mann-Whitney U test: are `a` and `b` from one
    distribution? U counts the pairs in which `a` is the larger (ties count half)."""
    m, n = len(a), len(b)
    if not m or not n:
        raise ValueError("Mann-Whitney needs values on both sides")
    u = sum(1.0 if x > y else 0.5 if x == y else 0.0 for x in a for y in b)
    tied = len(set(a) | set(b)) < m + n
    if m <= EXACT_MAX and n <= EXACT_MAX and not tied:
        counts, total = _u_counts(m, n), math.comb(m + n, m)
        low = min(u, m * n - u)
        p = 2 * sum(counts[: int(low) + 1]) / total
        return u, min(1.0, p)
    ranks = _midranks(list(a) + list(b))
    ties = {}
    for r in ranks:
        ties[r] = ties.get(r, 0) + 1
    tie_term = sum(t**3 - t for t in ties.values()) / ((m + n) * (m + n - 1))
    sigma = math.sqrt(m * n / 12 * ((m + n + 1) - tie_term))
    if sigma == 0:
        return u, 1.0
    z = (abs(u - m * n / 2) - 0.5) / sigma  # continuity correction
    return u, min(1.0, math.erfc(max(z, 0.0) / math.sqrt(2)))


def _midranks(values: list[float]) -> list[float]:
    order = sorted(range(len(values)), key=values.__getitem__)
    ranks = [0.0] * len(values)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        for k in range(i, j + 1):
            ranks[order[k]] = (i + j) / 2 + 1
        i = j + 1
    return ranks


def min_p(m: int, n: int) -> float:
    """The smallest two-sided p Mann-Whitney can give with m and n values (no ties)."""
    return min(1.0, 2 / math.comb(m + n, m)) if m and n else 1.0


@dataclass(frozen=True)
class Difference:
    """NEW against BASE, from their repeats (higher is better for the values given)."""

    ratio: float  # median(new) / median(base)
    ci: tuple[float, float] | None  # its bootstrap interval
    p: float | None  # Mann-Whitney's two-sided p; None: too few values to test
    verdict: str  # "faster", "slower", "no significant difference", "too few values"
    # Significant (p < alpha), but the interval reaches into +-margin: no verdict.
    within_margin: bool = False


def difference(
    base: Sequence[float], new: Sequence[float], alpha: float = ALPHA, margin: float = 0.0
) -> Difference:
    """Whether NEW differs from BASE at level `alpha` (Mann-Whitney) by more than `margin`
    (a share: the ratio's interval must lie wholly beyond 1 +- margin), and by how much.

    The margin is the noise that the values cannot show: repeats restored from one warm-up,
    in one engine, vary less than runs do (measured: q5 within a run 0.1-3% MAD / median,
    between runs' medians ~8%), so a significant difference smaller than that is no verdict."""
    ratio = statistics.median(new) / statistics.median(base) if statistics.median(base) else 0.0
    ci = ratio_ci(base, new)
    if len(base) < 2 or len(new) < 2:
        return Difference(ratio, ci, None, "too few values")
    _, p = mann_whitney(new, base)
    if p >= alpha:
        return Difference(ratio, ci, p, "no significant difference")
    low, high = ci if ci is not None else (ratio, ratio)
    if ratio > 1 and low > 1 + margin:
        return Difference(ratio, ci, p, "faster")
    if ratio < 1 and high < 1 - margin:
        return Difference(ratio, ci, p, "slower")
    return Difference(ratio, ci, p, "no significant difference", within_margin=True)

"""Statistics: trimmed series, Welch's t-test (incomplete beta), bootstrap
confidence intervals."""

import math
import random
import statistics

from ._common import TRIM_TOLERANCE


def mean(values):
    return sum(values) / len(values)


def stdev(values):
    return statistics.stdev(values) if len(values) > 1 else 0.0


def cv(values):
    """Coefficient of variation, in percent."""
    m = mean(values)
    return 100.0 * stdev(values) / m if m else 0.0


def percentile(values, p):
    """Nearest-rank percentile (the value below which p% of the values lie)."""
    ordered = sorted(values)
    if not ordered:
        return None
    rank = max(1, math.ceil(p / 100.0 * len(ordered)))
    return ordered[rank - 1]


def trim(values, tolerance=TRIM_TOLERANCE):
    """The outlier trimming of the REL_16-vs-REL_15 measurements on pgsql-hackers:
    sort; while the first or the last point deviates from the mean by more than
    `tolerance`, drop the one that deviates more and recompute.  At least two
    points stay.  Returns (kept, dropped)."""
    kept = sorted(values)
    dropped = []
    while len(kept) > 2:
        m = mean(kept)
        low, high = abs(kept[0] - m) / m, abs(kept[-1] - m) / m
        if max(low, high) <= tolerance:
            break
        dropped.append(kept.pop() if high >= low else kept.pop(0))
    return kept, dropped


def _betacf(a, b, x):
    """Continued fraction of the incomplete beta function (modified Lentz)."""
    tiny = 1e-300
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c, d = 1.0, 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 300):
        m2 = 2 * m
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        h *= d * c
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        delta = d * c
        h *= delta
        if abs(delta - 1.0) < 1e-15:
            break
    return h


def betainc(a, b, x):
    """Regularized incomplete beta function I_x(a, b)."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    front = math.exp(math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b)
                     + a * math.log(x) + b * math.log(1.0 - x))
    if x < (a + 1.0) / (a + b + 2.0):
        return front * _betacf(a, b, x) / a
    return 1.0 - front * _betacf(b, a, 1.0 - x) / b


def t_two_sided_p(t, df):
    """P(|T| >= |t|) for Student's t with df degrees of freedom."""
    return betainc(df / 2.0, 0.5, df / (df + t * t))


def welch(a, b):
    """Welch's unequal-variance t-test: (t, df, two-sided p)."""
    if len(a) < 2 or len(b) < 2:
        return None, None, None
    va, vb = statistics.variance(a) / len(a), statistics.variance(b) / len(b)
    diff = mean(b) - mean(a)
    if va + vb == 0:
        return (0.0, None, 1.0) if diff == 0 else (math.inf, None, 0.0)
    t = diff / math.sqrt(va + vb)
    df = (va + vb) ** 2 / (va * va / (len(a) - 1) + vb * vb / (len(b) - 1))
    return t, df, t_two_sided_p(t, df)


def bootstrap_median_ci(values, level=0.95, reps=10000, seed=1):
    """Percentile bootstrap confidence interval of the median."""
    rng = random.Random(seed)
    n = len(values)
    medians = sorted(statistics.median(rng.choices(values, k=n)) for _ in range(reps))
    lo = medians[int((1 - level) / 2 * reps)]
    hi = medians[min(reps - 1, int((1 + level) / 2 * reps))]
    return lo, hi


def balanced_order(n, round_index):
    """The order of n configurations in round round_index (0-based): a
    balanced Latin square (Williams, 1949), so that over n rounds (2n for odd
    n) each configuration runs at each place of a round equally often, and
    after each other one equally often.  Round 0 starts with the first; for
    two configurations it is A B, B A.  A B C / C B A instead left the first
    always at the ends of a round and the second always in the middle."""
    first = [0] + [(j + 1) // 2 if j % 2 else n - j // 2 for j in range(1, n)]
    rows = n if n % 2 == 0 else 2 * n
    r = round_index % rows
    row = [(a + r) % n for a in first]
    return row if r < n else row[::-1]

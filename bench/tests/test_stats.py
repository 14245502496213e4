#!/usr/bin/python3
"""Tests of bench/numabench: the statistics: trimming, Welch's t-test, bootstrap
intervals. Prints TAP (prove --exec /usr/bin/python3)."""

import sys
import unittest

import support  # noqa: E402  (puts bench/ on sys.path)
from support import t_p_by_integration
from numabench import _stats as stats


class Statistics(unittest.TestCase):
    def test_balanced_order(self):
        """Each configuration at each place of a round, and after each other
        one, equally often over a full cycle of rounds; two go A B, B A."""
        self.assertEqual([stats.balanced_order(2, i) for i in range(4)], [[0, 1], [1, 0], [0, 1], [1, 0]])
        for n in range(2, 8):
            rows = [stats.balanced_order(n, i) for i in range(n if n % 2 == 0 else 2 * n)]
            self.assertEqual(rows[0][0], 0)
            for row in rows:
                self.assertEqual(sorted(row), list(range(n)), (n, row))
            for place in range(n):
                counts = [sum(row[place] == c for row in rows) for c in range(n)]
                self.assertEqual(len(set(counts)), 1, (n, place, counts))
            follows = {}
            for row in rows:
                for a, b in zip(row, row[1:]):
                    follows[(a, b)] = follows.get((a, b), 0) + 1
            self.assertEqual(len(follows), n * (n - 1), n)
            self.assertEqual(len(set(follows.values())), 1, (n, follows))
            # the cycle repeats: round r and round r + len(rows) run alike
            self.assertEqual(stats.balanced_order(n, len(rows) + 1), rows[1])
        # the old A B C / C B A kept the second in the middle of every round
        self.assertNotEqual({stats.balanced_order(3, i)[1] for i in range(6)}, {1})

    def test_trim_keeps_a_tight_series(self):
        kept, dropped = stats.trim([100, 100.5, 99.5, 100.2])
        self.assertEqual(dropped, [])
        self.assertEqual(len(kept), 4)

    def test_trim_drops_one_outlier(self):
        kept, dropped = stats.trim([100, 101, 99, 100, 120])
        self.assertEqual(dropped, [120])
        self.assertEqual(kept, [99, 100, 100, 101])

    def test_trim_drops_the_farther_end_first(self):
        # mean 100: both ends 50% off, the high end goes first; then 50 is 43% off
        kept, dropped = stats.trim([50, 100, 100, 100, 150])
        self.assertEqual(dropped, [150, 50])
        self.assertEqual(kept, [100, 100, 100])

    def test_trim_on_the_threads_shape_of_data(self):
        """The shape the REL_16-vs-REL_15 thread trimmed: pinned, stable
        runs within a few tenths of a percent, and now and then a run where a
        core dropped to a lower frequency (C1/C1E), a few percent slower.
        Those go, one end at a time, and what is left is within 1% of its
        mean; the tight runs all stay."""
        steady = [101210, 101380, 101045, 101500, 101290, 101160, 101420, 101330, 101090, 101260,
                  101370, 101200, 101450, 101310, 101120, 101280]
        slow = [97650, 96020, 98880]
        kept, dropped = stats.trim(steady + slow)
        self.assertEqual(sorted(dropped), sorted(slow))
        self.assertEqual(sorted(kept), sorted(steady))
        m = stats.mean(kept)
        self.assertTrue(all(abs(v - m) / m <= 0.01 for v in kept))
        self.assertLess(stats.cv(kept), 0.3)
        # the slowest goes first: it deviates most from the mean
        self.assertEqual(dropped[0], 96020)

    def test_trim_keeps_two_points(self):
        kept, dropped = stats.trim([1, 100])
        self.assertEqual((kept, dropped), ([1, 100], []))

    def test_welch_wikipedia_example(self):
        # Welch's t-test, Wikipedia, example 1: t = -2.46, df = 24.9, p = 0.021
        a = [27.5, 21.0, 19.0, 23.6, 17.0, 17.9, 16.9, 20.1, 21.9, 22.6, 23.1, 19.6, 19.0, 21.7, 21.4]
        b = [27.1, 22.0, 20.8, 23.4, 23.4, 23.5, 25.8, 22.0, 24.8, 20.2, 21.9, 22.1, 22.9, 20.5, 24.4]
        t, df, p = stats.welch(b, a)
        self.assertAlmostEqual(t, -2.46, places=2)
        self.assertLess(abs(df - 24.9), 0.1)
        self.assertAlmostEqual(p, 0.021, places=3)

    def test_t_distribution_against_integration(self):
        for t, df in ((2.228, 10), (1.0, 3.5), (0.3, 40), (4.0, 7.25), (2.0, 1000)):
            self.assertAlmostEqual(stats.t_two_sided_p(t, df), t_p_by_integration(t, df), places=7)
        self.assertAlmostEqual(stats.t_two_sided_p(2.228, 10), 0.0500, places=4)

    def test_welch_identical_samples(self):
        self.assertEqual(stats.welch([5, 5, 5], [5, 5, 5])[2], 1.0)

    def test_cv_and_percentiles(self):
        self.assertAlmostEqual(stats.cv([10, 12, 14]), 100 * 2 / 12)
        values = list(range(1, 101))
        self.assertEqual(stats.percentile(values, 95), 95)
        self.assertEqual(stats.percentile(values, 99), 99)
        self.assertEqual(stats.percentile([5, 1, 3], 50), 3)
        self.assertEqual(stats.percentile([7], 99), 7)

    def test_bootstrap_interval(self):
        ratios = [0.98, 1.01, 1.0, 0.99, 1.02, 1.0, 1.03, 0.97, 1.0, 1.01]
        lo, hi = stats.bootstrap_median_ci(ratios)
        self.assertLessEqual(lo, 1.0)
        self.assertGreaterEqual(hi, 1.0)
        self.assertEqual((lo, hi), stats.bootstrap_median_ci(ratios), "seeded: the same every time")
        lo, hi = stats.bootstrap_median_ci([1.10, 1.12, 1.09, 1.11, 1.13, 1.10, 1.12, 1.11])
        self.assertGreater(lo, 1.0, "a clear 10% gain lies above 1.0")


if __name__ == "__main__":
    support.main(sys.modules[__name__])

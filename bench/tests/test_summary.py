#!/usr/bin/python3
"""Tests of bench/numabench: the paired ratios, against the first
configuration and against all the servers with its settings.  Prints TAP
(prove --exec /usr/bin/python3)."""

import sys
import unittest

import support  # noqa: E402  (puts bench/ on sys.path)
from numabench import _summary as summary

KERNEL = {"shared_preload_libraries": "''"}
LOADED = {"shared_preload_libraries": "'numasched'"}


def doc(series, settings):
    """series: configuration -> its p99 in each round."""
    return {"workload": "bursty", "clients": [8],
            "configurations": [{"name": n, "settings": settings[n]} for n in series],
            "results": [{"configuration": n, "clients": 8,
                         "runs": [{"p99_ms": v, "p50_ms": v / 2, "tps": 40.0, "cpu_ms_per_txn": 20.0}
                                  for v in values]}
                        for n, values in series.items()]}


def pair(pairs, a, b, metric="p99_ms"):
    return next(p for p in pairs if p["a"] == a and p["b"] == b and p["metric"] == metric)


class Paired(unittest.TestCase):
    def test_against_all_servers_of_the_first_kind(self):
        """A configuration is read against the first server and, where the
        first was run twice, against both: each round's geometric mean."""
        d = doc({"baseline": [100.0, 200.0, 100.0], "numasched": [100.0, 100.0, 200.0],
                 "control": [25.0, 50.0, 400.0]},
                {"baseline": KERNEL, "numasched": LOADED, "control": KERNEL})
        pairs = summary.paired_all(d)
        self.assertEqual(pair(pairs, "baseline", "numasched")["ratios"], [1.0, 0.5, 2.0])
        self.assertEqual(pair(pairs, "baseline", "control")["ratios"], [0.25, 0.25, 4.0])
        both = pair(pairs, "baseline+control", "numasched")
        for got, want in zip(both["ratios"], [2.0, 1.0, 1.0]):
            self.assertAlmostEqual(got, want)
        self.assertAlmostEqual(both["median_ratio"], 1.0)
        # the control is no configuration to read against its own pool
        self.assertFalse([p for p in pairs if p["a"] == "baseline+control" and p["b"] == "control"])
        self.assertEqual(len(pairs), 4 * 3)

    def test_one_server_of_the_first_kind(self):
        """With the first run once there is no pooled reading, and a ratio
        is the plain quotient to the last bit."""
        d = doc({"baseline": [3.0, 7.0], "strict": [1.0, 1.0]}, {"baseline": KERNEL, "strict": LOADED})
        pairs = summary.paired_all(d)
        self.assertEqual({p["a"] for p in pairs}, {"baseline"})
        self.assertEqual(pair(pairs, "baseline", "strict")["ratios"], [1.0 / 3.0, 1.0 / 7.0])

    def test_same_base_other_settings_is_no_replicate(self):
        """control=baseline,work_mem=... is another configuration, not a
        second reference."""
        d = doc({"baseline": [1.0, 2.0], "tuned": [1.0, 2.0]},
                {"baseline": KERNEL, "tuned": dict(KERNEL, work_mem="'64MB'")})
        self.assertEqual(summary.replicates_of_first(d), ["baseline"])


if __name__ == "__main__":
    support.main(sys.modules[__name__])

#!/usr/bin/python3
"""Tests of bench/numabench: the demo's answers, from the paired ratios of a
result: a loss only where the interval lies below 1, isolation only where
the OLTP tail's interval lies below 1, and said to cost the reporting role
only where its throughput's interval lies below 1, locality never claimed on one memory node. Prints TAP (prove
--exec /usr/bin/python3)."""

import os
import sys
import tempfile
import unittest

import support  # noqa: E402  (puts bench/ on sys.path)
from numabench import _demo as demo


def doc(pairs, configurations=(), results=()):
    return {"paired": [{"a": "baseline", "b": b, "metric": m, "median_ratio": r, "ci95": [lo, hi], "ratios": [r] * 6}
                       for b, m, r, lo, hi in pairs],
            "configurations": list(configurations), "results": list(results)}


class Answers(unittest.TestCase):
    def test_no_loss_when_the_interval_holds_one(self):
        text = demo.cost_answer(doc([("numasched", "tps", 0.998, 0.990, 1.004)]))
        self.assertTrue(text.startswith("no loss resolved"), text)
        self.assertIn("0.998 [0.990, 1.004]", text)

    def test_a_loss_when_the_interval_lies_below_one(self):
        text = demo.cost_answer(doc([("numasched", "tps", 0.97, 0.96, 0.98)]))
        self.assertTrue(text.startswith("a loss of 3.0% was measured"), text)

    def test_a_loss_only_beyond_what_two_servers_without_it_differ_by(self):
        within = demo.cost_answer(doc([("numasched", "tps", 0.958, 0.935, 0.976),
                                       ("control", "tps", 1.041, 1.007, 1.054)]))
        self.assertTrue(within.startswith("no loss beyond what two identical servers differ by here"), within)
        self.assertIn("two servers without it: 1.041 [1.007, 1.054]", within)
        beyond = demo.cost_answer(doc([("numasched", "tps", 0.90, 0.88, 0.92),
                                       ("control", "tps", 0.99, 0.97, 1.01)]))
        self.assertTrue(beyond.startswith("a loss of 10.0% was measured"), beyond)

    def test_isolation_needs_the_tail_below_one_and_the_reporting_role_kept(self):
        conf = [{"name": "bg", "background_way": "its autogroup at nice 19"}]
        oltp = [("bg", "tps", 1.0, 0.999, 1.001), ("bg", "p50_ms", 0.9, 0.8, 1.0)]
        yes = demo.isolation_answer(doc(oltp + [("bg", "p99_ms", 0.45, 0.38, 0.60),
                                                ("bg", "analytic_tps", 1.15, 1.10, 1.20)], conf), "bg")
        self.assertTrue(yes.startswith("yes, by its autogroup at nice 19: OLTP p99 0.450"), yes)
        self.assertIn("p50 0.900 [0.800, 1.000]", yes)
        self.assertIn("the reporting role's tps 1.150 [1.100, 1.200]", yes)
        starved = demo.isolation_answer(doc(oltp + [("bg", "p99_ms", 0.45, 0.38, 0.60),
                                                    ("bg", "analytic_tps", 0.50, 0.40, 0.60)], conf), "bg")
        self.assertTrue(starved.startswith("yes, at the reporting role's expense"), starved)
        kept = demo.isolation_answer(doc(oltp + [("bg", "p99_ms", 0.45, 0.44, 0.47),
                                                 ("bg", "analytic_tps", 0.995, 0.960, 1.040)], conf), "bg")
        self.assertTrue(kept.startswith("yes, by its autogroup"), kept)
        wide = demo.isolation_answer(doc(oltp + [("bg", "p99_ms", 0.80, 0.50, 1.10),
                                                 ("bg", "analytic_tps", 1.0, 0.9, 1.1)], conf), "bg")
        self.assertTrue(wide.startswith("not resolved"), wide)
        unresolved = demo.isolation_answer(doc(oltp + [("bg", "p99_ms", 1.02, 0.80, 1.30),
                                                       ("bg", "analytic_tps", 1.0, 0.9, 1.1)], conf), "bg")
        self.assertTrue(unresolved.startswith("not here"), unresolved)

    def test_locality_compares_the_private_pages_read_from_numa_maps(self):
        results = [{"configuration": "baseline", "summary": {"private_on_own_node_percent": 52.0}},
                   {"configuration": "numasched", "summary": {"private_on_own_node_percent": 97.5}}]
        text = demo.locality_answer(doc([("numasched", "p99_ms", 0.9, 0.8, 1.05)], results=results), "numasched")
        self.assertTrue(text.startswith("yes (numasched): private pages on their process's node 97.5% against 52.0%"),
                        text)

    def test_one_memory_node_is_counted_from_sysfs(self):
        with tempfile.TemporaryDirectory() as root:
            os.makedirs(os.path.join(root, "devices/system/node/node0"))
            os.makedirs(os.path.join(root, "devices/system/node/power"))
            self.assertEqual(demo.memory_nodes(root), 1)
            os.makedirs(os.path.join(root, "devices/system/node/node1"))
            self.assertEqual(demo.memory_nodes(root), 2)


if __name__ == "__main__":
    support.main(sys.modules[__name__])

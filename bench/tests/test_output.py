#!/usr/bin/python3
"""Tests of bench/numabench: the text table. Prints TAP (prove --exec
/usr/bin/python3)."""

import sys
import unittest

import support  # noqa: E402  (puts bench/ on sys.path)
from numabench import _output as output
from numabench import _summary as summary


class Table(unittest.TestCase):
    def doc(self, tps):
        runs = [{"tps": t, "latency_avg_ms": 1.0, "p95_ms": 2.0, "p99_ms": 3.0, "run": i + 1}
                for i, t in enumerate(tps)]
        return {"workload": "oltp-ro", "scale": 1, "runs": len(tps), "duration_s": 1,
                "system": {"frequency": "not pinned"}, "paired": [],
                "results": [{"configuration": "a", "clients": 2, "runs": runs,
                             "summary": summary.summarise(runs, False)}]}

    def test_unstable_series_warns(self):
        text = output.table(self.doc([100.0, 130.0, 90.0]))
        self.assertIn("WARNING: a with 2 clients is unstable: tps CV 19.", text)
        self.assertNotIn("WARNING", output.table(self.doc([100.0, 101.0, 99.5])))


if __name__ == "__main__":
    support.main(sys.modules[__name__])

#!/usr/bin/python3
"""Tests of bench/numabench: parsing pgbench's summary and log. Prints TAP (prove
--exec /usr/bin/python3)."""

import sys
import unittest

import support  # noqa: E402  (puts bench/ on sys.path)
from support import LOG_LINES, SUMMARY_FAILURES, SUMMARY_OK
from numabench import _pgbench as pgbench


class Parsing(unittest.TestCase):
    def test_summary(self):
        s = pgbench.parse_summary(SUMMARY_OK)
        self.assertEqual(s["tps"], 12321.658213)
        self.assertEqual(s["latency_avg_ms"], 0.162)
        self.assertEqual(s["transactions"], 24356)
        self.assertEqual(s["failed"], 0)
        self.assertEqual(s["clients"], 2)
        self.assertEqual(s["scale"], 1)

    def test_summary_with_failed_transactions(self):
        s = pgbench.parse_summary(SUMMARY_FAILURES)
        self.assertEqual(s["failed"], 1931)
        self.assertEqual(s["latency_avg_ms"], 2.701)
        self.assertEqual(s["tps"], 510.475038)

    def test_summary_without_tps_is_an_error(self):
        with self.assertRaises(ValueError):
            pgbench.parse_summary("pgbench: error: connection failed")

    def test_log(self):
        latencies, failures = pgbench.parse_log(LOG_LINES + ["", "garbage"])
        self.assertEqual(latencies, [1.14, 0.088, 5.987])
        self.assertEqual(failures, 2)


if __name__ == "__main__":
    support.main(sys.modules[__name__])

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
        rows = pgbench.parse_log(LOG_LINES + ["", "garbage"])
        latencies, failures = pgbench.measured(rows)
        self.assertEqual(latencies, [1.14, 0.088, 5.987])
        self.assertEqual(failures, 2)
        # a failure's start is unknown; a success's is its end less its latency
        self.assertEqual([t.start is None for t in rows], [False, False, True, True, False])
        self.assertAlmostEqual(rows[-1].end - rows[-1].start, 0.005987, places=6)

    def test_log_until(self):
        # only what was scheduled before "until" (a failure: what ended
        # before it); the 5.987 ms one started at 1796045198.809267
        rows = pgbench.parse_log(LOG_LINES)
        latencies, failures = pgbench.measured(rows, 1796045198.81)
        self.assertEqual(latencies, [1.14, 0.088, 5.987])
        self.assertEqual(failures, 2)
        latencies, failures = pgbench.measured(rows, 1796045198.805)
        self.assertEqual(latencies, [1.14, 0.088])
        self.assertEqual(failures, 1)

    def test_running_at(self):
        # the 5.987 ms one ran from …198.809267 to …198.815254
        rows = pgbench.parse_log(LOG_LINES)
        self.assertEqual(pgbench.running_at(rows, 1796045198.81, 1796045198.812), 1)
        self.assertEqual(pgbench.running_at(rows, 1796045198.81, 1796045198.816), 0)
        self.assertEqual(pgbench.running_at(rows, 1796045198.805, 1796045198.812), 0)

    def test_measured_window(self):
        # from the first scheduled start (…193.848413), "duration" seconds,
        # counting what succeeded within it
        rows = pgbench.parse_log(LOG_LINES)
        start, until, completed = pgbench.measured_window(rows, 5.0)
        self.assertAlmostEqual(start, 1796045193.848413, places=5)
        self.assertAlmostEqual(until, 1796045198.848413, places=5)
        self.assertEqual(completed, 3)
        start, until, completed = pgbench.measured_window(rows, 4.96)
        self.assertEqual(completed, 2)      # the third ended at …198.815254
        # ending before a sample taken inside the planned window
        start, until, completed = pgbench.measured_window(rows, 5.0, not_after=1796045198.0)
        self.assertEqual(until, 1796045198.0)
        self.assertEqual(completed, 2)
        self.assertIsNone(pgbench.measured_window(pgbench.parse_log(LOG_LINES[2:4]), 5.0))


if __name__ == "__main__":
    support.main(sys.modules[__name__])

#!/usr/bin/python3
"""Tests of bench/numabench timeline: the kept per-transaction logs read
back as windows of the runs. Prints TAP (prove --exec /usr/bin/python3)."""

import contextlib
import io
import json
import os
import shutil
import sys
import tempfile
import unittest

import support  # noqa: E402  (puts bench/ on sys.path)
from numabench import _cli as cli
from numabench import _timeline as timeline


def log_line(client, tx, latency_ms, scheduled_s):
    """pgbench's per-transaction log line of one scheduled at "scheduled_s" (epoch) that took "latency_ms"."""
    end = scheduled_s + latency_ms / 1000.0
    return "%d %d %d 0 %d %d 0\n" % (client, tx, int(latency_ms * 1000), int(end), round((end - int(end)) * 1e6))


class Timeline(unittest.TestCase):
    def setUp(self):
        self.out = tempfile.mkdtemp(prefix="numabench-timeline-")
        self.logs = os.path.join(self.out, "logs")
        os.makedirs(self.logs)

    def tearDown(self):
        shutil.rmtree(self.out, ignore_errors=True)

    def write(self, name, lines):
        with open(os.path.join(self.logs, name), "w") as f:
            f.writelines(lines)

    def test_windows_from_each_runs_first_transaction(self):
        # two runs of b at different epochs: each is timed from its own first
        # transaction; the slow one at 1.2 s falls in 1.0-1.5 in both
        for run, epoch in ((0, 1000000), (1, 2000000)):
            self.write("b-8-%d.log" % run, [log_line(0, 0, 10, epoch), log_line(1, 1, 300, epoch + 1.2),
                                            log_line(0, 2, 20, epoch + 1.3), log_line(1, 3, 40, epoch + 9)])
        self.write("baseline-8-0.log", [log_line(0, 0, 10, 5000), log_line(0, 1, 30, 5001.2)])
        # the warm-up is no run
        self.write("b-warmup.log", [log_line(0, 0, 9000, 7000)])
        runs = timeline.run_logs(self.logs)
        self.assertEqual(sorted(runs), ["b", "baseline"])
        self.assertEqual(len(runs["b"]), 2)
        rows = dict(timeline.timeline(runs, 0.5, 5))
        self.assertEqual(rows["0-0.5 s"]["b"], (10.0, 10.0, 2))
        mean, p95, n = rows["1-1.5 s"]["b"]
        self.assertEqual((round(mean, 3), p95, n), (160.0, 300.0, 4))
        self.assertEqual(rows["after 5 s"]["b"], (40.0, 40.0, 2))
        self.assertIsNone(rows["2-2.5 s"]["b"])
        self.assertEqual(rows["1-1.5 s"]["baseline"], (30.0, 30.0, 1))

    def test_client_counts_apart_and_the_last_window_whole(self):
        self.write("b-2-1.log", [log_line(0, 0, 10, 100)])
        self.write("b-8-1.log", [log_line(0, 0, 30, 100)])
        runs = timeline.run_logs(self.logs)
        self.assertEqual(sorted(runs), ["b/2", "b/8"])
        # --until 1.2 with 1 s windows: the rest starts at 2 s, not at 1
        self.assertEqual([label for label, _ in timeline.timeline(runs, 1, 1.2)], ["0-1 s", "1-2 s", "after 2 s"])
        self.assertEqual([label for label, _ in timeline.timeline(runs, 0.25, 0.5)], ["0-0.25 s", "0.25-0.5 s", "after 0.5 s"])

    def test_printed_table(self):
        self.write("b-8-0.log", [log_line(0, 0, 10, 100), log_line(0, 1, 250, 101.1)])
        self.write("baseline-8-0.log", [log_line(0, 0, 12, 100)])
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            self.assertEqual(cli.main(["timeline", self.out, "--window", "1", "--until", "2"]), 0)
        lines = out.getvalue().splitlines()
        # the kernel alone first
        self.assertRegex(lines[1], r"^window\s+baseline\s+b$")
        self.assertRegex(lines[2], r"^0-1 s\s+12\.0 / 12\s+10\.0 / 10$")
        self.assertRegex(lines[3], r"^1-2 s\s+-\s+250\.0 / 250$")

    def test_only_the_measured_part(self):
        # results.json's measured_until cuts run 1 of b (pgbench ran on past
        # it while the server was sampled); a run it does not name is whole
        self.write("b-8-1.log", [log_line(0, 0, 10, 100), log_line(0, 1, 100, 102.5)])
        self.write("b-8-2.log", [log_line(0, 0, 10, 200), log_line(0, 1, 900, 202.5)])
        with open(os.path.join(self.out, "results.json"), "w") as f:
            json.dump({"results": [{"configuration": "b", "clients": 8,
                                    "runs": [{"run": 1, "measured_until": 102.0}, {"run": 2}]}]}, f)
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            self.assertEqual(cli.main(["timeline", self.out, "--window", "1", "--until", "2"]), 0)
        self.assertRegex(out.getvalue().splitlines()[-1], r"^after 2 s\s+900\.0 / 900$")
        runs = timeline.run_logs(self.logs, {("b", 8, 1): 102.0})
        self.assertEqual(sorted(len(rows) for rows in runs["b"]), [1, 2])

    def test_refusals(self):
        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            self.assertEqual(cli.main(["timeline", self.out]), 2)
            self.assertIn("holds no run's log", err.getvalue())
            shutil.rmtree(self.logs)
            self.assertEqual(cli.main(["timeline", self.out]), 2)
            self.assertIn("run numabench run --keep-logs", err.getvalue())
            self.assertEqual(cli.main(["timeline", self.out, "--window", "0"]), 2)
            self.assertIn("--window must be above 0", err.getvalue())


if __name__ == "__main__":
    support.main(sys.modules[__name__])

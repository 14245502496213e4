#!/usr/bin/python3
"""Tests of bench/numabench merge: sittings of one series joined, unlike ones
refused. Prints TAP (prove --exec /usr/bin/python3)."""

import contextlib
import io
import json
import os
import sys
import tempfile
import unittest

import support  # noqa: E402  (puts bench/ on sys.path)
from numabench import _cli as cli


def sitting(rounds, tps_a, tps_b, commit="abc", settings_b=None, complete=True):
    """A bursty result of configurations a and b, one run of each per round."""
    def runs(tps):
        return [{"run": r, "tps": t, "latency_avg_ms": 10.0, "p95_ms": 20.0, "p99_ms": 1000.0 / t,
                 "p50_ms": 5.0} for r, t in zip(rounds, tps)]
    return {"numabench": 1, "complete": complete, "workload": "bursty", "scale": 1, "duration_s": 20,
            "runs": len(rounds), "first_round": rounds[0], "clients": [8], "trim": False, "warmup_s": 3,
            "pgbench_args": None, "rate": None, "analytic_clients": None, "weights": None,
            "bursty": {"utilisation_percent": 60, "burst_ms": 20, "burst_rows": 1000, "rate": 60.0},
            "system": {"git_commit": commit, "kernel": "7.2", "frequency": "not pinned", "date": "d"},
            "configurations": [{"name": "a", "settings": {}}, {"name": "b", "settings": settings_b or {}}],
            "results": [{"configuration": "a", "clients": 8, "runs": runs(tps_a)},
                        {"configuration": "b", "clients": 8, "runs": runs(tps_b)}],
            "paired": []}


class Merge(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp()

    def write(self, name, doc):
        path = os.path.join(self.dir, name)
        with open(path, "w") as f:
            json.dump(doc, f)
        return path

    def merge(self, *paths, options=()):
        out = os.path.join(self.dir, "out")
        err = io.StringIO()
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
            status = cli.main(["merge", "--out", out] + list(options) + list(paths))
        result = None
        if status == 0:
            with open(os.path.join(out, "results.json")) as f:
                result = json.load(f)
        return status, result, err.getvalue()

    def test_two_sittings_are_one_series(self):
        one = self.write("1.json", sitting([1, 2], [100, 100], [50, 100]))
        two = self.write("2.json", sitting([3, 4], [100, 100], [200, 400]))
        status, doc, _ = self.merge(one, two)
        self.assertEqual(status, 0)
        self.assertEqual(doc["runs"], 4)
        self.assertEqual([r["run"] for r in doc["results"][1]["runs"]], [1, 2, 3, 4])
        p99 = next(p for p in doc["paired"] if p["metric"] == "p99_ms")
        # p99 = 1000 / tps: the ratios of all four rounds, in order
        self.assertEqual([round(r, 3) for r in p99["ratios"]], [2.0, 1.0, 0.5, 0.25])
        self.assertEqual(p99["median_ratio"], 0.75)
        self.assertEqual(len(doc["sittings"]), 2)

    def test_an_interrupted_sitting_gives_its_complete_rounds(self):
        one = self.write("1.json", sitting([1, 2], [100, 100], [100, 100]))
        cut = sitting([3, 4], [100, 100], [100, 100], complete=False)
        cut["results"][1]["runs"].pop()     # round 4 of b never ran
        two = self.write("2.json", cut)
        status, doc, _ = self.merge(one, two)
        self.assertEqual(status, 0)
        self.assertEqual([r["run"] for r in doc["results"][0]["runs"]], [1, 2, 3])
        self.assertEqual(doc["sittings"][1]["complete"], False)

    def test_the_same_round_twice_is_refused(self):
        one = self.write("1.json", sitting([1, 2], [100, 100], [100, 100]))
        two = self.write("2.json", sitting([2, 3], [100, 100], [100, 100]))
        status, _, err = self.merge(one, two)
        self.assertEqual(status, 2)
        self.assertIn("round 2 is in", err)
        self.assertIn("--first-round", err)

    def test_unlike_sittings_are_refused(self):
        one = self.write("1.json", sitting([1], [100], [100]))
        other_code = self.write("2.json", sitting([2], [100], [100], commit="def"))
        other_settings = self.write("3.json", sitting([2], [100], [100], settings_b={"x": "1"}))
        status, _, err = self.merge(one, other_code)
        self.assertEqual(status, 2)
        self.assertIn("system git_commit differs", err)
        status, _, err = self.merge(one, other_settings)
        self.assertEqual(status, 2)
        self.assertIn("configurations differs", err)
        status, _, err = self.merge(one)
        self.assertEqual(status, 2)
        self.assertIn("two or more", err)

    def test_restarted_and_not_are_refused(self):
        # a sitting from before --restart-each-round has no such key: it did not
        before = self.write("1.json", sitting([1], [100], [100]))
        restarted = sitting([2], [100], [100])
        restarted["restart_each_round"] = True
        restarted = self.write("2.json", restarted)
        not_restarted = sitting([3], [100], [100])
        not_restarted["restart_each_round"] = False
        not_restarted = self.write("3.json", not_restarted)
        status, _, err = self.merge(before, restarted)
        self.assertEqual(status, 2)
        self.assertIn("restarted its servers each round", err)
        status, _, err = self.merge(before, not_restarted)
        self.assertEqual(status, 0, err)

    def test_sampled_inside_and_after_are_refused(self):
        # a sitting from before 6 December 2026 has no such key: it sampled
        # its servers inside the measured runs
        before = self.write("1.json", sitting([1], [100], [100]))
        after = sitting([2], [100], [100])
        after["sampled_after_measured"] = True
        after = self.write("2.json", after)
        status, _, err = self.merge(before, after)
        self.assertEqual(status, 2)
        self.assertIn("sampled its servers inside the measured part", err)
        again = sitting([3], [100], [100])
        again["sampled_after_measured"] = True
        status, _, err = self.merge(after, self.write("3.json", again))
        self.assertEqual(status, 0, err)

    def test_across_commits_joins_and_names_them(self):
        one = self.write("1.json", sitting([1], [100], [100]))
        other_code = self.write("2.json", sitting([2], [100], [200], commit="def"))
        other_settings = self.write("3.json", sitting([2], [100], [100], commit="def", settings_b={"x": "1"}))
        status, doc, err = self.merge(one, other_code, options=["--across-commits"])
        self.assertEqual(status, 0, err)
        self.assertEqual(doc["runs"], 2)
        self.assertEqual(doc["system"]["git_commit"], "abc+def")
        self.assertEqual([s["git_commit"] for s in doc["sittings"]], ["abc", "def"])
        # only the commit may differ
        status, _, err = self.merge(one, other_settings, options=["--across-commits"])
        self.assertEqual(status, 2)
        self.assertIn("configurations differs", err)

    def test_first_round_must_be_positive(self):
        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            self.assertEqual(cli.main(["run", "--first-round", "0"]), 2)
        self.assertIn("--first-round", err.getvalue())


if __name__ == "__main__":
    support.main(sys.modules[__name__])

#!/usr/bin/python3
"""Tests of bench/numabench: runs on real servers: a smoke run, compare, two
roles. Prints TAP (prove --exec /usr/bin/python3)."""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

import support  # noqa: E402  (puts bench/ on sys.path)
from support import have_postgres
from numabench import _cli as cli
from numabench import _cluster as cluster
from numabench import _common as common
from numabench import _compare as compare
from numabench import _evidence as evidence
from numabench import _pgbench as pgbench
from numabench import _summary as summary
from numabench import _workloads as workloads


class WithServers(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="numabench-test-")
        os.chmod(cls.tmp, 0o755)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def test_analytic_plans_use_parallel_workers(self):
        workdir = tempfile.mkdtemp(dir=self.tmp)
        os.chmod(workdir, 0o777)
        c = cluster.Cluster("plans", {"shared_preload_libraries": "'numasched'"}, workdir, 54790, cluster.pg_dirs("pg_config")[0])
        try:
            c.initdb()
            c.start()
            workloads.load_data(c, "analytic", 1, workloads.stage_workloads(workdir))
            for script in ("analytic_q1.sql", "analytic_join.sql"):
                with open(os.path.join(common.WORKLOAD_DIR, script)) as f:
                    query = "\n".join(l for l in f.read().splitlines() if not l.startswith("--"))
                plan = c.psql("EXPLAIN (ANALYZE, COSTS OFF) " + query.rstrip().rstrip(";"))
                self.assertRegex(plan, r"Workers Launched: [1-9]", script)
                if script == "analytic_join.sql":
                    self.assertRegex(plan, r"Gather[^\n]*\n(.*\n)*.*Hash Join", script)
        finally:
            c.stop()

    def test_smoke_run_and_compare(self):
        out = os.path.join(self.tmp, "smoke")
        # pinned: the server on CPU 1 with its memory on node 0, pgbench on CPU 0
        pin = len(os.sched_getaffinity(0)) >= 2
        rc = cli.main(["run", "--pg-config", support.suite_pg_config(), "--warmup", "1",
                      "--pgbench-args", "-M prepared"]
                     + (["--server-numactl", "--physcpubind=1 --membind=0", "--pgbench-cpus", "0"] if pin else []) + [
                      "--config", "a=baseline", "--config", "b=numasched", "--runs", "2", "--restart-each-round",
                      "--duration", "2", "--scale", "1", "--trim", "--out", out, "--port", "54760", "--keep-logs"])
        self.assertEqual(rc, 0)
        with open(os.path.join(out, "results.json")) as f:
            doc = json.load(f)
        with open(os.path.join(out, "table.txt")) as f:
            table = f.read()
        self.assertEqual([c["name"] for c in doc["configurations"]], ["a", "b"])
        self.assertEqual(len(doc["results"]), 2)
        # --restart-each-round: each round ran on a server started for it
        self.assertTrue(doc["restart_each_round"])
        for x in doc["results"]:
            self.assertNotEqual(x["runs"][0]["server_started"], x["runs"][1]["server_started"], x["configuration"])
        for x in doc["results"]:
            self.assertEqual(len(x["runs"]), 2)
            for key in ("tps_mean", "tps_stddev", "tps_cv", "tps_mean_trimmed", "tps_cv_trimmed",
                        "latency_avg_ms_mean", "p95_ms_mean", "p99_ms_mean"):
                self.assertIsInstance(x["summary"][key], float, key)
            for r in x["runs"]:
                for key in ("tps", "latency_avg_ms", "p95_ms", "p99_ms", "failed", "dropped", "run"):
                    self.assertIn(key, r)
                self.assertGreater(r["tps"], 0)
                self.assertGreater(r["logged_transactions"], 0)
            self.assertIn("%.1f" % x["summary"]["tps_mean"], table)
            # --keep-logs: each run's whole per-transaction log; what it
            # counted is what was scheduled in its measured part, and the
            # server was sampled after that part, while pgbench ran on
            for r in x["runs"]:
                with open(os.path.join(out, "logs", "%s-%d-%d.log" % (x["configuration"], x["clients"], r["run"]))) as f:
                    starts = [t.start for t in pgbench.succeeded(pgbench.parse_log(f))]
                self.assertEqual(sum(1 for s in starts if s < r["measured_until"]), r["logged_transactions"])
                self.assertGreater(max(starts), r["measured_until"] + 0.5, "pgbench ran on past the measured part")
                # here connecting takes milliseconds: the whole 2 s are measured
                # and the sample begins well after them, with nothing measured
                # still running
                self.assertEqual(r["measured_s"], 2.0)
                self.assertGreater(r["sampled_after_s"], 1.0)
                self.assertEqual(r["measured_running_at_sample"], 0)
                self.assertAlmostEqual(r["tps"] * 2.0 / r["transactions"], 1.0, places=6)
        # the NUMA evidence of every run: the kernel's counters, where the
        # server's private memory is, and numasched's counters where it is loaded
        for x in doc["results"]:
            for r in x["runs"]:
                self.assertIsInstance(r["numa"]["numastat"]["0"]["numa_hit"], int)
                self.assertGreaterEqual(r["numa"]["private_memory"]["processes"], 3)
                self.assertGreater(r["numa"]["private_memory"]["private_pages"], 0)
                if x["configuration"] == "b":
                    self.assertGreaterEqual(r["numa"]["numasched_stats"]["placements"], 1)
                    # its worker's CPU time, read from /proc: it woke at least once
                    self.assertGreater(r["numa"]["scheduler_cpu_ms"], 0)
                    self.assertLess(r["numa"]["scheduler_cpu_ms"], 2000)
                else:
                    self.assertNotIn("numasched_stats", r["numa"])
                    self.assertNotIn("scheduler_cpu_ms", r["numa"])
            self.assertIsNotNone(x["summary"]["private_on_own_node_percent"])
        self.assertIn("numa: private pages on their process's node", table)
        # what the kernel let each of them use, read from /proc during every run
        for x in doc["results"]:
            for r in x["runs"]:
                if not pin:
                    continue
                self.assertEqual(r["pinning"]["postmaster"], {"cpus": "1", "mems": "0"}, x["configuration"])
                self.assertEqual(r["pinning"]["backend"], {"cpus": "1", "mems": "0"}, x["configuration"])
                self.assertEqual(r["pinning"]["pgbench"]["cpus"], "0", x["configuration"])
                self.assertGreaterEqual(r["cpu"]["steal_percent"], 0.0)
                if evidence.cpuinfo_mhz():
                    self.assertLessEqual(r["cpu"]["mhz_min"], r["cpu"]["mhz_max"])
        self.assertIn("  cpu: steal up to", table)
        self.assertTrue(doc["complete"])
        self.assertEqual(doc["warmup_s"], 1)
        self.assertEqual(doc["pgbench_args"], "-M prepared")
        for x in doc["results"]:
            if x["summary"]["tps_cv"] > summary.UNSTABLE_CV:
                self.assertIn("WARNING: %s with 2 clients is unstable" % x["configuration"], table)
        self.assertEqual(doc["paired"][0]["a"], "a")
        self.assertEqual(len(doc["paired"][0]["ratios"]), 2)
        for key in compare.OVERVIEW_KEYS:
            self.assertIn(key, doc["system"])
        self.assertIn(doc["system"]["frequency"], ("pinned", "not pinned"))
        self.assertTrue(os.path.exists(os.path.join(out, "plot.png")))
        self.assertEqual(cli.main(["compare", os.path.join(out, "results.json"), "--old", "a", "--new", "b"]), 0)
        self.assertEqual(cli.main(["compare", os.path.join(out, "results.json"),
                                  os.path.join(out, "results.json")]), 0)
        # unlike runs are refused
        doc["scale"] = 5
        other = os.path.join(self.tmp, "other.json")
        with open(other, "w") as f:
            json.dump(doc, f)
        self.assertEqual(cli.main(["compare", os.path.join(out, "results.json"), other]), 2)
        # and so is a result from before its servers were sampled after the runs
        doc["scale"] = 1
        self.assertTrue(doc.pop("sampled_after_measured"))
        with open(other, "w") as f:
            json.dump(doc, f)
        self.assertEqual(cli.main(["compare", os.path.join(out, "results.json"), other]), 2)
        # no server is left running
        left = subprocess.run(["pgrep", "-f", "numabench-"], capture_output=True, text=True).stdout
        self.assertEqual(left.strip(), "", "servers left running")


def run_in_tmp(test, args):
    """numabench run ARGS (with --warmup 0) into a fresh directory, which goes
    when the test ends; its results.json and table.txt."""
    tmp = tempfile.mkdtemp(prefix="numabench-test-")
    os.chmod(tmp, 0o755)
    test.addCleanup(shutil.rmtree, tmp, True)
    out = os.path.join(tmp, "out")
    test.assertEqual(cli.main(["run", "--pg-config", support.suite_pg_config(), "--warmup", "0"]
                              + args + ["--out", out]), 0)
    with open(os.path.join(out, "results.json")) as f:
        doc = json.load(f)
    with open(os.path.join(out, "table.txt")) as f:
        return doc, f.read()


@unittest.skipUnless(have_postgres(), "needs PostgreSQL")
class TwoRoles(unittest.TestCase):
    def test_two_roles_in_their_classes(self):
        """The OLTP role at a fixed rate beside the analytic role; with role
        settings, each role's processes run in its own CPU group."""
        doc, table = run_in_tmp(self, [
            "--workload", "two-roles", "--rate", "50", "--clients", "1",
            "--config", "shared=numasched,numasched.groups_per_node=2",
            "--config", "split=numasched,numasched.groups_per_node=2,"
            "role.oltp.numasched.cpu_groups=0,role.analytics.numasched.cpu_groups=1,"
            "role.analytics.numasched.spill=never",
            "--runs", "2", "--duration", "3", "--scale", "1", "--port", "54770"])
        for x in doc["results"]:
            for r in x["runs"]:
                self.assertGreater(r["analytic_tps"], 0)
                self.assertLessEqual(r["p50_ms"], r["p99_ms"])
                self.assertAlmostEqual(r["tps"], 50, delta=25)   # the OLTP role's fixed rate
                groups = {w["role"]: set() for w in r["numa"]["workloads"]}
                for w in r["numa"]["workloads"]:
                    groups[w["role"]].add(w["cpu_group"])
                self.assertIn("oltp", groups)
                self.assertIn("analytics", groups)
                if x["configuration"] == "split":
                    self.assertEqual(groups["oltp"], {0}, r["numa"]["workloads"])
                    self.assertEqual(groups["analytics"], {1}, r["numa"]["workloads"])
        self.assertEqual(sorted(p["metric"] for p in doc["paired"]), ["analytic_tps", "p50_ms", "p99_ms", "tps"])
        self.assertIn("OLTP role at 50 tps: p50", table)
        self.assertIn("median OLTP p99 latency ratio", table)
        self.assertIn("median analytic tps ratio", table)

    def test_saturating_beside_background(self):
        """At --rate 0 the OLTP role runs as fast as it can; a configuration
        with bench.analytic_clients=0 runs it alone, and the analytic role at
        background priority shows so in numasched_workloads (read from the
        kernel)."""
        doc, table = run_in_tmp(self, [
            "--workload", "two-roles", "--rate", "0", "--clients", "1",
            "--config", "alone=baseline,bench.analytic_clients=0",
            "--config", "background=numasched,role.analytics.numasched.cpu_priority=background",
            "--runs", "2", "--duration", "2", "--scale", "1", "--port", "54790"])
        runs = {x["configuration"]: x["runs"] for x in doc["results"]}
        for r in runs["alone"]:
            self.assertEqual(r["analytic_tps"], 0)
            self.assertGreater(r["tps"], 0)
        for r in runs["background"]:
            self.assertGreater(r["analytic_tps"], 0)
            priorities = {}
            for w in r["numa"]["workloads"]:
                priorities.setdefault(w["role"], set()).add(w["cpu_priority"])
            # a parallel worker may still wait for the kernel's limit on
            # autogroup changes: the analytic role's leader is background
            self.assertIn("background", priorities.get("analytics", set()), r["numa"]["workloads"])
            self.assertEqual(priorities.get("oltp"), {"normal"}, r["numa"]["workloads"])
        # nothing to compare the analytic role with when it did not run
        self.assertEqual(sorted(p["metric"] for p in doc["paired"]), ["p50_ms", "p99_ms", "tps"])
        self.assertIn("OLTP role as fast as it can", table)


@unittest.skipUnless(have_postgres(), "needs PostgreSQL")
class Bursty(unittest.TestCase):
    def test_bursty_at_its_utilisation(self):
        """Open loop: queries sized for --burst-ms, at the rate that keeps
        --utilisation of the server's CPUs busy, compared on p99, p50, tps."""
        doc, table = run_in_tmp(self, [
            "--workload", "bursty", "--utilisation", "30", "--burst-ms", "10", "--clients", "4",
            "--config", "baseline", "--config", "numasched",
            "--runs", "2", "--duration", "3", "--port", "54780"])
        b = doc["bursty"]
        cpus = len(os.sched_getaffinity(0))
        self.assertAlmostEqual(b["rate"], 0.30 * cpus * 1000 / 10, delta=0.01)
        self.assertGreater(b["burst_rows"], 1000)
        for x in doc["results"]:
            for r in x["runs"]:
                # an open loop runs at its rate (Poisson arrivals: within half)
                self.assertAlmostEqual(r["tps"], b["rate"], delta=b["rate"] / 2)
                self.assertLessEqual(r["p50_ms"], r["p99_ms"])
                # all CPUs' busy time (/proc/stat) over the transactions: at
                # least a good part of the query each was sized for
                self.assertGreater(r["cpu_ms_per_txn"], 0.3 * 10, x["configuration"])
        self.assertEqual(sorted(p["metric"] for p in doc["paired"]), ["cpu_ms_per_txn", "p50_ms", "p99_ms", "tps"])
        self.assertIn("ms of CPU a transaction", table)
        self.assertIn("median CPU time a transaction (all CPUs) ratio", table)
        # one round's configurations got the same arrivals (pgbench's
        # --random-seed): their transactions differ by those still running
        # at the end at most
        for i in range(2):
            counts = [x["runs"][i]["transactions"] for x in doc["results"]]
            self.assertLessEqual(max(counts) - min(counts), 4, counts)
        self.assertIn("bursty at %.1f queries/s (30%% of the CPUs): p50" % b["rate"], table)
        self.assertIn("median p99 latency ratio", table)

    def test_bad_utilisation_is_refused(self):
        for bad in (["--utilisation", "0"], ["--utilisation", "101"], ["--burst-ms", "0"]):
            self.assertEqual(cli.main(["run", "--workload", "bursty"] + bad), 2, bad)

    def test_rate(self):
        self.assertAlmostEqual(workloads.bursty_rate(60, 20, 2), 60.0)


# ------------------------------------------------------------ tune, show, reset


if __name__ == "__main__":
    support.main(sys.modules[__name__])
